// Package manifest owns the kadu/v1 bundle manifest, the output of a
// bundle's kadu_describe (sdk/ABI.md §10): its types and the rules a host
// loads a bundle by. The server (core/plugin), the Go SDK's Register and
// kadutest all check a manifest here, so a bundle that passes its own
// tests is not then refused by the server.
//
// It is standard library only and compiles no regexp at start-up: a Go
// guest imports it. It does not compile JSON Schemas (a guest carries no
// schema compiler); the caller passes the compiler in Options, and
// manifest/toolschema is the one the server and kadutest use. It knows
// nothing of grants beyond the routes the caller hands it, nor of other
// bundles beyond CheckUnique.
package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// ABIVersion is the manifest's "abi" value of this ABI.
const ABIVersion = "kadu/v1"

// Manifest is what a bundle declares about itself.
type Manifest struct {
	ABI               string             `json:"abi"`
	Name              string             `json:"name"`
	Version           string             `json:"version"`
	Description       string             `json:"description,omitempty"`
	Tools             []Tool             `json:"tools"`
	Resources         []Resource         `json:"resources,omitempty"`
	ResourceTemplates []ResourceTemplate `json:"resourceTemplates,omitempty"`
	Prompts           []Prompt           `json:"prompts,omitempty"`
	Completions       bool               `json:"completions,omitempty"`
	Routes            []string           `json:"routes"`
}

// Tool is an MCP Tool plus the access it requires.
type Tool struct {
	Name         string          `json:"name"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  *Annotations    `json:"annotations,omitempty"`
	Access       *Access         `json:"access"`
	// RequiresCapabilities lists client capabilities ("elicitation",
	// "sampling", "roots") the tool always asks for. Optional: a client
	// without them gets -32021 before the bundle runs.
	RequiresCapabilities []string `json:"requiresCapabilities,omitempty"`
}

// Annotations are a tool's hints as the bundle wrote them; nil means
// omitted (see EffectiveHints).
type Annotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

// Access is the permission an entry requires.
type Access struct {
	MinRole string `json:"min_role"` // viewer, member, admin or owner
	Scope   string `json:"scope"`    // read, write, run or admin
}

// Resource is a fixed-URI document.
type Resource struct {
	URI         string  `json:"uri"`
	Name        string  `json:"name"`
	Title       string  `json:"title,omitempty"`
	Description string  `json:"description,omitempty"`
	MIMEType    string  `json:"mimeType,omitempty"`
	Access      *Access `json:"access"`
}

// ResourceTemplate is an RFC 6570 level-1 URI template.
type ResourceTemplate struct {
	URITemplate string  `json:"uriTemplate"`
	Name        string  `json:"name"`
	Title       string  `json:"title,omitempty"`
	Description string  `json:"description,omitempty"`
	MIMEType    string  `json:"mimeType,omitempty"`
	Access      *Access `json:"access"`
}

// Prompt is a prompt definition.
type Prompt struct {
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	Arguments   []PromptArgument `json:"arguments,omitempty"`
	Access      *Access          `json:"access"`
}

// PromptArgument is one argument of a prompt.
type PromptArgument struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// Parse decodes a manifest; Check applies the rules.
func Parse(raw []byte) (*Manifest, error) {
	var m Manifest
	if err := json.NewDecoder(bytes.NewReader(raw)).Decode(&m); err != nil {
		return nil, fmt.Errorf("manifest is not valid JSON of the kadu/v1 shape: %w", err)
	}
	return &m, nil
}

// Tool returns the tool called name, or nil.
func (m *Manifest) Tool(name string) *Tool {
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

// EffectiveHints are readOnlyHint and destructiveHint as a host reads a
// tool's annotations: omitted readOnlyHint is false, and omitted
// destructiveHint is the opposite of readOnlyHint (a tool that does not say
// it only reads may destroy).
func EffectiveHints(a *Annotations) (readOnly, destructive bool) {
	if a == nil {
		return false, true
	}
	if a.ReadOnlyHint != nil {
		readOnly = *a.ReadOnlyHint
	}
	destructive = !readOnly
	if a.DestructiveHint != nil {
		destructive = *a.DestructiveHint
	}
	return readOnly, destructive
}
