package app

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kobana/kadu/core/config"
	"github.com/kobana/kadu/core/store/pgtest"
)

// useDriver points c at a fresh database of driver: SQLite in the data
// dir (the default), or a throwaway PostgreSQL cluster for the test.
func useDriver(tb testing.TB, c *config.Config, driver string) {
	tb.Helper()
	if driver != config.DriverPostgres {
		return
	}
	cluster := pgtest.Shared(tb)
	c.Store.Driver, c.Store.DSN = config.DriverPostgres, config.DSN(cluster.NewDatabase(tb))
	c.API.SigningKey = "0123456789abcdef0123456789abcdef-test" // replicas share it
	// Local blobs and the embedded issuer: replicas in one test process
	// share the data dir, so the single-node rules hold.
	c.SingleNode = true
}

// restClient calls /api/v1 of a test server with one token.
type restClient struct {
	t     testing.TB
	base  string
	token string
}

func (c restClient) do(method, path, body string, headers ...string) (int, http.Header, map[string]any) {
	c.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, c.base+"/api/v1"+path, rd)
	req.Header.Set("Authorization", "Bearer "+c.token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	raw, _ := io.ReadAll(resp.Body)
	if len(raw) > 0 && json.Unmarshal(raw, &out) != nil {
		c.t.Fatalf("%s %s: body is not a JSON object: %s", method, path, raw)
	}
	return resp.StatusCode, resp.Header, out
}

