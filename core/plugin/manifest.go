package plugin

import (
	"encoding/json"
	"slices"

	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/mcp"
	"github.com/kobana/kadu/core/plugin/internal/route"
	"github.com/kobana/kadu/sdk/go/kadu/manifest"
)

// ABIVersion is the manifest's "abi" value this host speaks.
const ABIVersion = manifest.ABIVersion

// The manifest's types are sdk/go/kadu/manifest's, where its rules live
// too: the Go SDK and kadutest check a bundle by the same code the host
// loads it by. Validate and the Registry return a Manifest after
// validation; callers must not modify it.
type (
	Manifest                 = manifest.Manifest
	ManifestTool             = manifest.Tool
	ManifestAnnotations      = manifest.Annotations
	ManifestAccess           = manifest.Access
	ManifestResource         = manifest.Resource
	ManifestResourceTemplate = manifest.ResourceTemplate
	ManifestPrompt           = manifest.Prompt
)

var scopeNames = map[string]string{"read": auth.ScopeRead, "write": auth.ScopeWrite, "run": auth.ScopeRun, "admin": auth.ScopeAdmin}

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
	tmpl  *manifest.Template
}

func (t *templateDef) match(uri string) bool { return t.tmpl.Match(uri) }

// toolDef is one tool of a version: its MCP form and compiled schema.
type toolDef struct {
	tool   mcp.Tool
	schema *compiledSchema // inputSchema
	output *compiledSchema // outputSchema; nil when the tool declares none
}

// parseManifest decodes and validates a manifest (sdk/go/kadu/manifest)
// against the operator's grant (nil grant: the subset check is skipped,
// for offline validation), and derives the catalog entries. Cross-bundle
// uniqueness is the Registry's job.
func parseManifest(raw []byte, grant []route.Pattern) (*compiledManifest, error) {
	m, err := manifest.Parse(raw)
	if err != nil {
		return nil, err
	}
	checked, err := m.Check(manifest.Options{Grant: grant, CompileSchema: func(raw json.RawMessage) (any, error) {
		return compileToolSchema(raw)
	}})
	if err != nil {
		return nil, err
	}
	c := &compiledManifest{m: m, routes: checked.Routes}
	for i := range m.Tools {
		c.tools = append(c.tools, newToolDef(&m.Tools[i], checked.Tools[i]))
	}
	for _, r := range m.Resources {
		c.resources = append(c.resources, mcp.Resource{URI: r.URI, Name: r.Name, Title: r.Title,
			Description: r.Description, MIMEType: r.MIMEType, Access: access(r.Access)})
	}
	for i, t := range m.ResourceTemplates {
		c.templates = append(c.templates, &templateDef{tmpl: checked.Templates[i], entry: mcp.ResourceTemplate{URITemplate: t.URITemplate,
			Name: t.Name, Title: t.Title, Description: t.Description, MIMEType: t.MIMEType, Access: access(t.Access)}})
	}
	for _, p := range m.Prompts {
		var args []mcp.PromptArgument
		for _, a := range p.Arguments {
			args = append(args, mcp.PromptArgument{Name: a.Name, Title: a.Title, Description: a.Description, Required: a.Required})
		}
		c.prompts = append(c.prompts, mcp.Prompt{Name: p.Name, Title: p.Title, Description: p.Description,
			Arguments: args, Access: access(p.Access)})
	}
	return c, nil
}

// access is a checked manifest access as the catalog's.
func access(a *ManifestAccess) mcp.Access {
	role, _ := auth.ParseRole(a.MinRole) // checked by manifest.Check
	return mcp.Access{MinRole: role, Scope: scopeNames[a.Scope]}
}

// newToolDef is a checked tool's catalog entry and compiled schemas.
func newToolDef(t *ManifestTool, ct manifest.CheckedTool) *toolDef {
	td := &toolDef{tool: mcp.Tool{Name: t.Name, Title: t.Title, Description: t.Description,
		InputSchema: t.InputSchema, OutputSchema: t.OutputSchema, Access: access(t.Access)}}
	td.schema, _ = ct.Input.(*compiledSchema)
	if out, ok := ct.Output.(*compiledSchema); ok {
		td.output = out
	} else {
		td.tool.OutputSchema = nil
	}
	for _, p := range ct.HeaderParams {
		td.tool.HeaderParams = append(td.tool.HeaderParams, mcp.HeaderParam{Header: p.Header, Path: p.Path, Type: p.Type})
	}
	td.tool.Annotations = annotations(t)
	td.tool.RequiresCapabilities = slices.Clone(t.RequiresCapabilities)
	return td
}

// annotations fills the omitted hints: the protocol's defaults where they
// are safe (a tool that does not say it only reads may be destructive),
// and openWorldHint false, since a bundle can reach nothing but the Kadu
// API.
func annotations(t *ManifestTool) *mcp.ToolAnnotations {
	a := t.Annotations
	if a == nil {
		a = &ManifestAnnotations{}
	}
	out := &mcp.ToolAnnotations{Title: a.Title}
	out.ReadOnlyHint, out.DestructiveHint = manifest.EffectiveHints(a)
	if a.IdempotentHint != nil {
		out.IdempotentHint = *a.IdempotentHint
	}
	if a.OpenWorldHint != nil {
		out.OpenWorldHint = *a.OpenWorldHint
	}
	return out
}
