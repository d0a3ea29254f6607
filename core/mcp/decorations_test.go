package mcp

import (
	"testing"
)

// TestDecorations checks, per method and era, the members docs/reference/mcp.md#result-decorations adds to
// era-2026 results and docs/reference/mcp.md#order-of-checks forbids in era-2025 ones.
func TestDecorations(t *testing.T) {
	e := newTestEngine(t, nil)
	methods := []struct {
		method, params, name string
		cacheable            bool
	}{
		{"server/discover", "", "", true},
		{"tools/list", "", "", true},
		{"tools/call", `{"name":"echo","arguments":{}}`, "echo", false},
		{"resources/list", "", "", true},
		{"resources/templates/list", "", "", true},
		{"resources/read", `{"uri":"kobana://kadu/guide"}`, "kobana://kadu/guide", true},
		{"prompts/list", "", "", true},
		{"prompts/get", `{"name":"run_task","arguments":{"task_id":"t"}}`, "run_task", false},
		{"completion/complete", `{"ref":{"type":"ref/prompt","name":"run_task"},"argument":{"name":"task_id","value":"tsk_00"}}`, "", false},
	}
	for _, m := range methods {
		t.Run(m.method+" 2026", func(t *testing.T) {
			w := do(t, e, "POST", h2026(m.method, m.name), env2026(m.method, m.params))
			res := decode(t, w).Result
			if res == nil {
				t.Fatalf("no result: %s", w.Body)
			}
			if res["resultType"] != "complete" {
				t.Errorf("resultType = %v", res["resultType"])
			}
			meta, _ := res["_meta"].(map[string]any)
			info, _ := meta[MetaServerInfo].(map[string]any)
			if info["name"] != "kadu" || info["title"] != "Kadu" || info["version"] != "1.0.0" {
				t.Errorf("_meta serverInfo = %v", meta)
			}
			_, hasTTL := res["ttlMs"]
			if hasTTL != m.cacheable || (m.cacheable && (res["ttlMs"] != 0.0 || res["cacheScope"] != "private")) {
				t.Errorf("ttlMs/cacheScope = %v/%v, cacheable %v", res["ttlMs"], res["cacheScope"], m.cacheable)
			}
		})
		if m.method == "server/discover" {
			continue
		}
		t.Run(m.method+" 2025", func(t *testing.T) {
			body := req2025(m.method, m.params)
			w := do(t, e, "POST", []string{"MCP-Protocol-Version: 2025-06-18"}, body)
			res := decode(t, w).Result
			if res == nil {
				t.Fatalf("no result: %s", w.Body)
			}
			for _, k := range []string{"resultType", "ttlMs", "cacheScope"} {
				if _, ok := res[k]; ok {
					t.Errorf("era-2025 result carries %s: %v", k, res[k])
				}
			}
			// A tool's own _meta passes through; the server's never appears.
			if meta, _ := res["_meta"].(map[string]any); meta[MetaServerInfo] != nil {
				t.Errorf("era-2025 result carries serverInfo: %v", meta)
			}
		})
	}
}
