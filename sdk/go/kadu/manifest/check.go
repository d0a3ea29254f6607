package manifest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// maxErrors bounds the problems one Check reports.
const maxErrors = 20

var (
	roles        = []string{"viewer", "member", "admin", "owner"}
	scopes       = []string{"read", "write", "run", "admin"}
	capabilities = []string{"elicitation", "roots", "sampling"}
)

// Options are what Check needs from its caller.
type Options struct {
	// Grant is the operator's grant of routes; every route of the manifest
	// must be covered by one. Nil skips the check (offline validation, a
	// bundle's own tests); empty grants nothing.
	Grant []Route
	// CompileSchema compiles a tool's inputSchema or outputSchema and
	// returns the compiled form, which Check hands back in Checked. Nil
	// checks only that the schema is a JSON object with "type": "object"
	// at the root. The server and kadutest pass toolschema.Compile.
	CompileSchema func(raw json.RawMessage) (any, error)
}

// Checked is what Check derived from a valid manifest, for a host to use.
type Checked struct {
	// Routes are the parsed routes, in manifest order.
	Routes []Route
	// Tools are the tools' derived forms, in manifest order.
	Tools []CheckedTool
	// Templates are the parsed resource templates, in manifest order.
	Templates []*Template
}

// CheckedTool is one tool as Check derived it.
type CheckedTool struct {
	// Input and Output are CompileSchema's results (nil without
	// CompileSchema; Output nil when the tool declares no outputSchema).
	Input, Output any
	// HeaderParams are the inputSchema's x-mcp-header parameters.
	HeaderParams []HeaderParam
}

// Check applies the load rules of sdk/ABI.md §10 and returns every
// problem (at most 20), each naming its manifest member, joined; or what
// it derived. Uniqueness across bundles is CheckUnique's.
func (m *Manifest) Check(opts Options) (*Checked, error) {
	v := checker{opts: opts}
	c := &Checked{}
	if m.ABI != ABIVersion {
		v.addf("abi %q: want %q", m.ABI, ABIVersion)
	}
	if !IsBundleName(m.Name) {
		v.addf("name %q: want a lowercase letter then up to 31 of a-z, 0-9, _", m.Name)
	}
	if !IsSemver(m.Version) {
		v.addf("version %q: want a semantic version such as 1.2.0", m.Version)
	}
	for i, r := range m.Routes {
		pr, err := ParseRoute(r)
		if err != nil {
			v.addf("routes[%d]: %v", i, err)
			continue
		}
		if opts.Grant != nil && !slices.ContainsFunc(opts.Grant, func(g Route) bool { return g.Covers(pr) }) {
			v.addf("routes[%d] %q: not granted by the operator; add it to the bundle's routes in the config or drop it", i, r)
		}
		c.Routes = append(c.Routes, pr)
	}
	if len(m.Tools)+len(m.Resources)+len(m.ResourceTemplates)+len(m.Prompts) == 0 {
		v.addf("tools: a bundle must declare at least one tool, resource, template or prompt")
	}
	seen := map[string]bool{}
	for i := range m.Tools {
		t := &m.Tools[i]
		if ct, ok := v.tool(fmt.Sprintf("tools[%d]", i), t); ok {
			if seen[t.Name] {
				v.addf("tools[%d].name %q: declared twice", i, t.Name)
			}
			seen[t.Name] = true
			c.Tools = append(c.Tools, ct)
		}
	}
	seen = map[string]bool{}
	for i, r := range m.Resources {
		at := fmt.Sprintf("resources[%d]", i)
		if u, err := url.Parse(r.URI); err != nil || u.Scheme == "" {
			v.addf("%s.uri %q: want an absolute URI such as kobana://kadu/usage", at, r.URI)
		} else if seen[r.URI] {
			v.addf("%s.uri %q: declared twice", at, r.URI)
		}
		seen[r.URI] = true
		if r.Name == "" {
			v.addf("%s.name: required", at)
		}
		v.access(at, r.Access)
	}
	for i, t := range m.ResourceTemplates {
		at := fmt.Sprintf("resourceTemplates[%d]", i)
		tm, err := ParseTemplate(t.URITemplate)
		if err != nil {
			v.addf("%s.uriTemplate: %v", at, err)
		}
		if t.Name == "" {
			v.addf("%s.name: required", at)
		}
		v.access(at, t.Access)
		if tm != nil {
			c.Templates = append(c.Templates, tm)
		}
	}
	seen = map[string]bool{}
	for i, p := range m.Prompts {
		at := fmt.Sprintf("prompts[%d]", i)
		if !IsEntryName(p.Name) {
			v.addf("%s.name %q: want 1 to 64 of a-z, A-Z, 0-9, _, ., -", at, p.Name)
		} else if seen[p.Name] {
			v.addf("%s.name %q: declared twice", at, p.Name)
		}
		seen[p.Name] = true
		args := map[string]bool{}
		for j, a := range p.Arguments {
			if a.Name == "" || args[a.Name] {
				v.addf("%s.arguments[%d].name %q: want a non-empty name used once", at, j, a.Name)
			}
			args[a.Name] = true
		}
		v.access(at, p.Access)
	}
	if err := errors.Join(v.errs...); err != nil {
		return nil, err
	}
	return c, nil
}

