package kadu

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kobana/kadu/sdk/go/kadu/manifest"
)

func noop(*Call, struct{}) (string, error) { return "", nil }

func TestRegistrationRules(t *testing.T) {
	tool := func(mod func(*Tool[struct{}, string])) Feature {
		tl := Tool[struct{}, string]{Name: "x_do", InputSchema: noInput, Annotations: reads, Access: anyone, Handler: noop}
		mod(&tl)
		return tl
	}
	ok := Bundle{Name: "tasks", Version: "1.2.0", Routes: []string{"GET /api/v1/tasks/{id}"}}
	tests := []struct {
		name     string
		bundle   Bundle
		features []Feature
		wantErr  string // substring; "" for success
	}{
		{name: "a valid bundle", bundle: ok, features: []Feature{tool(func(*Tool[struct{}, string]) {})}},
		{name: "bundle name with a capital", bundle: Bundle{Name: "Tasks", Version: "1.0.0"}, wantErr: `Bundle.Name "Tasks"`},
		{name: "bundle name too long", bundle: Bundle{Name: strings.Repeat("a", 33), Version: "1.0.0"}, wantErr: "Bundle.Name"},
		{name: "version not semver", bundle: Bundle{Name: "t", Version: "v1"}, wantErr: `Bundle.Version "v1"`},
		{name: "pre-release version", bundle: Bundle{Name: "t", Version: "1.0.0-rc.1+build.5"}, features: []Feature{tool(func(*Tool[struct{}, string]) {})}},
		{name: "nothing offered", bundle: ok, wantErr: "at least one Tool"},
		{name: "route with a query", bundle: Bundle{Name: "t", Version: "1.0.0", Routes: []string{"GET /api/v1/tasks?q=1"}}, wantErr: "Bundle.Routes[0]"},
		{name: "route with a lowercase method", bundle: Bundle{Name: "t", Version: "1.0.0", Routes: []string{"get /api/v1/tasks"}}, wantErr: "Bundle.Routes[0]"},
		{name: "route with ..", bundle: Bundle{Name: "t", Version: "1.0.0", Routes: []string{"GET /api/v1/../admin"}}, wantErr: "Bundle.Routes[0]"},
		{name: "route with an empty segment", bundle: Bundle{Name: "t", Version: "1.0.0", Routes: []string{"GET /api//tasks"}}, wantErr: "Bundle.Routes[0]"},
		{name: "route listed twice", bundle: Bundle{Name: "t", Version: "1.0.0", Routes: []string{"GET /a", "GET /a"}}, wantErr: "listed twice"},
		{name: "tool name with a space", bundle: ok, features: []Feature{tool(func(t *Tool[struct{}, string]) { t.Name = "do it" })}, wantErr: `tool "do it": Name`},
		{name: "tool twice", bundle: ok, features: []Feature{tool(func(*Tool[struct{}, string]) {}), tool(func(*Tool[struct{}, string]) {})}, wantErr: "registered twice"},
		{name: "input schema not an object schema", bundle: ok, features: []Feature{tool(func(t *Tool[struct{}, string]) { t.InputSchema = json.RawMessage(`{"type":"string"}`) })}, wantErr: "InputSchema"},
		{name: "input schema missing", bundle: ok, features: []Feature{tool(func(t *Tool[struct{}, string]) { t.InputSchema = nil })}, wantErr: "InputSchema"},
		{name: "annotations missing", bundle: ok, features: []Feature{tool(func(t *Tool[struct{}, string]) { t.Annotations = nil })}, wantErr: "Annotations: required"},
		{name: "read-only and destructive", bundle: ok, features: []Feature{tool(func(t *Tool[struct{}, string]) { t.Annotations = &Annotations{ReadOnly: true, Destructive: true} })}, wantErr: "both ReadOnly and Destructive"},
		{name: "destructive with an output schema", bundle: ok, features: []Feature{tool(func(t *Tool[struct{}, string]) {
			t.Annotations, t.OutputSchema = &Annotations{Destructive: true}, noInput
		})}, wantErr: "a Destructive tool declares none"},
		{name: "unknown role", bundle: ok, features: []Feature{tool(func(t *Tool[struct{}, string]) { t.Access.MinRole = "root" })}, wantErr: `Access.MinRole "root"`},
		{name: "scope with its prefix", bundle: ok, features: []Feature{tool(func(t *Tool[struct{}, string]) { t.Access.Scope = "kadu.read" })}, wantErr: `Access.Scope "kadu.read"`},
		{name: "unknown capability", bundle: ok, features: []Feature{tool(func(t *Tool[struct{}, string]) { t.RequiresCapabilities = []string{"telepathy"} })}, wantErr: "RequiresCapabilities"},
		{name: "no handler", bundle: ok, features: []Feature{tool(func(t *Tool[struct{}, string]) { t.Handler = nil })}, wantErr: "Handler: required"},
		{name: "nil feature", bundle: ok, features: []Feature{nil}, wantErr: "feature 0 is nil"},
		{name: "relative resource URI", bundle: ok, features: []Feature{Resource{URI: "usage", Name: "u", Access: anyone, Read: func(*Call) ([]ResourceContents, error) { return nil, nil }}}, wantErr: "URI: want an absolute URI"},
		{name: "template without a variable", bundle: ok, features: []Feature{ResourceTemplate{URITemplate: "x://a", Name: "a", Access: anyone,
			Read: func(*Call, string, map[string]string) ([]ResourceContents, error) { return nil, nil }}}, wantErr: "has no {name}"},
		{name: "template of level 2", bundle: ok, features: []Feature{ResourceTemplate{URITemplate: "x://a/{+path}", Name: "a", Access: anyone,
			Read: func(*Call, string, map[string]string) ([]ResourceContents, error) { return nil, nil }}}, wantErr: "level-1"},
		{name: "prompt argument twice", bundle: ok, features: []Feature{Prompt{Name: "p", Access: anyone, Arguments: []PromptArgument{{Name: "a"}, {Name: "a"}},
			Get: func(*Call, map[string]string) (*PromptResult, error) { return nil, nil }}}, wantErr: "Arguments[1]"},
		{name: "two completions", bundle: ok, features: []Feature{
			Completion{Complete: func(*Call, CompleteRequest) (CompleteResult, error) { return CompleteResult{}, nil }},
			Completion{Complete: func(*Call, CompleteRequest) (CompleteResult, error) { return CompleteResult{}, nil }},
		}, wantErr: "a bundle has one Completion"},
		{name: "every error at once", bundle: Bundle{Name: "X", Version: "x"}, features: []Feature{tool(func(t *Tool[struct{}, string]) { t.Handler = nil })},
			wantErr: "Bundle.Version"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := newServer(tt.bundle, tt.features)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("newServer() = %v; want no error", err)
			case tt.wantErr == "":
				hostAccepts(t, s)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("newServer() = %v; want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

// hostAccepts fails t unless the manifest s describes passes the host's
// rules (package manifest): what Register accepts, the server loads.
func hostAccepts(t *testing.T, s *server) {
	t.Helper()
	raw, err := json.Marshal(s.m)
	if err != nil {
		t.Fatal(err)
	}
	m, err := manifest.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Check(manifest.Options{}); err != nil {
		t.Fatalf("Register accepted a manifest the host refuses: %v\n%s", err, raw)
	}
}

// TestRegisteredManifestLoads checks that a bundle using every kind of
// feature describes a manifest the host accepts.
func TestRegisteredManifestLoads(t *testing.T) {
	read := func(*Call) ([]ResourceContents, error) { return nil, nil }
	readT := func(*Call, string, map[string]string) ([]ResourceContents, error) { return nil, nil }
	s := mustServer(t,
		Tool[struct{}, string]{Name: "x_get", InputSchema: ObjectSchema(Property{Name: "region", Schema: `{"type":"string","x-mcp-header":"Region"}`}), OutputSchema: noInput,
			Annotations: reads, Access: anyone, Handler: noop},
		Tool[struct{}, string]{Name: "x_run", InputSchema: noInput, Annotations: &Annotations{Destructive: true},
			Access: Access{MinRole: RoleMember, Scope: ScopeRun}, RequiresCapabilities: []string{"elicitation"}, Handler: noop},
		Resource{URI: "kobana://kadu/x", Name: "x", Access: anyone, Read: read},
		ResourceTemplate{URITemplate: "kobana://kadu/x/{id}", Name: "xs", Access: anyone, Read: readT},
		Prompt{Name: "p", Arguments: []PromptArgument{{Name: "a", Required: true}}, Access: anyone,
			Get: func(*Call, map[string]string) (*PromptResult, error) { return nil, nil }},
		Completion{Complete: func(*Call, CompleteRequest) (CompleteResult, error) { return CompleteResult{}, nil }},
	)
	hostAccepts(t, s)
}

func TestManifestWireForm(t *testing.T) {
	s := mustServer(t,
		Tool[struct{}, string]{Name: "x_run", Title: "Run", Description: "Runs.", InputSchema: json.RawMessage("{ \"type\" : \"object\" }"),
			Annotations: &Annotations{Destructive: true}, Access: Access{MinRole: RoleMember, Scope: ScopeRun},
			RequiresCapabilities: []string{"elicitation"}, Handler: noop},
		Prompt{Name: "p", Access: anyone, Get: func(*Call, map[string]string) (*PromptResult, error) { return nil, nil }},
	)
	want := `{"abi":"kadu/v1","name":"test","version":"1.0.0",` +
		`"tools":[{"name":"x_run","title":"Run","description":"Runs.","inputSchema":{"type":"object"},` +
		`"annotations":{"readOnlyHint":false,"destructiveHint":true,"idempotentHint":false,"openWorldHint":false},` +
		`"access":{"min_role":"member","scope":"run"},"requiresCapabilities":["elicitation"]}],` +
		`"prompts":[{"name":"p","access":{"min_role":"viewer","scope":"read"}}],` +
		`"routes":["GET /api/v1/tasks/{id}"]}` // empty lists and false left out (sdk/ABI.md §10)
	h := &fakeHost{input: []byte("{}")}
	if status := s.Describe(h, 2); status != 0 || string(h.output) != want {
		t.Errorf("kadu_describe = %d %s\nwant 0 %s", status, h.output, want)
	}
}

func TestObjectSchema(t *testing.T) {
	got := ObjectSchema(
		Property{Name: "id", Schema: `{ "type": "string" }`, Required: true},
		Property{Name: "limit", Schema: `{"type":"integer"}`},
		Property{Name: "q\"", Schema: `{}`, Required: true},
	)
	want := `{"type":"object","properties":{"id":{"type":"string"},"limit":{"type":"integer"},"q\"":{}},"required":["id","q\""],"additionalProperties":false}`
	if string(got) != want {
		t.Errorf("ObjectSchema() = %s\nwant %s", got, want)
	}
	if got := ObjectSchema(); string(got) != `{"type":"object","properties":{},"additionalProperties":false}` {
		t.Errorf("ObjectSchema() with no properties = %s", got)
	}
	defer func() {
		if recover() == nil {
			t.Error("ObjectSchema with invalid JSON did not panic")
		}
	}()
	ObjectSchema(Property{Name: "x", Schema: `{`})
}
