package app

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/kobana/kadu/core/config"
)

// TestMetricsEndToEnd runs real traffic through the product — tool calls
// served by the first-party bundles (one destructive, confirmed in the
// chat), a resource read, REST calls, an execution run to its end, a
// webhook delivery, a refused token — then scrapes GET /metrics on the
// admin listener as Prometheus would and checks that the families an
// operator alerts on are there with their labels, and that nothing from a
// request (token, organisation, ids, body text) leaked into them.
func TestMetricsEndToEnd(t *testing.T) {
	fx := newToolsFixture(t, config.DriverSQLite)
	const org = "org_metrics_secret_acme"
	admin := fx.as(t, TokenOptions{OrgID: org, Role: "admin", Subject: "ana_metrics"})
	rcv := newHookReceiver(t)

	hook := admin.ok("kadu_webhooks_create", map[string]any{"url": rcv.url, "event_codes": []string{"execution.succeeded"}})
	hookID := hook["id"].(string)
	taskID, example := admin.rest.findTask("Resumo de extrato")
	exe := admin.ok("kadu_tasks_run", map[string]any{"id": taskID, "input": example})
	exeID := exe["id"].(string)
	if done := admin.rest.waitExecution(exeID); done["status"] != "succeeded" {
		t.Fatalf("the execution ended %v: %v", done["status"], done["failure"])
	}
	delivered := rcv.next(t)
	// A read the bundle serves through a resource template.
	uri := "kobana://kadu/executions/" + exeID
	if status, res := admin.rpc("resources/read", uri, fmt.Sprintf(`{"uri":%q}`, uri)); status != 200 || res["result"] == nil {
		t.Fatalf("resources/read %s: HTTP %d %v", uri, status, res)
	}
	// An unknown tool: its name must not become a label.
	const bogusTool = "kadu_bogus_tool_xyzzy"
	admin.rpc("tools/call", bogusTool, fmt.Sprintf(`{"name":%q,"arguments":{}}`, bogusTool))
	mustREST(t, admin.rest, "GET", "/executions/"+exeID, 200, "")
	// A path no route matches: counted under the catch-all template, never by its path.
	const strayPath = "/api/v1/no-such-route-qwerty/" + "x1"
	admin.rest.do("GET", strings.TrimPrefix(strayPath, "/api/v1"), "")
	// Refused tokens: garbage on MCP, a forged signature on REST.
	const badToken = "eyJhbGciOiJSUzI1NiJ9.bm90LWEtdG9rZW4.c2lnbmF0dXJl"
	mcpCall(t, fx.srv, badToken, "tools/list", "", "{}")
	forged := []byte(admin.token)
	i := strings.LastIndexByte(admin.token, '.') + 10
	forged[i] = map[bool]byte{true: 'B', false: 'A'}[forged[i] == 'A']
	(restClient{t: t, base: fx.srv.baseURL, token: string(forged)}).do("GET", "/tasks", "")

	families, text := scrapeMetrics(t, fx.srv)
	if dump := os.Getenv("KADU_METRICS_DUMP"); dump != "" {
		_ = os.WriteFile(dump, []byte(text), 0o600)
	}

	// The families, with the labels that say what an operator needs.
	want := []struct {
		family string
		labels map[string]string // a sample of the family must carry these
	}{
		{"kadu_mcp_requests_total", map[string]string{"era": "2026-07-28", "method": "tools/call", "name": "kadu_tasks_run", "outcome": "ok"}},
		{"kadu_mcp_requests_total", map[string]string{"method": "tools/call", "name": "kadu_webhooks_create", "outcome": "input_required"}},
		{"kadu_mcp_requests_total", map[string]string{"method": "tools/call", "name": "unknown", "outcome": "jsonrpc_invalid_params"}},
		{"kadu_mcp_requests_total", map[string]string{"method": "resources/read", "name": "execution", "outcome": "ok"}},
		{"kadu_mcp_requests_total", map[string]string{"outcome": "jsonrpc_unauthorized"}},
		{"kadu_mcp_request_duration_seconds", map[string]string{"method": "tools/call", "name": "kadu_tasks_run"}},
		{"kadu_confirmations_total", map[string]string{"event": "asked"}},
		{"kadu_confirmations_total", map[string]string{"event": "accepted"}},
		{"kadu_http_requests_total", map[string]string{"route": "/api/v1/executions/:id", "method": "GET", "status_class": "2xx"}},
		{"kadu_http_requests_total", map[string]string{"route": "/api/v1/tasks", "status_class": "4xx"}},
		{"kadu_http_request_duration_seconds", map[string]string{"route": "/mcp", "method": "POST"}},
		{"kadu_http_requests_total", map[string]string{"route": "/api/v1/*", "method": "GET", "status_class": "4xx"}},
		{"kadu_bundle_instances", map[string]string{"bundle": "tasks", "state": "idle"}},
		{"kadu_bundle_instances", map[string]string{"bundle": "tasks", "state": "busy"}},
		{"kadu_bundle_memory_bytes", map[string]string{"bundle": "tasks"}},
		{"kadu_bundle_memory_budget_bytes", nil},
		{"kadu_bundle_instantiation_duration_seconds", map[string]string{"bundle": "tasks", "outcome": "ok"}},
		{"kadu_bundle_call_duration_seconds", map[string]string{"bundle": "tasks", "op": "tools/call"}},
		{"kadu_bundle_api_calls_total", map[string]string{"route": "/api/v1/tasks/:id/run", "method": "POST", "status_class": "2xx"}},
		{"kadu_execution_transitions_total", map[string]string{"from": "queued", "to": "running"}},
		{"kadu_execution_transitions_total", map[string]string{"from": "running", "to": "succeeded"}},
		{"kadu_queue_job_wait_seconds", map[string]string{"queue": "default", "kind": "execute"}},
		{"kadu_queue_job_duration_seconds", map[string]string{"queue": "default", "outcome": "ok"}},
		{"kadu_queue_scrape_error", nil},
		{"kadu_webhook_attempts_total", map[string]string{"outcome": "success"}},
		{"kadu_webhook_deliveries_total", map[string]string{"outcome": "succeeded"}},
		{"kadu_webhook_delivery_latency_seconds", nil},
		{"kadu_auth_failures_total", map[string]string{"reason": "signature"}},
		{"kadu_auth_failures_total", map[string]string{"reason": "malformed"}},
		{"kadu_store_query_duration_seconds", map[string]string{"operation": "select executions"}},
		{"kadu_store_query_duration_seconds", map[string]string{"operation": "transaction"}},
		{"go_goroutines", nil},
		{"process_resident_memory_bytes", nil},
	}
	for _, w := range want {
		f, ok := families[w.family]
		if !ok {
			t.Errorf("no family %s in /metrics", w.family)
			continue
		}
		if !hasSample(f, w.labels) {
			t.Errorf("%s has no sample with labels %v; it has %s", w.family, w.labels, labelSets(f))
		}
	}
	if v := sampleValue(families["kadu_queue_scrape_error"], nil); v != 0 {
		t.Errorf("kadu_queue_scrape_error = %v: counting the queue's jobs failed (see the server's log)", v)
	}

	// Nothing from a request is a label value: no token, organisation,
	// subject, id or body text.
	for _, secret := range []string{admin.token, badToken, string(forged), strayPath, "no-such-route-qwerty", org, "ana_metrics", exeID, taskID, hookID, bogusTool,
		strings.TrimPrefix(exeID, "exe_"), rcv.url, string(delivered.body[:min(len(delivered.body), 40)]), "Resumo de extrato"} {
		if secret != "" && strings.Contains(text, secret) {
			t.Errorf("/metrics contains %q, which came from a request", secret)
		}
	}
	for name, f := range families {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if strings.Contains(l.GetValue(), "org_") || strings.Contains(l.GetValue(), "exe_") || strings.Contains(l.GetValue(), "tsk_") {
					t.Errorf("%s has label %s=%q, an id", name, l.GetName(), l.GetValue())
				}
			}
		}
	}
}