// checker collects problems, each naming its manifest member.
type checker struct {
	opts Options
	errs []error
}

func (v *checker) addf(format string, args ...any) {
	if len(v.errs) < maxErrors {
		v.errs = append(v.errs, fmt.Errorf("manifest: "+format, args...))
	}
}

func (v *checker) access(at string, a *Access) {
	if a == nil {
		v.addf(`%s.access: required, e.g. {"min_role":"viewer","scope":"read"}`, at)
		return
	}
	if !slices.Contains(roles, a.MinRole) {
		v.addf("%s.access.min_role %q: want viewer, member, admin or owner", at, a.MinRole)
	}
	if !slices.Contains(scopes, a.Scope) {
		v.addf("%s.access.scope %q: want read, write, run or admin", at, a.Scope)
	}
}

func (v *checker) tool(at string, t *Tool) (CheckedTool, bool) {
	n := len(v.errs)
	var ct CheckedTool
	if !IsEntryName(t.Name) {
		v.addf("%s.name %q: want 1 to 64 of a-z, A-Z, 0-9, _, ., -", at, t.Name)
	}
	at = fmt.Sprintf("%s (%s)", at, t.Name)
	v.access(at, t.Access)
	if len(t.InputSchema) == 0 {
		v.addf(`%s.inputSchema: required, at least {"type":"object"}`, at)
	} else if s, err := v.schema(t.InputSchema); err != nil {
		v.addf("%s.inputSchema: %v", at, err)
	} else {
		ct.Input = s
		hp, err := HeaderParams(t.InputSchema)
		if err != nil {
			v.addf("%s.inputSchema: %v", at, err)
		}
		ct.HeaderParams = hp
	}
	if HasOutputSchema(t) {
		if s, err := v.schema(t.OutputSchema); err != nil {
			v.addf("%s.outputSchema: %v", at, err)
		} else {
			ct.Output = s
		}
	}
	readOnly, destructive := EffectiveHints(t.Annotations)
	if readOnly && destructive {
		v.addf("%s.annotations: readOnlyHint and destructiveHint are both true; a tool that only reads destroys nothing", at)
	}
	if destructive && HasOutputSchema(t) {
		v.addf("%s.outputSchema: a destructive tool must not declare one (its first answer is a confirmation, not its output; docs/reference/confirmation.md)", at)
	}
	for _, c := range t.RequiresCapabilities {
		if !slices.Contains(capabilities, c) {
			v.addf("%s.requiresCapabilities: %q: want one of %s", at, c, strings.Join(capabilities, ", "))
		}
	}
	return ct, len(v.errs) == n
}

// HasOutputSchema reports whether the tool declares an outputSchema
// (absent and JSON null are none).
func HasOutputSchema(t *Tool) bool {
	return len(t.OutputSchema) > 0 && string(t.OutputSchema) != "null"
}

// schema compiles raw with the caller's compiler, or checks its root.
func (v *checker) schema(raw json.RawMessage) (any, error) {
	if v.opts.CompileSchema != nil {
		return v.opts.CompileSchema(raw)
	}
	var root map[string]any
	if err := json.Unmarshal(raw, &root); err != nil || root == nil {
		return nil, errors.New(`want a JSON Schema object such as {"type":"object"}`)
	}
	if t, _ := root["type"].(string); t != "object" {
		return nil, errors.New(`want "type": "object" at the root`)
	}
	return nil, nil
}
