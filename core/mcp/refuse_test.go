package mcp

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestRefuseIsRung2sAnswer: what core/app's edge writes for a refused
// request to the endpoint is byte for byte what rung 2 writes.
func TestRefuseIsRung2sAnswer(t *testing.T) {
	e := newTestEngine(t, nil)
	req := func() *http.Request {
		r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		r.Host = "attacker.example:8080"
		r.Header.Set("Content-Type", "application/json")
		return r
	}
	viaLadder, viaRefuse := httptest.NewRecorder(), httptest.NewRecorder()
	e.ServeHTTP(viaLadder, req())
	e.Refuse(viaRefuse, req())
	if viaLadder.Code != http.StatusForbidden || viaRefuse.Code != viaLadder.Code || viaRefuse.Body.String() != viaLadder.Body.String() {
		t.Fatalf("Refuse = %d %q; rung 2 = %d %q", viaRefuse.Code, viaRefuse.Body, viaLadder.Code, viaLadder.Body)
	}
	for _, h := range []string{"Content-Type", "Cache-Control", "Content-Length"} {
		if viaRefuse.Header().Get(h) != viaLadder.Header().Get(h) {
			t.Errorf("%s: Refuse %q, rung 2 %q", h, viaRefuse.Header().Get(h), viaLadder.Header().Get(h))
		}
	}
	if viaRefuse.Header().Get("X-Request-Id") == "" {
		t.Error("Refuse sets no X-Request-Id")
	}
}