// waitExecution polls until the execution leaves queued/running.
func (c restClient) waitExecution(id string) map[string]any {
	c.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		status, _, e := c.do("GET", "/executions/"+id, "")
		if status != 200 {
			c.t.Fatalf("GET execution: %d %v", status, e)
		}
		if s := e["status"]; s != "queued" && s != "running" {
			return e
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("execution %s still %v", id, e["status"])
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// findTask returns the example task named name and the first example of
// its input schema.
func (c restClient) findTask(name string) (id string, example any) {
	c.t.Helper()
	status, _, list := c.do("GET", "/tasks?limit=100", "")
	if status != 200 {
		c.t.Fatalf("GET /tasks: %d %v", status, list)
	}
	for _, raw := range list["data"].([]any) {
		task := raw.(map[string]any)
		if task["name"] == name {
			schema, _ := task["input_schema"].(map[string]any)
			examples, _ := schema["examples"].([]any)
			if len(examples) == 0 {
				c.t.Fatalf("example task %q has no input examples", name)
			}
			return task["id"].(string), examples[0]
		}
	}
	c.t.Fatalf("no example task %q in %v", name, list["data"])
	return "", nil
}

// TestAPIEndToEnd runs the embedded product as a new user would: the
// organisation is provisioned on first sight with example tasks, whose
// examples run to completion through the real queue and the built-in
// runner, on SQLite and on PostgreSQL.
func TestAPIEndToEnd(t *testing.T) {
	for _, driver := range []string{config.DriverSQLite, config.DriverPostgres} {
		t.Run(driver, func(t *testing.T) {
			srv := startServerWith(t, false, func(c *config.Config) { useDriver(t, c, driver) })
			token, err := MintDevToken(srv.cfg, TokenOptions{OrgID: "org_new_" + driver})
			if err != nil {
				t.Fatal(err)
			}
			c := restClient{t: t, base: srv.baseURL, token: token}

			// Run an example as given, twice with one idempotency key.
			id, example := c.findTask("Resumo de extrato")
			body, _ := json.Marshal(map[string]any{"input": example, "idempotency_key": "first-run"})
			status, h, exe := c.do("POST", "/tasks/"+id+"/run", string(body))
			if status != 202 || !strings.HasSuffix(h.Get("Location"), "/api/v1/executions/"+fmt.Sprint(exe["id"])) {
				t.Fatalf("run: %d %v Location %q", status, exe, h.Get("Location"))
			}
			status, h, again := c.do("POST", "/tasks/"+id+"/run", string(body))
			if status != 202 || again["id"] != exe["id"] || h.Get("Idempotent-Replayed") != "true" {
				t.Fatalf("replay: %d %v replayed=%q; want the same execution", status, again["id"], h.Get("Idempotent-Replayed"))
			}
			done := c.waitExecution(exe["id"].(string))
			if done["status"] != "succeeded" {
				t.Fatalf("execution ended %v: %v", done["status"], done["failure"])
			}
			output, _ := done["output"].(map[string]any)
			cost, _ := done["cost"].(map[string]any)
			if output["summary"] == "" || cost["amount_cents"].(float64) <= 0 || cost["currency"] != "BRL" {
				t.Fatalf("output %v, cost %v", output, cost)
			}
			_, _, steps := c.do("GET", "/executions/"+exe["id"].(string)+"/steps", "")
			if n := len(steps["data"].([]any)); n == 0 {
				t.Fatal("no steps recorded")
			}
			_, _, usage := c.do("GET", "/usage", "")
			if fmt.Sprint(usage) == "" || !strings.Contains(fmt.Sprint(usage), fmt.Sprint(cost["amount_cents"])) {
				t.Errorf("usage %v does not show the execution's cost %v", usage, cost["amount_cents"])
			}

			// An example with an approval pause, answered through continue.
			id, example = c.findTask("Fechamento do mês com aprovação")
			body, _ = json.Marshal(map[string]any{"input": example})
			status, _, exe = c.do("POST", "/tasks/"+id+"/run", string(body))
			if status != 202 {
				t.Fatalf("run: %d %v", status, exe)
			}
			// It asks for the period, then for approval before writing.
			answers := map[string]string{"question": `{"answer":{"from":"2026-03-01","to":"2026-03-31"}}`, "approval": `{"answer":{"approved":true}}`}
			var kinds []string
			done = c.waitExecution(exe["id"].(string))
			for done["status"] == "waiting_input" && len(kinds) < 5 {
				pending, _ := done["pending_input"].(map[string]any)
				kind, _ := pending["kind"].(string)
				kinds = append(kinds, kind)
				status, _, cont := c.do("POST", "/executions/"+exe["id"].(string)+"/continue", answers[kind])
				if status != 202 {
					t.Fatalf("continue (%s): %d %v", kind, status, cont)
				}
				done = c.waitExecution(exe["id"].(string))
			}
			if done["status"] != "succeeded" || strings.Join(kinds, ",") != "question,approval" {
				t.Fatalf("closing: %v after pauses %v (failure %v)", done["status"], kinds, done["failure"])
			}
			if files, _ := done["output"].(map[string]any)["file_ids"].([]any); len(files) == 0 {
				t.Errorf("closing wrote no output file: %v", done["output"])
			}
		})
	}
}

// BenchmarkRunToSucceeded measures, over real HTTP, the latency from
// POST /tasks/{id}/run to the execution read back as succeeded (a
// three-step playbook on the built-in runner), on both databases. Polling
// every 2 ms bounds its resolution.
//
//	go test -run '^$' -bench RunToSucceeded -benchtime 30x ./core/app
func BenchmarkRunToSucceeded(b *testing.B) {
	for _, driver := range []string{config.DriverSQLite, config.DriverPostgres} {
		b.Run(driver, func(b *testing.B) {
			srv := startServerWith(b, false, func(c *config.Config) {
				useDriver(b, c, driver)
				c.Plans["developer"] = config.Plan{ConcurrentExecutions: 100, ExecutionsPerMonth: 1 << 30, MaxFileSizeBytes: 1 << 20,
					Retention: time.Hour, RequestsPerMinute: 1 << 20, CostCapCents: 1 << 40, MaxCostPerExecutionCents: 1 << 20}
			})
			token, err := MintDevToken(srv.cfg, TokenOptions{})
			if err != nil {
				b.Fatal(err)
			}
			c := restClient{t: b, base: srv.baseURL, token: token}
			id, example := c.findTask("Resumo de extrato")
			body, _ := json.Marshal(map[string]any{"input": example})
			b.ResetTimer()
			for b.Loop() {
				// Launches 150 ms apart, as people launch: River skips insert
				// notifications closer than 100 ms, leaving those to the poll.
				b.StopTimer()
				time.Sleep(150 * time.Millisecond)
				b.StartTimer()
				status, _, exe := c.do("POST", "/tasks/"+id+"/run", string(body))
				if status != 202 {
					b.Fatalf("run: %d %v", status, exe)
				}
				for {
					_, _, e := c.do("GET", "/executions/"+exe["id"].(string), "")
					if e["status"] == "succeeded" {
						break
					}
					if e["status"] == "failed" {
						b.Fatalf("failed: %v", e["failure"])
					}
					time.Sleep(2 * time.Millisecond)
				}
			}
		})
	}
}
