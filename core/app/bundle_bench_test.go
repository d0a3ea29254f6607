package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/kobana/kadu/core/config"
	"github.com/kobana/kadu/core/plugin/bundleconf"
)

// BenchmarkToolCallExecutionsGet measures kadu_executions_get end to end:
// an era-2026 tools/call over loopback HTTP with a real access token,
// through the protocol engine, the executions bundle (a Go guest) and its
// api() round trip to GET /api/v1/executions/{id} on the database, for an
// execution that ran to completion. Clients run in parallel
// (-cpu × SetParallelism goroutines, 16 on 2 cores, like wrk -c16); req/s is
// what the server sustained, load generator included on the same cores.
//
// Each database runs with the executions bundle's pool_size as shipped (4)
// and at 16, the clients' concurrency: the calls of one organisation beyond
// its pool each instantiate a fresh Go guest and close it afterwards.
//
//	go test -run '^$' -bench ToolCallExecutionsGet -benchtime 10s ./core/app
func BenchmarkToolCallExecutionsGet(b *testing.B) {
	for _, driver := range []string{config.DriverSQLite, config.DriverPostgres} {
		for _, pool := range []int{bundleconf.DefaultPoolSize, 16} {
			b.Run(fmt.Sprintf("%s/pool_size=%d", driver, pool), func(b *testing.B) {
				benchExecutionsGet(b, driver, pool)
			})
		}
	}
}

// benchExecutionsGet is one case of BenchmarkToolCallExecutionsGet.
func benchExecutionsGet(b *testing.B, driver string, pool int) {
	srv := serveApp(b, func(c *config.Config) {
		useDriver(b, c, driver)
		useFirstPartyBundles(b, c)
		unlimitedRequests(c)
		c.Plugins.Watch = false
		e := c.Plugins.Bundles["executions"]
		e.PoolSize = pool
		c.Plugins.Bundles["executions"] = e
	}, Options{Version: "bench", Logger: slog.New(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	token, err := MintDevToken(srv.cfg, TokenOptions{OrgID: "org_bench_" + driver})
	if err != nil {
		b.Fatal(err)
	}
	id := succeededExecution(b, restClient{t: b, base: srv.baseURL, token: token})
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"kadu_executions_get","arguments":{"id":"` + id + `"},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	const parallelism = 8
	client := loopbackClient(2 * parallelism)
	call := func() ([]byte, error) {
		req, _ := http.NewRequest(http.MethodPost, srv.cfg.MCPURL(), strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", "kadu_executions_get")
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		if err == nil && resp.StatusCode != http.StatusOK {
			err = &httpStatusError{status: resp.StatusCode, body: raw}
		}
		return raw, err
	}

	// One call checked in full: the execution comes back, as data.
	raw, err := call()
	if err != nil {
		b.Fatal(err)
	}
	var res struct {
		Result struct {
			IsError           bool           `json:"isError"`
			StructuredContent map[string]any `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(raw, &res); err != nil || res.Result.IsError || res.Result.StructuredContent["id"] != id ||
		res.Result.StructuredContent["status"] != "succeeded" {
		b.Fatalf("kadu_executions_get: %s", raw)
	}
	b.SetBytes(int64(len(raw)))

	b.SetParallelism(parallelism)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			raw, err := call()
			if err != nil {
				b.Error(err)
				return
			}
			// A tool error or a JSON-RPC error is a 200 too.
			if bytes.Contains(raw, []byte(`"isError":true`)) || !bytes.Contains(raw, []byte(`"result"`)) {
				b.Errorf("kadu_executions_get: %s", raw)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

// succeededExecution runs the example task "Resumo de extrato" through
// the REST API and returns the id of its execution once it has succeeded.
func succeededExecution(tb testing.TB, c restClient) string {
	tb.Helper()
	task, example := c.findTask("Resumo de extrato")
	body, err := json.Marshal(map[string]any{"input": example})
	if err != nil {
		tb.Fatal(err)
	}
	status, _, exe := c.do(http.MethodPost, "/tasks/"+task+"/run", string(body))
	if status != http.StatusAccepted {
		tb.Fatalf("POST /tasks/%s/run: %d %v", task, status, exe)
	}
	id := exe["id"].(string)
	if done := c.waitExecution(id); done["status"] != "succeeded" {
		tb.Fatalf("execution %s ended %v: %v", id, done["status"], done["failure"])
	}
	return id
}

type httpStatusError struct {
	status int
	body   []byte
}

func (e *httpStatusError) Error() string {
	return "status " + http.StatusText(e.status) + ": " + string(e.body)
}
