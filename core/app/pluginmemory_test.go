package app

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kobana/kadu/core/config"
	"github.com/kobana/kadu/core/plugin"
	"github.com/kobana/kadu/sdk/go/kadu/kadutest"
)

// memoryCall is one tool call every organisation of the memory test makes.
type memoryCall struct{ tool, args string }

// cFixtureCall is the C SDK fixture's echo: its instances are small
// (45 µs to instantiate), so 200 organisations cost little time.
var cFixtureCall = memoryCall{"echo", `{"value":"x"}`}

// firstPartyCalls reach each first-party bundle: Go guests of several MiB
// each, the instances that took a server to 5 GiB when only their number
// was bounded.
var firstPartyCalls = []memoryCall{
	{"kadu_tasks_list", `{}`}, {"kadu_executions_list", `{}`}, {"kadu_files_list", `{}`}, {"kadu_webhooks_list", `{}`},
}

// TestPluginMemoryBudgetOverHTTP calls, over HTTP, the C fixture bundle as
// 200 organisations and every first-party bundle as 40 of them, against a
// 256 MiB plugin memory budget. Unbounded (the pools keep 4 idle
// instances per organisation and bundle, up to 256 instances), the Go
// instances alone would hold gigabytes. The test asserts what an operator
// watches: every call answers, GET /admin/plugins never reports more
// memory than the budget, and the process's resident memory stays under
// its level after warm-up plus the budget plus a fixed allowance for the
// Go heap (instance bookkeeping, HTTP, SQLite).
func TestPluginMemoryBudgetOverHTTP(t *testing.T) {
	const (
		budgetMiB    = 256
		orgs         = 200
		firstPartyOf = 5 // every fifth organisation calls the first-party bundles too
		workers      = 4
		allowanceMiB = 160
	)
	fixture := kadutest.BuildScript(t, "../../sdk/c/fixture")
	srv := serveApp(t, func(c *config.Config) {
		useFirstPartyBundles(t, c)
		c.Plugins.Bundles["fixture"] = config.Bundle{Enabled: true, Path: fixture, SHA256: fileSHA256(t, fixture),
			Routes: []string{"GET /api/v1/tasks/{id}", "POST /api/v1/tasks/{id}/run", "GET /api/v1/usage"}}
		c.Plugins.MemoryBudgetMiB = budgetMiB
		c.Plugins.OrgSharePercent = 30
		c.Plugins.Watch = false
		unlimitedRequests(c)
	}, Options{Version: "test"})
	client := loopbackClient(workers)
	callAs := func(org string, calls []memoryCall) error {
		token, err := MintDevToken(srv.cfg, TokenOptions{OrgID: org})
		if err != nil {
			return err
		}
		for _, c := range calls {
			if err := toolCall(client, srv, token, c.tool, c.args); err != nil {
				return fmt.Errorf("%s as %s: %w", c.tool, org, err)
			}
		}
		return nil
	}
	// Warm-up: compiled code mapped, allocator and SQLite settled.
	all := append([]memoryCall{cFixtureCall}, firstPartyCalls...)
	if err := callAs("org_mem_warm", all); err != nil {
		t.Fatal(err)
	}
	base := residentBytes(t)
	start := time.Now()

	var (
		mu       sync.Mutex
		failures []error
		peakRSS  = base
		peakMem  plugin.MemoryStatus
	)
	sample := func() {
		_, body := adminDo(t, srv, http.MethodGet, "/admin/plugins")
		rss := residentBytes(t)
		mu.Lock()
		defer mu.Unlock()
		peakRSS = max(peakRSS, rss)
		if body.Memory.UsedBytes > peakMem.UsedBytes {
			peakMem = body.Memory
		}
		if body.Memory.UsedBytes > body.Memory.BudgetBytes || body.Memory.PeakBytes > body.Memory.BudgetBytes {
			failures = append(failures, fmt.Errorf("GET /admin/plugins reports %+v: over the budget", body.Memory))
		}
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				calls := []memoryCall{cFixtureCall}
				if i%firstPartyOf == 0 {
					calls = all
				}
				if err := callAs(fmt.Sprintf("org_mem_%03d", i), calls); err != nil {
					mu.Lock()
					failures = append(failures, err)
					mu.Unlock()
				}
				if i%10 == 0 {
					sample()
				}
			}
		}()
	}
	for i := range orgs {
		next <- i
	}
	close(next)
	wg.Wait()
	sample()
	for i, err := range failures {
		if i == 5 {
			t.Errorf("… and %d more", len(failures)-i)
			break
		}
		t.Error(err)
	}
	_, body := adminDo(t, srv, http.MethodGet, "/admin/plugins")
	mem := body.Memory
	t.Logf("%d organisations in %s", orgs, time.Since(start).Round(time.Millisecond))
	t.Logf("RSS %d MiB after warm-up, peak %d MiB (bound %d); plugin memory peak %d MiB of %d, %d instances, %d evictions, %d busy",
		base>>20, peakRSS>>20, (base>>20)+budgetMiB+allowanceMiB, mem.PeakBytes>>20, mem.BudgetBytes>>20, mem.Instances,
		mem.Evictions, mem.BusyRefusals)
	if mem.BudgetBytes != budgetMiB<<20 || mem.PeakBytes > mem.BudgetBytes {
		t.Errorf("plugin memory %+v: peak over the %d MiB budget", mem, budgetMiB)
	}
	if mem.Evictions == 0 {
		t.Errorf("no instance was evicted: the test did not fill the budget (%+v)", mem)
	}
	if mem.BusyRefusals != 0 {
		t.Errorf("%d calls were refused as busy with %d callers and idle instances to evict", mem.BusyRefusals, workers)
	}
	if raceEnabled {
		// `go tool task test` runs this test once more without -race.
		t.Logf("race detector on: resident memory not bounded (its shadow memory grows with the Go heap)")
	} else if peakRSS > base+(budgetMiB+allowanceMiB)<<20 {
		t.Errorf("resident memory peaked at %d MiB, over %d MiB after warm-up + %d MiB budget + %d MiB allowance",
			peakRSS>>20, base>>20, budgetMiB, allowanceMiB)
	}
}

// toolCall calls tool as the token's organisation and fails unless the
// answer is a result (a tool error result counts: the bundle answered).
func toolCall(client *http.Client, srv *testServer, token, tool, args string) error {
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args +
		`,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, srv.cfg.MCPURL(), strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", tool)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var out struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK || out.Result == nil {
		return fmt.Errorf("HTTP %d, error %s (%v)", resp.StatusCode, out.Error, err)
	}
	return nil
}

// residentBytes is the process's resident memory (VmRSS).
func residentBytes(t testing.TB) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status to read the resident memory from: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("VmRSS %q: %v", rest, err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmRSS in /proc/self/status")
	return 0
}
