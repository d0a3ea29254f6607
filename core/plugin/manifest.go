package plugin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/mcp"
	"github.com/kobana/kadu/core/plugin/internal/route"
	"github.com/kobana/kadu/core/plugin/internal/uritemplate"
	"github.com/kobana/kadu/core/plugin/internal/xheader"
)

// ABIVersion is the manifest's "abi" value this host speaks.
const ABIVersion = "kadu/v1"

// Manifest is what a bundle declares about itself (the output of
// kadu_describe). Validate and the Registry return it after validation;
// callers must not modify it.
type Manifest struct {
	ABI               string                     `json:"abi"`
	Name              string                     `json:"name"`
	Version           string                     `json:"version"`
	Description       string                     `json:"description,omitempty"`
	Tools             []ManifestTool             `json:"tools"`
	Resources         []ManifestResource         `json:"resources,omitempty"`
	ResourceTemplates []ManifestResourceTemplate `json:"resourceTemplates,omitempty"`
	Prompts           []ManifestPrompt           `json:"prompts,omitempty"`
	Completions       bool                       `json:"completions,omitempty"`
	Routes            []string                   `json:"routes"`
}

// ManifestTool is an MCP Tool plus the access it requires.
type ManifestTool struct {
	Name         string               `json:"name"`
	Title        string               `json:"title,omitempty"`
	Description  string               `json:"description,omitempty"`
	InputSchema  json.RawMessage      `json:"inputSchema"`
	OutputSchema json.RawMessage      `json:"outputSchema,omitempty"`
	Annotations  *ManifestAnnotations `json:"annotations,omitempty"`
	Access       *ManifestAccess      `json:"access"`
	// RequiresCapabilities lists client capabilities ("elicitation",
	// "sampling", "roots") the tool always asks for. Optional: a client
	// without them gets -32021 before the bundle runs.
	RequiresCapabilities []string `json:"requiresCapabilities,omitempty"`
}

// ManifestAnnotations are a tool's hints as the bundle wrote them; nil
// means omitted.
type ManifestAnnotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

// ManifestAccess is the permission an entry requires.
type ManifestAccess struct {
	MinRole string `json:"min_role"` // viewer, member, admin or owner
	Scope   string `json:"scope"`    // read, write, run or admin
}

// ManifestResource is a fixed-URI document.
type ManifestResource struct {
	URI         string          `json:"uri"`
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	MIMEType    string          `json:"mimeType,omitempty"`
	Access      *ManifestAccess `json:"access"`
}

// ManifestResourceTemplate is an RFC 6570 level-1 URI template.
type ManifestResourceTemplate struct {
	URITemplate string          `json:"uriTemplate"`
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	MIMEType    string          `json:"mimeType,omitempty"`
	Access      *ManifestAccess `json:"access"`
}

// ManifestPrompt is a prompt definition.
type ManifestPrompt struct {
	Name        string               `json:"name"`
	Title       string               `json:"title,omitempty"`
	Description string               `json:"description,omitempty"`
	Arguments   []mcp.PromptArgument `json:"arguments,omitempty"`
	Access      *ManifestAccess      `json:"access"`
}

