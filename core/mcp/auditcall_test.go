package mcp

import (
	"context"
	"net/http"
	"testing"

	"github.com/kobana/kadu/core/audit"
	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/store"
)

// callCatalog keeps the audit Call the engine put in the context of the
// last tool call.
type callCatalog struct {
	testCatalog
	got chan audit.Call
}

func (c *callCatalog) CallTool(ctx context.Context, p *auth.Principal, call *ToolCall) (*ToolResult, error) {
	ac, _ := audit.CallFrom(ctx)
	c.got <- ac
	return c.testCatalog.CallTool(ctx, p, call)
}

// TestAuditCall: what the audit trail records of an MCP request's surface
// (docs/audit.md#what-is-recorded) reaches the catalog with the call, in
// both eras.
func TestAuditCall(t *testing.T) {
	cat := &callCatalog{got: make(chan audit.Call, 1)}
	e := newTestEngine(t, cat)
	tests := []struct {
		name       string
		headers    []string
		body       string
		clientName string
	}{
		{"era 2026", h2026("tools/call", "echo"), env2026("tools/call", `{"name":"echo","arguments":{}}`), "test-client"},
		// The 2025 era says the client's name once, at initialize: a
		// stateless server does not have it on a tools/call.
		{"era 2025", []string{"MCP-Protocol-Version: 2025-06-18"}, req2025("tools/call", `{"name":"echo","arguments":{}}`), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := do(t, e, http.MethodPost, tt.headers, tt.body)
			if w.Code != http.StatusOK {
				t.Fatalf("status %d: %s", w.Code, w.Body)
			}
			var got audit.Call
			select {
			case got = <-cat.got:
			default:
				t.Fatal("the catalog was not called")
			}
			want := audit.Call{Surface: store.SurfaceMCP, ClientName: tt.clientName, Tool: "echo", RequestID: w.Header().Get("X-Request-Id")}
			if got != want || want.RequestID == "" {
				t.Errorf("audit call %+v, want %+v", got, want)
			}
		})
	}
}
