package mcp

import (
	"context"
	"encoding/json"

	"github.com/kobana/kadu/core/auth"
)

// Catalog is what the engine serves: the tools, resources, resource
// templates, prompts and completions of the bundles that are loaded.
//
// The engine applies the access policy itself — a tool whose Access the
// principal's role does not meet is never listed and is unknown when called;
// one whose scope is missing is not listed and gets the 403 step-up — so a
// Catalog cannot leak a tool by forgetting to filter. A Catalog may still
// hide entries per principal (per organisation, say).
//
// Implementations must be safe for concurrent use. Slices and values
// returned are read, never modified, by the engine.
type Catalog interface {
	// Tools returns every tool candidate for p, before access filtering.
	Tools(ctx context.Context, p *auth.Principal) ([]Tool, error)
	// CallTool runs a tool the engine has already resolved, authorised and
	// whose arguments are a JSON object. Errors the model can act on are
	// results with IsError; an error return is a fault (-32603) unless it
	// is an *Error, which is sent as it is.
	CallTool(ctx context.Context, p *auth.Principal, call *ToolCall) (*ToolResult, error)

	// Resources returns the fixed-URI documents p may read.
	Resources(ctx context.Context, p *auth.Principal) ([]Resource, error)
	// ResourceTemplates returns the URI templates p may read.
	ResourceTemplates(ctx context.Context, p *auth.Principal) ([]ResourceTemplate, error)
	// ReadResource reads one document. A URI that does not exist, or that p
	// may not see, returns ErrResourceNotFound.
	ReadResource(ctx context.Context, p *auth.Principal, req *ReadResourceRequest) (*ReadResourceResult, error)

	// Prompts returns the prompts candidate for p, before access filtering.
	Prompts(ctx context.Context, p *auth.Principal) ([]Prompt, error)
	// GetPrompt renders a prompt the engine has resolved and authorised.
	GetPrompt(ctx context.Context, p *auth.Principal, req *GetPromptRequest) (*GetPromptResult, error)

	// Complete suggests values for a prompt or template argument.
	Complete(ctx context.Context, p *auth.Principal, req *CompleteRequest) (*CompleteResult, error)
}

// Access is the permission an entry requires: a minimum role and a scope.
// Effective permission is role ∩ scopes (docs/reference/auth.md).
type Access struct {
	MinRole auth.Role // empty: any valid role
	Scope   string    // empty: no scope needed
}

// Tool is an MCP tool definition plus the access it requires.
type Tool struct {
	Name         string           `json:"name"`
	Title        string           `json:"title,omitempty"`
	Description  string           `json:"description,omitempty"`
	InputSchema  json.RawMessage  `json:"inputSchema"`
	OutputSchema json.RawMessage  `json:"outputSchema,omitempty"`
	Annotations  *ToolAnnotations `json:"annotations,omitempty"`
	Meta         map[string]any   `json:"_meta,omitempty"`

	Access Access `json:"-"`
	// HeaderParams lists the x-mcp-header parameters of InputSchema, in the
	// order they are checked. The plugin loader derives it when validating
	// the schema; the engine mirrors them as Mcp-Param-* in era 2026.
	HeaderParams []HeaderParam `json:"-"`
	// RequiresCapabilities lists client capabilities ("elicitation",
	// "sampling", "roots") the tool always asks for; a client that did not
	// declare them gets -32021 before the tool runs.
	RequiresCapabilities []string `json:"-"`
}

// HeaderParam is one tool parameter mirrored as an Mcp-Param-{Header} header.
type HeaderParam struct {
	Header string   // the x-mcp-header value, e.g. "Region"
	Path   []string // property keys from the schema root to the parameter
	Type   string   // "string", "integer" or "boolean"
}

// ToolAnnotations are the behaviour hints of a tool. Kadu emits all four as
// explicit booleans: the protocol's defaults would mislead clients.
type ToolAnnotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    bool   `json:"readOnlyHint"`
	DestructiveHint bool   `json:"destructiveHint"`
	IdempotentHint  bool   `json:"idempotentHint"`
	OpenWorldHint   bool   `json:"openWorldHint"`
}

// ClientContext is what the engine knows about the client of one request.
// In era 2026 it comes from the request's _meta; in era 2025 only the
// protocol version is known (capabilities were sent once, at initialize,
// and a stateless server does not remember them).
type ClientContext struct {
	ProtocolVersion string
	Era             Era
	// Capabilities is the client's declared capabilities object (era 2026),
	// or nil when unknown.
	Capabilities map[string]json.RawMessage
	// Info is the clientInfo the client reported (era 2026), or nil.
	Info *Implementation
}

// HasCapability reports whether the client declared the named capability.
func (c *ClientContext) HasCapability(name string) bool {
	if c == nil || c.Capabilities == nil {
		return false
	}
	_, ok := c.Capabilities[name]
	return ok
}

// Implementation names a client or server.
type Implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

