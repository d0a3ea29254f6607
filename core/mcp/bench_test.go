package mcp

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// BenchmarkEngine measures the engine alone (the ladder, parsing, the
// method, encoding) with a trivial authenticator, per method and era.
//
//	go test -run '^$' -bench Engine -benchmem ./core/mcp
func BenchmarkEngine(b *testing.B) {
	e := newTestEngine(b, nil)
	cases := []struct {
		name    string
		headers map[string]string
		body    string
	}{
		{"tools/list 2026", map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}, env2026("tools/list", "")},
		{"tools/list 2025", map[string]string{"MCP-Protocol-Version": "2025-06-18"}, req2025("tools/list", "")},
		{"tools/call 2026", map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "echo"}, env2026("tools/call", `{"name":"echo","arguments":{"status":"failed","limit":10}}`)},
	}
	for _, c := range cases {
		b.Run(strings.ReplaceAll(c.name, "/", "_"), func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8080/mcp", strings.NewReader(c.body))
					r.Header.Set("Content-Type", "application/json")
					r.Header.Set("Authorization", "Bearer viewer:kadu.read")
					for k, v := range c.headers {
						r.Header.Set(k, v)
					}
					w := httptest.NewRecorder()
					e.ServeHTTP(w, r)
					if w.Code != http.StatusOK {
						b.Fatalf("%d %s", w.Code, w.Body)
					}
				}
			})
		})
	}
}
