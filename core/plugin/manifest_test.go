package plugin

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/mcp"
	"github.com/kobana/kadu/core/plugin/internal/route"
	"github.com/kobana/kadu/sdk/go/kadu/kadutest"
	"github.com/kobana/kadu/sdk/go/kadu/manifest"
)

// validManifest is a manifest every rule accepts; cases break one rule.
func validManifest() map[string]any {
	return map[string]any{
		"abi": "kadu/v1", "name": "tasks", "version": "1.2.0-rc.1+build.5", "description": "Tasks.",
		"tools": []any{map[string]any{
			"name": "kadu_tasks_get", "title": "Get a task", "description": "Gets one task.",
			"inputSchema":  map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "string"}}},
			"outputSchema": map[string]any{"type": "object"},
			"annotations":  map[string]any{"readOnlyHint": true, "idempotentHint": true},
			"access":       map[string]any{"min_role": "viewer", "scope": "read"},
		}},
		"resources": []any{map[string]any{"uri": "kobana://kadu/usage", "name": "usage",
			"access": map[string]any{"min_role": "viewer", "scope": "read"}}},
		"resourceTemplates": []any{map[string]any{"uriTemplate": "kobana://kadu/tasks/{id}", "name": "task",
			"access": map[string]any{"min_role": "viewer", "scope": "read"}}},
		"prompts": []any{map[string]any{"name": "run_task", "arguments": []any{map[string]any{"name": "task_id", "required": true}},
			"access": map[string]any{"min_role": "member", "scope": "run"}}},
		"completions": true,
		"routes":      []any{"GET /api/v1/tasks/{id}"},
	}
}

func tool0(m map[string]any) map[string]any { return m["tools"].([]any)[0].(map[string]any) }

// manifestRule is a case of a manifest rule: an edit of validManifest.
type manifestRule struct {
	name    string
	edit    func(m map[string]any)
	wantErr string // substring naming the field; "" means valid
}

