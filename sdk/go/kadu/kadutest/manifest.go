package kadutest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Manifest is the output of kadu_describe (sdk/ABI.md §10), parsed on its
// own terms rather than with the SDK's types, so that tests check the
// wire form.
type Manifest struct {
	ABI               string             `json:"abi"`
	Name              string             `json:"name"`
	Version           string             `json:"version"`
	Description       string             `json:"description"`
	Tools             []ManifestTool     `json:"tools"`
	Resources         []ManifestResource `json:"resources"`
	ResourceTemplates []ManifestTemplate `json:"resourceTemplates"`
	Prompts           []ManifestPrompt   `json:"prompts"`
	Completions       bool               `json:"completions"`
	Routes            []string           `json:"routes"`
}

// ManifestTool is a tool of the manifest.
type ManifestTool struct {
	Name         string          `json:"name"`
	Title        string          `json:"title"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema"`
	Annotations  *Annotations    `json:"annotations"`
	Access       *Access         `json:"access"`
	// RequiresCapabilities lists client capabilities the tool always needs.
	RequiresCapabilities []string `json:"requiresCapabilities"`
}

// Annotations are a tool's hints; nil means absent.
type Annotations struct {
	ReadOnlyHint    *bool `json:"readOnlyHint"`
	DestructiveHint *bool `json:"destructiveHint"`
	IdempotentHint  *bool `json:"idempotentHint"`
	OpenWorldHint   *bool `json:"openWorldHint"`
}

// Access is an entry's "access".
type Access struct {
	MinRole string `json:"min_role"`
	Scope   string `json:"scope"`
}

// ManifestResource is a fixed resource of the manifest.
type ManifestResource struct {
	URI         string  `json:"uri"`
	Name        string  `json:"name"`
	Title       string  `json:"title"`
	Description string  `json:"description"`
	MIMEType    string  `json:"mimeType"`
	Access      *Access `json:"access"`
}

// ManifestTemplate is a resource template of the manifest.
type ManifestTemplate struct {
	URITemplate string  `json:"uriTemplate"`
	Name        string  `json:"name"`
	Title       string  `json:"title"`
	Description string  `json:"description"`
	MIMEType    string  `json:"mimeType"`
	Access      *Access `json:"access"`
}

// ManifestPrompt is a prompt of the manifest.
type ManifestPrompt struct {
	Name        string `json:"name"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Arguments   []struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		Required    bool   `json:"required"`
	} `json:"arguments"`
	Access *Access `json:"access"`
}

// ParseManifest decodes a manifest.
func ParseManifest(raw []byte) (*Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	return &m, nil
}

// Tool returns the tool called name, or nil.
func (m *Manifest) Tool(name string) *ManifestTool {
	for i := range m.Tools {
		if m.Tools[i].Name == name {
			return &m.Tools[i]
		}
	}
	return nil
}

// ToolNames returns the tools' names in manifest order.
func (m *Manifest) ToolNames() []string {
	out := make([]string, len(m.Tools))
	for i, t := range m.Tools {
		out[i] = t.Name
	}
	return out
}

var (
	bundleNameRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)
	entryNameRE  = regexp.MustCompile(`^[a-zA-Z0-9_.-]{1,64}$`)
	semverRE     = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$`)
	routeRE      = regexp.MustCompile(`^(GET|POST|PUT|PATCH|DELETE) (/(\{[A-Za-z_][A-Za-z0-9_]*\}|[A-Za-z0-9._~!$&'()*+,;=:@%-]+))+$`)
	templateRE   = regexp.MustCompile(`^[^{}]*(\{[A-Za-z0-9_]+\}[^{}]*)+$`)
)

