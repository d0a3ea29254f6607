package openapi

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kobana/kadu/core/api/routeclass"
)

var update = flag.Bool("update", false, "rewrite docs/reference/api.md from the route table")

const referencePath = "../../../docs/reference/api.md"

// TestReferenceUpToDate fails when docs/reference/api.md is not what the
// route table renders; -update rewrites it.
func TestReferenceUpToDate(t *testing.T) {
	want := Markdown()
	if *update {
		if err := os.MkdirAll(filepath.Dir(referencePath), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(referencePath, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(referencePath)
	if err != nil {
		t.Fatalf("%v; run go test ./core/api/openapi -run TestReferenceUpToDate -update", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("docs/reference/api.md differs from the route table; run go test ./core/api/openapi -run TestReferenceUpToDate -update")
	}
}

// TestDocumentWellFormed checks what the OpenAPI 3.1 document promises:
// every $ref resolves, every route the table names is a path with its
// operation, every name the table uses is a schema, and every schema
// compiles as JSON Schema 2020-12.
func TestDocumentWellFormed(t *testing.T) {
	raw := Document()
	if !bytes.Equal(raw, Document()) {
		t.Fatal("Document is not the same on every call")
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if doc["openapi"] != "3.1.0" {
		t.Errorf("openapi = %v", doc["openapi"])
	}
	for _, m := range regexp.MustCompile(`"\$ref": "#/([^"]+)"`).FindAllStringSubmatch(string(raw), -1) {
		var at any = doc
		for _, seg := range strings.Split(m[1], "/") {
			obj, _ := at.(map[string]any)
			at = obj[seg]
		}
		if at == nil {
			t.Errorf("$ref #/%s resolves to nothing", m[1])
		}
	}
	paths := doc["paths"].(map[string]any)
	ids := map[string]bool{}
	for _, r := range routeclass.Routes() {
		op, ok := paths[r.Path].(map[string]any)[strings.ToLower(r.Method)].(map[string]any)
		if !ok {
			t.Errorf("%s has no operation", r)
			continue
		}
		id := op["operationId"].(string)
		if ids[id] {
			t.Errorf("operationId %s twice", id)
		}
		ids[id] = true
		for _, q := range r.Query {
			if queryParams[q] == nil {
				t.Errorf("%s: query parameter %s has no schema in queryParams", r, q)
			}
		}
	}
	if _, err := NewValidator(); err != nil {
		t.Fatal(err)
	}
}

// TestValidatorCatchesDrift checks that the schemas are strict enough to
// notice a handler that drops, adds or retypes a member.
func TestValidatorCatchesDrift(t *testing.T) {
	v, err := NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	const deleted = `{"id":"tsk_0193a5c4e1f27c3a9b1d2e4f5a6b7c8d","deleted":true}`
	if err := v.Check("DELETE", "/api/v1/tasks/tsk_1", 200, []byte(deleted)); err != nil {
		t.Fatalf("a valid answer: %v", err)
	}
	for name, tc := range map[string]struct {
		method, path string
		status       int
		body         string
	}{
		"member missing":      {"DELETE", "/api/v1/tasks/x", 200, `{"id":"tsk_1"}`},
		"member added":        {"DELETE", "/api/v1/tasks/x", 200, `{"id":"tsk_1","deleted":true,"extra":1}`},
		"member retyped":      {"DELETE", "/api/v1/tasks/x", 200, `{"id":"tsk_1","deleted":"yes"}`},
		"undocumented status": {"DELETE", "/api/v1/tasks/x", 201, deleted},
		"success off route":   {"GET", "/api/v1/nothing", 200, `{}`},
		"error not an Error":  {"GET", "/api/v1/tasks", 404, `{"message":"not found"}`},
		"not JSON":            {"GET", "/api/v1/usage", 200, `<html>`},
	} {
		if err := v.Check(tc.method, tc.path, tc.status, []byte(tc.body)); err == nil {
			t.Errorf("%s: Check accepted %s", name, tc.body)
		}
	}
	problem := `{"status":404,"errors":[{"code":"not_found","title":"Not found","detail":"d","param":null,"hint":"h"}],"request_id":"req_1"}`
	if err := v.Check("GET", "/api/v1/nothing", 404, []byte(problem)); err != nil {
		t.Errorf("an error on an unknown path: %v", err)
	}
}