func manifestRules() []manifestRule {
	return []manifestRule{
		{name: "valid", edit: func(map[string]any) {}},
		{name: "wrong abi", edit: func(m map[string]any) { m["abi"] = "kadu/v2" }, wantErr: `abi "kadu/v2": want "kadu/v1"`},
		{name: "bundle name with a capital", edit: func(m map[string]any) { m["name"] = "Tasks" }, wantErr: `name "Tasks"`},
		{name: "version without patch", edit: func(m map[string]any) { m["version"] = "1.2" }, wantErr: `version "1.2": want a semantic version`},
		{name: "version with a v", edit: func(m map[string]any) { m["version"] = "v1.2.0" }, wantErr: `version "v1.2.0"`},
		{name: "tool name with a space", edit: func(m map[string]any) { tool0(m)["name"] = "get task" }, wantErr: `tools[0].name "get task"`},
		{name: "tool name too long", edit: func(m map[string]any) { tool0(m)["name"] = strings.Repeat("a", 65) }, wantErr: "tools[0].name"},
		{name: "tool declared twice", edit: func(m map[string]any) { m["tools"] = append(m["tools"].([]any), tool0(m)) }, wantErr: "declared twice"},
		{name: "no inputSchema", edit: func(m map[string]any) { delete(tool0(m), "inputSchema") }, wantErr: "inputSchema: required"},
		{name: "inputSchema not an object type", edit: func(m map[string]any) { tool0(m)["inputSchema"] = map[string]any{"type": "array"} }, wantErr: `want "type": "object" at the root`},
		{name: "inputSchema does not compile", edit: func(m map[string]any) {
			tool0(m)["inputSchema"] = map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "strin"}}}
		}, wantErr: "inputSchema: does not compile"},
		{name: "inputSchema references a file", edit: func(m map[string]any) {
			tool0(m)["inputSchema"] = map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"$ref": "file:///etc/passwd"}}}
		}, wantErr: "self-contained"},
		{name: "header parameter inside an array", edit: func(m map[string]any) {
			tool0(m)["inputSchema"] = map[string]any{"type": "object", "properties": map[string]any{"ids": map[string]any{
				"type": "array", "items": map[string]any{"type": "string", "x-mcp-header": "Id"}}}}
		}, wantErr: "x-mcp-header at /properties/ids/items"},
		{name: "outputSchema not an object type", edit: func(m map[string]any) { tool0(m)["outputSchema"] = map[string]any{"type": "string"} }, wantErr: "outputSchema"},
		{name: "read-only and destructive", edit: func(m map[string]any) {
			tool0(m)["annotations"] = map[string]any{"readOnlyHint": true, "destructiveHint": true}
		}, wantErr: "readOnlyHint and destructiveHint are both true"},
		{name: "destructive with an outputSchema", edit: func(m map[string]any) {
			tool0(m)["annotations"] = map[string]any{"destructiveHint": true}
		}, wantErr: "destructive tool must not declare one"},
		{name: "destructive by default with an outputSchema", edit: func(m map[string]any) { delete(tool0(m), "annotations") }, wantErr: "destructive tool must not declare one"},
		{name: "no access", edit: func(m map[string]any) { delete(tool0(m), "access") }, wantErr: "tools[0] (kadu_tasks_get).access: required"},
		{name: "unknown role", edit: func(m map[string]any) { tool0(m)["access"] = map[string]any{"min_role": "root", "scope": "read"} }, wantErr: `min_role "root"`},
		{name: "unknown scope", edit: func(m map[string]any) {
			tool0(m)["access"] = map[string]any{"min_role": "viewer", "scope": "kadu.read"}
		}, wantErr: `scope "kadu.read": want read, write, run or admin`},
		{name: "unknown capability", edit: func(m map[string]any) { tool0(m)["requiresCapabilities"] = []any{"telepathy"} }, wantErr: `"telepathy"`},
		{name: "route not granted", edit: func(m map[string]any) { m["routes"] = []any{"DELETE /api/v1/tasks/{id}"} }, wantErr: `routes[0] "DELETE /api/v1/tasks/{id}": not granted`},
		{name: "route broader than the grant", edit: func(m map[string]any) { m["routes"] = []any{"GET /api/v1/{anything}"} }, wantErr: "not granted"},
		{name: "malformed route", edit: func(m map[string]any) { m["routes"] = []any{"GET"} }, wantErr: "routes[0]"},
		{name: "relative resource URI", edit: func(m map[string]any) { m["resources"].([]any)[0].(map[string]any)["uri"] = "usage" }, wantErr: `resources[0].uri "usage"`},
		{name: "template with a level-2 expression", edit: func(m map[string]any) {
			m["resourceTemplates"].([]any)[0].(map[string]any)["uriTemplate"] = "kobana://kadu/tasks/{+id}"
		}, wantErr: "resourceTemplates[0].uriTemplate"},
		{name: "prompt argument twice", edit: func(m map[string]any) {
			m["prompts"].([]any)[0].(map[string]any)["arguments"] = []any{map[string]any{"name": "a"}, map[string]any{"name": "a"}}
		}, wantErr: "prompts[0].arguments[1].name"},
		{name: "nothing declared", edit: func(m map[string]any) {
			m["tools"], m["resources"], m["resourceTemplates"], m["prompts"] = []any{}, []any{}, []any{}, []any{}
		}, wantErr: "at least one tool"},
	}
}

func TestParseManifestRules(t *testing.T) {
	grant := mustRoutes(t, "GET /api/v1/tasks/{id}", "GET /api/v1/tasks")
	for _, tt := range manifestRules() {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := validManifest()
			tt.edit(m)
			raw, _ := json.Marshal(m)
			c, err := parseManifest(raw, grant)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("parseManifest() = %v, want no error", err)
				}
				if c.m.Name != "tasks" || len(c.tools) != 1 {
					t.Fatalf("parseManifest() = %+v", c.m)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("parseManifest() error = %v\nwant one containing %q", err, tt.wantErr)
			}
			if !strings.HasPrefix(err.Error(), "manifest") {
				t.Fatalf("error %q does not say it is about the manifest", err)
			}
		})
	}
}

// TestKadutestRefusesAsTheHostDoes checks that every manifest the host
// refuses (without a grant: a bundle's own tests have none) is refused by
// kadutest, a bundle's own tests, with the very same error.
func TestKadutestRefusesAsTheHostDoes(t *testing.T) {
	refused := 0
	for _, tt := range manifestRules() {
		t.Run(tt.name, func(t *testing.T) {
			m := validManifest()
			tt.edit(m)
			raw, _ := json.Marshal(m)
			_, hostErr := parseManifest(raw, nil)
			if hostErr == nil {
				return
			}
			refused++
			km, err := kadutest.ParseManifest(raw)
			if err != nil {
				t.Fatalf("kadutest.ParseManifest() = %v", err)
			}
			if err := kadutest.CheckManifest(km); err == nil || err.Error() != hostErr.Error() {
				t.Fatalf("kadutest.CheckManifest() = %v\nthe host says %v", err, hostErr)
			}
		})
	}
	if refused < 20 {
		t.Fatalf("the host refused %d of the cases; the table lost its teeth", refused)
	}
}