// Check applies the load rules of sdk/ABI.md §10 and returns every
// failure, each naming the member, joined. It is stricter than the host in
// one place: every tool must carry all four hints as explicit booleans,
// with openWorldHint false (docs/reference/mcp.md#tools), where the host would fill omitted
// ones with safe defaults.
func (m *Manifest) Check() error {
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if m.ABI != "kadu/v1" {
		fail(`abi: %q; want "kadu/v1"`, m.ABI)
	}
	if !bundleNameRE.MatchString(m.Name) {
		fail("name: %q; want ^[a-z][a-z0-9_]{0,31}$", m.Name)
	}
	if !semverRE.MatchString(m.Version) {
		fail("version: %q; want a semantic version", m.Version)
	}
	names := map[string]bool{}
	for i, t := range m.Tools {
		at := fmt.Sprintf("tools[%d] (%s)", i, t.Name)
		if !entryNameRE.MatchString(t.Name) {
			fail("%s.name: want ^[a-zA-Z0-9_.-]{1,64}$", at)
		}
		if names[t.Name] {
			fail("%s.name: not unique", at)
		}
		names[t.Name] = true
		if err := checkSchema(t.InputSchema); err != nil {
			fail("%s.inputSchema: %v", at, err)
		}
		if len(t.OutputSchema) > 0 {
			if err := checkSchema(t.OutputSchema); err != nil {
				fail("%s.outputSchema: %v", at, err)
			}
		}
		a := t.Annotations
		switch {
		case a == nil || a.ReadOnlyHint == nil || a.DestructiveHint == nil || a.IdempotentHint == nil:
			fail("%s.annotations: want readOnlyHint, destructiveHint and idempotentHint as booleans", at)
		case a.OpenWorldHint != nil && *a.OpenWorldHint:
			fail("%s.annotations.openWorldHint: must be false: a bundle reaches only the Kadu API", at)
		case *a.ReadOnlyHint && *a.DestructiveHint:
			fail("%s.annotations: readOnlyHint and destructiveHint are both true", at)
		case *a.DestructiveHint && len(t.OutputSchema) > 0:
			fail("%s.outputSchema: a destructive tool declares none", at)
		}
		checkAccess(at, t.Access, fail)
		for _, c := range t.RequiresCapabilities {
			if !slices.Contains([]string{"elicitation", "sampling", "roots"}, c) {
				fail("%s.requiresCapabilities: %q; want elicitation, sampling or roots", at, c)
			}
		}
	}
	uris := map[string]bool{}
	for i, r := range m.Resources {
		at := fmt.Sprintf("resources[%d] (%s)", i, r.URI)
		if u, err := url.Parse(r.URI); err != nil || !u.IsAbs() {
			fail("%s.uri: want an absolute URI", at)
		}
		if uris[r.URI] {
			fail("%s.uri: not unique", at)
		}
		uris[r.URI] = true
		if r.Name == "" {
			fail("%s.name: required", at)
		}
		checkAccess(at, r.Access, fail)
	}
	for i, r := range m.ResourceTemplates {
		at := fmt.Sprintf("resourceTemplates[%d] (%s)", i, r.URITemplate)
		if !templateRE.MatchString(r.URITemplate) {
			fail("%s.uriTemplate: want a URI with {name} variables (RFC 6570 level 1)", at)
		}
		if uris[r.URITemplate] {
			fail("%s.uriTemplate: not unique", at)
		}
		uris[r.URITemplate] = true
		if r.Name == "" {
			fail("%s.name: required", at)
		}
		checkAccess(at, r.Access, fail)
	}
	prompts := map[string]bool{}
	for i, p := range m.Prompts {
		at := fmt.Sprintf("prompts[%d] (%s)", i, p.Name)
		if !entryNameRE.MatchString(p.Name) {
			fail("%s.name: want ^[a-zA-Z0-9_.-]{1,64}$", at)
		}
		if prompts[p.Name] {
			fail("%s.name: not unique", at)
		}
		prompts[p.Name] = true
		for j, a := range p.Arguments {
			if a.Name == "" {
				fail("%s.arguments[%d].name: required", at, j)
			}
		}
		checkAccess(at, p.Access, fail)
	}
	for i, r := range m.Routes {
		if !routeRE.MatchString(r) || strings.Contains(r, "/../") || strings.HasSuffix(r, "/..") || strings.Contains(r, "/./") {
			fail("routes[%d]: %q; want \"METHOD /path\" with literal or {name} segments", i, r)
		}
		if slices.Index(m.Routes, r) != i {
			fail("routes[%d]: %q listed twice", i, r)
		}
	}
	return errors.Join(errs...)
}

func checkAccess(at string, a *Access, fail func(string, ...any)) {
	if a == nil {
		fail("%s.access: required", at)
		return
	}
	if !slices.Contains([]string{"viewer", "member", "admin", "owner"}, a.MinRole) {
		fail("%s.access.min_role: %q; want viewer, member, admin or owner", at, a.MinRole)
	}
	if !slices.Contains([]string{"read", "write", "run", "admin"}, a.Scope) {
		fail("%s.access.scope: %q; want read, write, run or admin", at, a.Scope)
	}
}

// checkSchema compiles raw as a self-contained JSON Schema draft 2020-12
// with "type": "object" at the root.
func checkSchema(raw json.RawMessage) error {
	if len(raw) == 0 {
		return errors.New("required")
	}
	var root struct {
		Type any `json:"type"`
	}
	if err := json.Unmarshal(raw, &root); err != nil {
		return fmt.Errorf("not a JSON object: %w", err)
	}
	if root.Type != "object" {
		return errors.New(`want "type": "object" at the root`)
	}
	_, err := CompileSchema(raw)
	return err
}

// CompileSchema compiles raw as a self-contained JSON Schema draft 2020-12,
// with format assertions on, as the host does.
func CompileSchema(raw json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.UseLoader(noLoader{})
	if err := c.AddResource("kadu:schema", doc); err != nil {
		return nil, err
	}
	return c.Compile("kadu:schema")
}

type noLoader struct{}

func (noLoader) Load(u string) (any, error) {
	return nil, fmt.Errorf("schemas must be self-contained; %s is not loaded", u)
}

// CheckUnique reports tool and prompt names, resource URIs and templates
// that more than one of ms declares: the host refuses a bundle that
// clashes with one already loaded.
func CheckUnique(ms ...*Manifest) error {
	var errs []error
	owner := map[string]string{}
	claim := func(kind, key, bundle string) {
		k := kind + " " + key
		if prev, ok := owner[k]; ok && prev != bundle {
			errs = append(errs, fmt.Errorf("%s %q is declared by %s and %s", kind, key, prev, bundle))
		}
		owner[k] = bundle
	}
	for _, m := range ms {
		for _, t := range m.Tools {
			claim("tool", t.Name, m.Name)
		}
		for _, p := range m.Prompts {
			claim("prompt", p.Name, m.Name)
		}
		for _, r := range m.Resources {
			claim("resource", r.URI, m.Name)
		}
		for _, r := range m.ResourceTemplates {
			claim("resource", r.URITemplate, m.Name)
		}
	}
	return errors.Join(errs...)
}
