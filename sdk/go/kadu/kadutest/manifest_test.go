package kadutest_test

import (
	"strings"
	"testing"

	"github.com/kobana/kadu/sdk/go/kadu/kadutest"
)

func TestManifestCheck(t *testing.T) {
	const tool = `{"name":"x_get","inputSchema":{"type":"object"},` +
		`"annotations":{"readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false},` +
		`"access":{"min_role":"viewer","scope":"read"}}`
	manifest := func(tools string, extra string) string {
		return `{"abi":"kadu/v1","name":"b","version":"1.0.0","tools":[` + tools + `],"routes":["GET /api/v1/x/{id}"]` + extra + `}`
	}
	tests := []struct {
		name    string
		raw     string
		wantErr string // substring; "" for none
	}{
		{name: "valid", raw: manifest(tool, "")},
		{name: "other abi", raw: strings.Replace(manifest(tool, ""), "kadu/v1", "kadu/v2", 1), wantErr: `abi "kadu/v2"`},
		{name: "bundle name", raw: strings.Replace(manifest(tool, ""), `"name":"b"`, `"name":"B"`, 1), wantErr: `name "B"`},
		{name: "version", raw: strings.Replace(manifest(tool, ""), `"1.0.0"`, `"1.0"`, 1), wantErr: `version "1.0"`},
		{name: "tool twice", raw: manifest(tool+","+tool, ""), wantErr: "declared twice"},
		{name: "schema that does not compile", raw: manifest(strings.Replace(tool, `{"type":"object"}`, `{"type":"object","minLength":"x"}`, 1), ""), wantErr: "inputSchema"},
		{name: "schema of a string", raw: manifest(strings.Replace(tool, `{"type":"object"}`, `{"type":"string"}`, 1), ""), wantErr: `want "type": "object"`},
		{name: "hint missing", raw: manifest(strings.Replace(tool, `"idempotentHint":true,`, ``, 1), ""), wantErr: "want readOnlyHint, destructiveHint and idempotentHint"},
		{name: "open world", raw: manifest(strings.Replace(tool, `"openWorldHint":false`, `"openWorldHint":true`, 1), ""), wantErr: "openWorldHint: must be false"},
		{name: "read-only and destructive", raw: manifest(strings.Replace(tool, `"destructiveHint":false`, `"destructiveHint":true`, 1), ""), wantErr: "both true"},
		{name: "scope with prefix", raw: manifest(strings.Replace(tool, `"scope":"read"`, `"scope":"kadu.read"`, 1), ""), wantErr: `access.scope "kadu.read"`},
		{name: "no access", raw: manifest(strings.Replace(tool, `,"access":{"min_role":"viewer","scope":"read"}`, ``, 1), ""), wantErr: "access: required"},
		{name: "bad route", raw: strings.Replace(manifest(tool, ""), `GET /api/v1/x/{id}`, `GET /api/../x`, 1), wantErr: "routes[0]"},
		{name: "template of level 2", raw: manifest(tool, `,"resourceTemplates":[{"uriTemplate":"x://a/{+p}","name":"a","access":{"min_role":"viewer","scope":"read"}}]`), wantErr: "uriTemplate"},
		{name: "route twice", raw: strings.Replace(manifest(tool, ""), `"GET /api/v1/x/{id}"`, `"GET /api/v1/x/{id}","GET /api/v1/x/{id}"`, 1), wantErr: "listed twice"},
		{name: "relative resource", raw: manifest(tool, `,"resources":[{"uri":"usage","name":"u","access":{"min_role":"viewer","scope":"read"}}]`), wantErr: `uri "usage": want an absolute URI`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := kadutest.ParseManifest([]byte(tt.raw))
			if err != nil {
				t.Fatal(err)
			}
			err = kadutest.CheckManifest(m)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("CheckManifest() = %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("CheckManifest() = %v; want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestCheckUnique(t *testing.T) {
	a := &kadutest.Manifest{Name: "a", Tools: []kadutest.ManifestTool{{Name: "t1"}}, Prompts: []kadutest.ManifestPrompt{{Name: "p"}}}
	b := &kadutest.Manifest{Name: "b", Tools: []kadutest.ManifestTool{{Name: "t2"}}, Prompts: []kadutest.ManifestPrompt{{Name: "p"}}}
	err := kadutest.CheckUnique(a, b)
	if err == nil || !strings.Contains(err.Error(), `prompt "p" is declared by a and b`) {
		t.Errorf("CheckUnique() = %v; want the prompt clash", err)
	}
	if err := kadutest.CheckUnique(a); err != nil {
		t.Errorf("CheckUnique(one) = %v", err)
	}
}