var (
	entryNameRE = regexp.MustCompile(`^[a-zA-Z0-9_.-]{1,64}$`)
	// semverRE is the regular expression semver.org recommends.
	semverRE = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)` +
		`(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?` +
		`(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$`)
	scopeNames   = map[string]string{"read": auth.ScopeRead, "write": auth.ScopeWrite, "run": auth.ScopeRun, "admin": auth.ScopeAdmin}
	capabilities = []string{"elicitation", "roots", "sampling"}
)

// maxManifestErrors bounds the problems one validation reports.
const maxManifestErrors = 20

// compiledManifest is a validated manifest with everything derived from it
// that calls need. Immutable.
type compiledManifest struct {
	m         *Manifest
	routes    []route.Pattern
	tools     []*toolDef
	resources []mcp.Resource
	templates []*templateDef
	prompts   []mcp.Prompt
}

// templateDef is one resource template of a version: its MCP form and
// its matcher.
type templateDef struct {
	entry mcp.ResourceTemplate
	tmpl  *uritemplate.Template
}

func (t *templateDef) match(uri string) bool { return t.tmpl.Match(uri) }

// toolDef is one tool of a version: its MCP form and compiled schema.
type toolDef struct {
	tool   mcp.Tool
	schema *compiledSchema // inputSchema
	output *compiledSchema // outputSchema; nil when the tool declares none
}

// parseManifest decodes and validates a manifest against the operator's
// grant (nil grant: the subset check is skipped, for offline validation).
// Cross-bundle uniqueness is the Registry's job.
func parseManifest(raw []byte, grant []route.Pattern) (*compiledManifest, error) {
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("manifest is not valid JSON of the kadu/v1 shape: %w", err)
	}
	v := manifestChecker{}
	c := &compiledManifest{m: &m}
	if m.ABI != ABIVersion {
		v.addf("abi %q: want %q", m.ABI, ABIVersion)
	}
	if !bundleNameRE.MatchString(m.Name) {
		v.addf("name %q: want a lowercase letter then up to 31 of a-z, 0-9, _", m.Name)
	}
	if !semverRE.MatchString(m.Version) {
		v.addf("version %q: want a semantic version such as 1.2.0", m.Version)
	}
	for i, r := range m.Routes {
		pr, err := route.Parse(r)
		if err != nil {
			v.addf("routes[%d]: %v", i, err)
			continue
		}
		if grant != nil && !slices.ContainsFunc(grant, func(g route.Pattern) bool { return g.Covers(pr) }) {
			v.addf("routes[%d] %q: not granted by the operator; add it to the bundle's routes in the config or drop it", i, r)
		}
		c.routes = append(c.routes, pr)
	}
	if len(m.Tools)+len(m.Resources)+len(m.ResourceTemplates)+len(m.Prompts) == 0 {
		v.addf("tools: a bundle must declare at least one tool, resource, template or prompt")
	}
	seen := map[string]bool{}
	for i := range m.Tools {
		if td := v.tool(fmt.Sprintf("tools[%d]", i), &m.Tools[i]); td != nil {
			if seen[td.tool.Name] {
				v.addf("tools[%d].name %q: declared twice", i, td.tool.Name)
			}
			seen[td.tool.Name] = true
			c.tools = append(c.tools, td)
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
		acc := v.access(at, r.Access)
		c.resources = append(c.resources, mcp.Resource{URI: r.URI, Name: r.Name, Title: r.Title,
			Description: r.Description, MIMEType: r.MIMEType, Access: acc})
	}
	for i, t := range m.ResourceTemplates {
		at := fmt.Sprintf("resourceTemplates[%d]", i)
		tm, err := uritemplate.Parse(t.URITemplate)
		if err != nil {
			v.addf("%s.uriTemplate: %v", at, err)
		}
		if t.Name == "" {
			v.addf("%s.name: required", at)
		}
		acc := v.access(at, t.Access)
		if tm != nil {
			c.templates = append(c.templates, &templateDef{tmpl: tm, entry: mcp.ResourceTemplate{URITemplate: t.URITemplate,
				Name: t.Name, Title: t.Title, Description: t.Description, MIMEType: t.MIMEType, Access: acc}})
		}
	}
	seen = map[string]bool{}
	for i, p := range m.Prompts {
		at := fmt.Sprintf("prompts[%d]", i)
		if !entryNameRE.MatchString(p.Name) {
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
		acc := v.access(at, p.Access)
		c.prompts = append(c.prompts, mcp.Prompt{Name: p.Name, Title: p.Title, Description: p.Description,
			Arguments: p.Arguments, Access: acc})
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	return c, nil
}

// manifestChecker collects problems, each naming its manifest field.
type manifestChecker struct {
	errs []error
}

func (v *manifestChecker) addf(format string, args ...any) {
	if len(v.errs) < maxManifestErrors {
		v.errs = append(v.errs, fmt.Errorf("manifest: "+format, args...))
	}
}

func (v *manifestChecker) err() error { return errors.Join(v.errs...) }

func (v *manifestChecker) access(at string, a *ManifestAccess) mcp.Access {
	if a == nil {
		v.addf(`%s.access: required, e.g. {"min_role":"viewer","scope":"read"}`, at)
		return mcp.Access{MinRole: auth.RoleOwner, Scope: auth.ScopeAdmin}
	}
	role, err := auth.ParseRole(a.MinRole)
	if err != nil {
		v.addf("%s.access.min_role %q: want viewer, member, admin or owner", at, a.MinRole)
	}
	scope, ok := scopeNames[a.Scope]
	if !ok {
		v.addf("%s.access.scope %q: want read, write, run or admin", at, a.Scope)
	}
	return mcp.Access{MinRole: role, Scope: scope}
}

func (v *manifestChecker) tool(at string, t *ManifestTool) *toolDef {
	n := len(v.errs)
	if !entryNameRE.MatchString(t.Name) {
		v.addf("%s.name %q: want 1 to 64 of a-z, A-Z, 0-9, _, ., -", at, t.Name)
	}
	at = fmt.Sprintf("%s (%s)", at, t.Name)
	td := &toolDef{tool: mcp.Tool{Name: t.Name, Title: t.Title, Description: t.Description,
		InputSchema: t.InputSchema, OutputSchema: t.OutputSchema}}
	td.tool.Access = v.access(at, t.Access)
	if len(t.InputSchema) == 0 {
		v.addf(`%s.inputSchema: required, at least {"type":"object"}`, at)
	} else if s, err := compileToolSchema(t.InputSchema); err != nil {
		v.addf("%s.inputSchema: %v", at, err)
	} else {
		td.schema = s
		hp, err := xheader.Params(t.InputSchema)
		if err != nil {
			v.addf("%s.inputSchema: %v", at, err)
		}
		td.tool.HeaderParams = hp
	}
	if len(t.OutputSchema) > 0 && string(t.OutputSchema) != "null" {
		if s, err := compileToolSchema(t.OutputSchema); err != nil {
			v.addf("%s.outputSchema: %v", at, err)
		} else {
			td.output = s
		}
	} else {
		td.tool.OutputSchema = nil
	}
	td.tool.Annotations = v.annotations(at, t)
	for _, c := range t.RequiresCapabilities {
		if !slices.Contains(capabilities, c) {
			v.addf("%s.requiresCapabilities: %q: want one of %s", at, c, strings.Join(capabilities, ", "))
		}
	}
	td.tool.RequiresCapabilities = slices.Clone(t.RequiresCapabilities)
	if len(v.errs) > n {
		return nil
	}
	return td
}

// annotations checks the hints and fills the omitted ones: the protocol's
// defaults where they are safe (a tool that does not say it only reads may
// be destructive), and openWorldHint false, since a bundle can reach
// nothing but the Kadu API.
func (v *manifestChecker) annotations(at string, t *ManifestTool) *mcp.ToolAnnotations {
	a := t.Annotations
	if a == nil {
		a = &ManifestAnnotations{}
	}
	out := &mcp.ToolAnnotations{Title: a.Title}
	out.ReadOnlyHint, out.DestructiveHint = effectiveHints(a)
	if a.IdempotentHint != nil {
		out.IdempotentHint = *a.IdempotentHint
	}
	if a.OpenWorldHint != nil {
		out.OpenWorldHint = *a.OpenWorldHint
	}
	if out.ReadOnlyHint && out.DestructiveHint {
		v.addf("%s.annotations: readOnlyHint and destructiveHint are both true; a tool that only reads destroys nothing", at)
	}
	if out.DestructiveHint && len(t.OutputSchema) > 0 && string(t.OutputSchema) != "null" {
		v.addf("%s.outputSchema: a destructive tool must not declare one (its first answer is a confirmation, not its output; docs/reference/mcp.md#tools)", at)
	}
	return out
}