// scrapeMetrics GETs /metrics from the admin handler, checks its content
// type and parses the exposition as Prometheus does.
func scrapeMetrics(t *testing.T, srv *testServer) (map[string]*dto.MetricFamily, string) {
	t.Helper()
	adm := httptest.NewServer(srv.app.AdminHandler())
	defer adm.Close()
	res, err := http.Get(adm.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("GET /metrics: HTTP %d %s: %.500s", res.StatusCode, res.Header.Get("Content-Type"), body)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("/metrics is not the text exposition format: %v", err)
	}
	return families, string(body)
}

// hasSample reports whether a sample of f carries every label of want.
func hasSample(f *dto.MetricFamily, want map[string]string) bool {
	return slices.ContainsFunc(f.GetMetric(), func(m *dto.Metric) bool { return labelsMatch(m, want) })
}

func labelsMatch(m *dto.Metric, want map[string]string) bool {
	got := map[string]string{}
	for _, l := range m.GetLabel() {
		got[l.GetName()] = l.GetValue()
	}
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

func sampleValue(f *dto.MetricFamily, want map[string]string) float64 {
	for _, m := range f.GetMetric() {
		if labelsMatch(m, want) {
			switch {
			case m.Gauge != nil:
				return m.Gauge.GetValue()
			case m.Counter != nil:
				return m.Counter.GetValue()
			}
		}
	}
	return -1
}

func labelSets(f *dto.MetricFamily) string {
	var out []string
	for _, m := range f.GetMetric() {
		var ls []string
		for _, l := range m.GetLabel() {
			ls = append(ls, l.GetName()+"="+l.GetValue())
		}
		out = append(out, "{"+strings.Join(ls, ",")+"}")
	}
	return strings.Join(out, " ")
}
