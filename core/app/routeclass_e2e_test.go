package app

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/kobana/kadu/core/config"
	"github.com/kobana/kadu/sdk/go/kadu/kadutest"
)

// TestRouteClassesOverMCP serves the test bundle "probe"
// (testdata/routeguest), granted a read, a write and two destructive
// routes, and calls each of its operations through /mcp over HTTP with
// each kind of route: the host, not the bundle, decides which may call
// which (sdk/ABI.md, Route classes). A refused call answers the bundle
// 403 route_not_granted and never reaches the API; an allowed one reaches
// it (200, or 404 not_found for the task id no organisation has).
func TestRouteClassesOverMCP(t *testing.T) {
	path := kadutest.BuildWasm(t, "testdata/routeguest")
	srv := startServerCatalog(t, false, nil, func(c *config.Config) {
		c.Plugins.Bundles = map[string]config.Bundle{"probe": {Enabled: true, Path: path, SHA256: fileSHA256(t, path),
			Routes: []string{"GET /api/v1/tasks", "PATCH /api/v1/tasks/{id}", "POST /api/v1/tasks/{id}/run", "DELETE /api/v1/tasks/{id}"}}}
		c.Plugins.CacheDir = sharedWasmCache(t)
	})
	admin := (&partnerServer{srv: srv}).caller(t, "admin", "kadu.admin")

	const refused = "403 route_not_granted"
	allowed := map[string]string{"read": "200 ", "write": "404 not_found", "run": "404 not_found", "delete": "404 not_found"}
	kinds := []string{"read", "write", "run", "delete"}
	// operations are how each operation of the bundle makes the call of a
	// kind, and which kinds route classes let it make.
	operations := []struct {
		name  string
		may   []string
		probe func(t *testing.T, kind string) string
	}{
		{"read-only tool", []string{"read"}, func(t *testing.T, kind string) string {
			return probeAnswer(t, admin.in(t).call("probe_read", map[string]string{"kind": kind}, ""))
		}},
		{"write tool", []string{"read", "write"}, func(t *testing.T, kind string) string {
			return probeAnswer(t, admin.in(t).call("probe_write", map[string]string{"kind": kind}, ""))
		}},
		{"destructive tool, confirmed", kinds, func(t *testing.T, kind string) string {
			return probeAnswer(t, admin.in(t).confirmed("probe_destroy", map[string]string{"kind": kind}))
		}},
		{"resources/read", []string{"read"}, func(t *testing.T, kind string) string {
			res := rpcResult(t, srv, admin.token, "resources/read", "probe://call/"+kind, fmt.Sprintf(`{"uri":"probe://call/%s"}`, kind))
			var r struct {
				Contents []struct {
					Text string `json:"text"`
				} `json:"contents"`
			}
			if remarshal(res, &r) != nil || len(r.Contents) != 1 {
				t.Fatalf("resources/read: %v", res)
			}
			return r.Contents[0].Text
		}},
		{"prompts/get", []string{"read"}, func(t *testing.T, kind string) string {
			res := rpcResult(t, srv, admin.token, "prompts/get", "probe_call", fmt.Sprintf(`{"name":"probe_call","arguments":{"kind":%q}}`, kind))
			var r struct {
				Messages []struct {
					Content struct {
						Text string `json:"text"`
					} `json:"content"`
				} `json:"messages"`
			}
			if remarshal(res, &r) != nil || len(r.Messages) != 1 {
				t.Fatalf("prompts/get: %v", res)
			}
			return r.Messages[0].Content.Text
		}},
		{"completion/complete", []string{"read"}, func(t *testing.T, kind string) string {
			res := rpcResult(t, srv, admin.token, "completion/complete", "",
				fmt.Sprintf(`{"ref":{"type":"ref/prompt","name":"probe_call"},"argument":{"name":"kind","value":%q}}`, kind))
			var r struct {
				Completion struct {
					Values []string `json:"values"`
				} `json:"completion"`
			}
			if remarshal(res, &r) != nil || len(r.Completion.Values) != 1 {
				t.Fatalf("completion/complete: %v", res)
			}
			return r.Completion.Values[0]
		}},
	}
	for _, op := range operations {
		for _, kind := range kinds {
			t.Run(op.name+"/"+kind, func(t *testing.T) {
				want := refused
				for _, k := range op.may {
					if k == kind {
						want = allowed[kind]
					}
				}
				if got := op.probe(t, kind); got != want {
					t.Errorf("the %s call answered the bundle %q; want %q", kind, got, want)
				}
			})
		}
	}
	// Each refusal is logged for the operator, with the route and no body.
	logs := srv.logs.String()
	for _, want := range []string{`"target":"probe_write"`, `"target":"probe://call/run"`, `"target":"probe_call"`,
		`"route":"/api/v1/tasks/tsk_0195f0a1b2c37d8e9f00112233445566/run"`, `"route_class":"destructive"`, `"allowed":"write"`} {
		if !strings.Contains(grepLines(logs, `bundle api call refused`), want) {
			t.Errorf("the refusals logged lack %s", want)
		}
	}
	if strings.Contains(grepLines(logs, `bundle api call refused`), `"description"`) {
		t.Error("a refusal logged the request body")
	}
}

// probeAnswer is the answer field of a probe tool's JSON text.
func probeAnswer(t *testing.T, r partnerResult) string {
	t.Helper()
	var o struct {
		Answer string `json:"answer"`
	}
	if r.IsError || json.Unmarshal([]byte(strings.SplitN(r.Text, "\n", 2)[0]), &o) != nil {
		t.Fatalf("tool result %v; want the probe's answer", r.raw)
	}
	return o.Answer
}

// rpcResult sends method from an era-2026 client and returns its result.
func rpcResult(t *testing.T, srv *testServer, token, method, name, params string) map[string]any {
	t.Helper()
	status, res := mcpCallAs(t, srv, token, "{}", method, name, params)
	result, _ := res["result"].(map[string]any)
	if status != 200 || result == nil {
		t.Fatalf("%s %s: HTTP %d, not a result: %v", method, params, status, res)
	}
	return result
}

func remarshal(from any, to any) error {
	b, err := json.Marshal(from)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, to)
}
