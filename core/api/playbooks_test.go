package api

import (
	"net/http"
	"strings"
	"testing"

	"github.com/kobana/kadu/core/agent"
	"github.com/kobana/kadu/core/store"
)

func TestPlaybooks(t *testing.T) {
	forEachBackend(t, map[string]func(*testing.T, *store.DB){
		"Reference": testPlaybooksReference,
	})
}

// testPlaybooksReference: any reader, a viewer included, gets the built-in
// runner's reference with its cost table; the route only reads.
func testPlaybooksReference(t *testing.T, db *store.DB) {
	e := newEnv(t, db, nil)
	org := newOrg()
	body := must(t, e.do(e.token(viewer(org)), http.MethodGet, "/playbooks", nil), http.StatusOK)
	if body["runner"] != "builtin" || body["media_type"] != "text/markdown" {
		t.Errorf("GET /playbooks = runner %v, media_type %v; want builtin, text/markdown", body["runner"], body["media_type"])
	}
	ref, _ := body["reference"].(string)
	if ref != agent.PlaybooksReference() || !strings.Contains(ref, "| `parse_statement` | 5 |") {
		t.Errorf("GET /playbooks reference is not the runner's reference with its costs:\n%.300s", ref)
	}
	r := e.do(e.token(owner(org)), http.MethodPost, "/playbooks", map[string]any{})
	wantProblem(t, r, http.StatusMethodNotAllowed, "method_not_allowed", "")
	if got := r.header.Get("Allow"); got != "GET" {
		t.Errorf("POST /playbooks Allow = %q, want GET", got)
	}
}