func TestParseManifestDerivesCatalogEntries(t *testing.T) {
	m := validManifest()
	tool0(m)["inputSchema"] = map[string]any{"type": "object", "properties": map[string]any{
		"region": map[string]any{"type": "string", "x-mcp-header": "Region"}}}
	tool0(m)["requiresCapabilities"] = []any{"elicitation"}
	raw, _ := json.Marshal(m)
	c, err := parseManifest(raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	tool := c.tools[0].tool
	wantAnn := mcp.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: false, IdempotentHint: true, OpenWorldHint: false}
	if *tool.Annotations != wantAnn {
		t.Errorf("annotations = %+v, want %+v (omitted hints filled: not destructive when read-only, closed world)", *tool.Annotations, wantAnn)
	}
	if tool.Access != (mcp.Access{MinRole: auth.RoleViewer, Scope: auth.ScopeRead}) {
		t.Errorf("access = %+v, want viewer + kadu.read", tool.Access)
	}
	if len(tool.HeaderParams) != 1 || tool.HeaderParams[0].Header != "Region" {
		t.Errorf("HeaderParams = %+v, want Region", tool.HeaderParams)
	}
	if len(tool.RequiresCapabilities) != 1 || tool.RequiresCapabilities[0] != "elicitation" {
		t.Errorf("RequiresCapabilities = %v", tool.RequiresCapabilities)
	}
	if got := c.prompts[0].Access; got != (mcp.Access{MinRole: auth.RoleMember, Scope: auth.ScopeRun}) {
		t.Errorf("prompt access = %+v", got)
	}
	if len(c.templates) != 1 || !c.templates[0].match("kobana://kadu/tasks/tsk_1") {
		t.Errorf("template not derived: %+v", c.templates)
	}
}

func TestDestructiveByDefault(t *testing.T) {
	m := validManifest()
	delete(tool0(m), "annotations")
	delete(tool0(m), "outputSchema")
	raw, _ := json.Marshal(m)
	c, err := parseManifest(raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	// A tool that does not say it only reads gets the protocol's default,
	// destructiveHint true, so Kadu confirms it before it runs.
	if a := c.tools[0].tool.Annotations; !a.DestructiveHint || a.ReadOnlyHint || a.OpenWorldHint {
		t.Fatalf("annotations = %+v, want destructive, not read-only, closed world", *a)
	}
}

// FuzzParseManifest feeds arbitrary bytes to the manifest parser: it must
// never panic, and whatever it accepts must be complete enough to serve.
func FuzzParseManifest(f *testing.F) {
	raw, _ := json.Marshal(validManifest())
	f.Add(raw)
	f.Add([]byte(`{"abi":"kadu/v1","name":"a","version":"0.0.1","tools":[{"name":"t","inputSchema":{"type":"object"},"access":{"min_role":"viewer","scope":"read"}}],"routes":[]}`))
	f.Add([]byte(`{"tools":[{"inputSchema":{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A"}}}}]}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		c, err := parseManifest(raw, nil)
		if err != nil {
			return
		}
		if c.m.ABI != ABIVersion || !manifest.IsBundleName(c.m.Name) || !manifest.IsSemver(c.m.Version) {
			t.Fatalf("accepted a manifest with abi %q, name %q, version %q", c.m.ABI, c.m.Name, c.m.Version)
		}
		for _, td := range c.tools {
			if td.schema == nil || td.tool.Annotations == nil || !td.tool.Access.MinRole.Valid() || td.tool.Access.Scope == "" {
				t.Fatalf("accepted tool %q without a schema, annotations or access", td.tool.Name)
			}
		}
	})
}

func mustRoutes(t *testing.T, patterns ...string) []route.Pattern {
	t.Helper()
	var out []route.Pattern
	for _, p := range patterns {
		r, err := route.Parse(p)
		if err != nil {
			t.Fatalf("route.Parse(%q): %v", p, err)
		}
		out = append(out, r)
	}
	return out
}
