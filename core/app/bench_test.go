package app

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kobana/kadu/core/config"
)

// BenchmarkToolsList measures the whole POST path of an era-2026
// tools/list on the wired server handler: Echo routing, the ladder,
// verification of a real ES256 access token from the embedded issuer,
// catalog filtering and the encoded response.
//
//	go test -run '^$' -bench ToolsList -benchmem ./core/app
func BenchmarkToolsList(b *testing.B) {
	cfg := config.Defaults()
	cfg.DataDir = b.TempDir()
	a, err := New(context.Background(), &cfg, Options{Version: "bench", Catalog: &e2eCatalog{}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	token, err := MintDevToken(&cfg, TokenOptions{Scopes: []string{"kadu.read"}})
	if err != nil {
		b.Fatal(err)
	}
	const body = `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"}}}}`
	h := a.Handler()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r := httptest.NewRequest(http.MethodPost, cfg.MCPURL(), strings.NewReader(body))
			r.Header.Set("Authorization", "Bearer "+token)
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set("Accept", "application/json, text/event-stream")
			r.Header.Set("MCP-Protocol-Version", "2026-07-28")
			r.Header.Set("Mcp-Method", "tools/list")
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != http.StatusOK {
				b.Fatalf("status %d: %s", w.Code, w.Body)
			}
		}
	})
}