// ToolCall is a resolved tools/call.
type ToolCall struct {
	Tool      *Tool
	Arguments json.RawMessage // always a JSON object
	Client    ClientContext
	// InputResponses and RequestState carry a multi-round-trip retry
	// (era 2026); both are nil on a first call.
	InputResponses map[string]json.RawMessage
	RequestState   string
	RequestID      string // for logs and caller_info
}

// ToolResult is a CallToolResult. Content items are marshalled as they are.
type ToolResult struct {
	Content           []Content       `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError,omitempty"`
	Meta              map[string]any  `json:"_meta,omitempty"`

	// InputRequests, when non-empty, makes this an input_required result
	// (era 2026): the client answers them and retries with RequestState.
	InputRequests map[string]json.RawMessage `json:"-"`
	RequestState  string                     `json:"-"`
}

// Content is one content block of a result, e.g. TextContent.
type Content = any

// TextContent is a text content block.
type TextContent struct {
	Type string `json:"type"` // always "text"
	Text string `json:"text"`
}

// Text returns a text content block.
func Text(s string) TextContent { return TextContent{Type: "text", Text: s} }

// Resource is a fixed-URI document.
type Resource struct {
	URI         string         `json:"uri"`
	Name        string         `json:"name"`
	Title       string         `json:"title,omitempty"`
	Description string         `json:"description,omitempty"`
	MIMEType    string         `json:"mimeType,omitempty"`
	Meta        map[string]any `json:"_meta,omitempty"`
	Access      Access         `json:"-"`
}

// ResourceTemplate is a URI template (RFC 6570) of readable documents.
type ResourceTemplate struct {
	URITemplate string         `json:"uriTemplate"`
	Name        string         `json:"name"`
	Title       string         `json:"title,omitempty"`
	Description string         `json:"description,omitempty"`
	MIMEType    string         `json:"mimeType,omitempty"`
	Meta        map[string]any `json:"_meta,omitempty"`
	Access      Access         `json:"-"`
}

// ReadResourceRequest is a resolved resources/read.
type ReadResourceRequest struct {
	URI       string
	Client    ClientContext
	RequestID string
	// InputResponses and RequestState carry a multi-round-trip retry.
	InputResponses map[string]json.RawMessage
	RequestState   string
}

// ReadResourceResult holds the contents of a read.
type ReadResourceResult struct {
	Contents []ResourceContents `json:"contents"`
	Meta     map[string]any     `json:"_meta,omitempty"`

	// InputRequests, when non-empty, makes this an input_required result.
	InputRequests map[string]json.RawMessage `json:"-"`
	RequestState  string                     `json:"-"`
}

// ResourceContents is one text or blob content of a resource.
type ResourceContents struct {
	URI      string `json:"uri"`
	MIMEType string `json:"mimeType,omitempty"`
	Text     string `json:"text,omitempty"`
	Blob     []byte `json:"blob,omitempty"`
}

// Prompt is a prompt definition plus the access it requires.
type Prompt struct {
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	Arguments   []PromptArgument `json:"arguments,omitempty"`
	Meta        map[string]any   `json:"_meta,omitempty"`
	Access      Access           `json:"-"`
}

// PromptArgument describes one argument of a prompt.
type PromptArgument struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// GetPromptRequest is a resolved prompts/get.
type GetPromptRequest struct {
	Prompt    *Prompt
	Arguments map[string]string
	Client    ClientContext
	RequestID string
	// InputResponses and RequestState carry a multi-round-trip retry.
	InputResponses map[string]json.RawMessage
	RequestState   string
}

// GetPromptResult is a rendered prompt.
type GetPromptResult struct {
	Description string          `json:"description,omitempty"`
	Messages    []PromptMessage `json:"messages"`
	Meta        map[string]any  `json:"_meta,omitempty"`

	// InputRequests, when non-empty, makes this an input_required result.
	InputRequests map[string]json.RawMessage `json:"-"`
	RequestState  string                     `json:"-"`
}

// PromptMessage is one message of a rendered prompt.
type PromptMessage struct {
	Role    string  `json:"role"` // "user" or "assistant"
	Content Content `json:"content"`
}

// CompleteRequest is a completion/complete request.
type CompleteRequest struct {
	Ref      CompleteReference `json:"ref"`
	Argument struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	} `json:"argument"`
	Context *struct {
		Arguments map[string]string `json:"arguments,omitempty"`
	} `json:"context,omitempty"`
	Client    ClientContext `json:"-"`
	RequestID string        `json:"-"`
}

// CompleteReference names the prompt or resource template being completed.
type CompleteReference struct {
	Type string `json:"type"` // "ref/prompt" or "ref/resource"
	Name string `json:"name,omitempty"`
	URI  string `json:"uri,omitempty"`
}

// CompleteResult holds at most 100 suggestions.
type CompleteResult struct {
	Completion struct {
		Values  []string `json:"values"`
		Total   *int     `json:"total,omitempty"`
		HasMore bool     `json:"hasMore,omitempty"`
	} `json:"completion"`
}
