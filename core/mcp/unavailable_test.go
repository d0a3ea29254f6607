package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"testing"

	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/origin"
)

// failingCatalog is testCatalog whose "faulty" tool fails with err.
type failingCatalog struct {
	testCatalog
	err error
}

func (c *failingCatalog) CallTool(ctx context.Context, p *auth.Principal, call *ToolCall) (*ToolResult, error) {
	if call.Tool.Name == "faulty" {
		return nil, c.err
	}
	return c.testCatalog.CallTool(ctx, p, call)
}

var errTestStoreFull = errors.New("database or disk is full")

// TestCatalogUnavailable covers the 503 when the catalog cannot
// answer now: a full or unreachable store (recognised by
// Options.StoreUnavailable) and a catalog's own 503 (a bundle pool that is
// busy) both answer -31503 with Retry-After in the header as well as in
// data; anything else stays the opaque -32603 on HTTP 200.
func TestCatalogUnavailable(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		status     int
		code       int64
		reason     string
		retryAfter string
	}{
		{"store full", fmt.Errorf("inserting approval: %w", errTestStoreFull), http.StatusServiceUnavailable, CodeUnavailable, "store_unavailable", "30"},
		{"pool busy", &Error{Code: CodeUnavailable, Message: "Service unavailable", Status: http.StatusServiceUnavailable,
			Data: map[string]any{"retry_after_seconds": 1, "reason": "overloaded"}}, http.StatusServiceUnavailable, CodeUnavailable, "overloaded", "1"},
		{"other fault", errors.New("guest trapped"), http.StatusOK, CodeInternalError, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			origins, err := origin.NewPolicy("https://mcp.example.com", true)
			if err != nil {
				t.Fatal(err)
			}
			e, err := New(Options{
				Catalog: &failingCatalog{err: tt.err}, Authenticator: testAuthn{}, Origins: origins,
				Logger:           slog.New(slog.NewTextHandler(io.Discard, nil)),
				StoreUnavailable: func(err error) bool { return errors.Is(err, errTestStoreFull) },
			})
			if err != nil {
				t.Fatal(err)
			}
			w := do(t, e, http.MethodPost, h2026("tools/call", "faulty"), env2026("tools/call", `{"name":"faulty","arguments":{}}`))
			out := decode(t, w)
			if w.Code != tt.status || out.Error == nil || out.Error.Code != tt.code {
				t.Fatalf("HTTP %d %s; want %d with error %d", w.Code, w.Body, tt.status, tt.code)
			}
			if got := w.Header().Get("Retry-After"); got != tt.retryAfter {
				t.Errorf("Retry-After = %q, want %q", got, tt.retryAfter)
			}
			var data struct {
				Reason     string `json:"reason"`
				RetryAfter int    `json:"retry_after_seconds"`
			}
			if tt.reason != "" {
				if err := json.Unmarshal(out.Error.Data, &data); err != nil || data.Reason != tt.reason || fmt.Sprint(data.RetryAfter) != tt.retryAfter {
					t.Errorf("data = %s, want reason %q and retry_after_seconds %s", out.Error.Data, tt.reason, tt.retryAfter)
				}
			} else if len(out.Error.Data) != 0 {
				t.Errorf("an internal error carries data %s; it must say nothing", out.Error.Data)
			}
		})
	}
}
