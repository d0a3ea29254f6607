package app

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/kobana/kadu/core/api"
)

// TestOpenAPIDocumentServed: the served app answers GET
// /api/v1/openapi.json without a token, with the document of the routes it
// serves, while the API's routes still need one.
func TestOpenAPIDocumentServed(t *testing.T) {
	srv := startServerWith(t, false, nil)
	status, body, h := edgeCall(t, srv, "GET", api.DocumentPath, "", nil, "")
	if status != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), "application/json") {
		t.Fatalf("GET %s: %d %q: %.300s", api.DocumentPath, status, h.Get("Content-Type"), body)
	}
	var doc struct {
		OpenAPI string                    `json:"openapi"`
		Paths   map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal([]byte(body), &doc); err != nil || doc.OpenAPI != "3.1.0" || doc.Paths["/api/v1/tasks/{id}/run"]["post"] == nil {
		t.Errorf("document: openapi %q, %d paths, err %v", doc.OpenAPI, len(doc.Paths), err)
	}
	if status, _, _ := edgeCall(t, srv, "GET", "/api/v1/tasks", "", nil, ""); status != http.StatusUnauthorized {
		t.Errorf("GET /api/v1/tasks without a token: %d, want 401", status)
	}
}
