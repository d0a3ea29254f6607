package mcp

import (
	"encoding/json"
	"slices"

	"github.com/kobana/kadu/core/audit"
)

type listToolsResult struct {
	Tools      []Tool `json:"tools"`
	NextCursor string `json:"nextCursor,omitempty"`
	decorations
}

// listTools answers tools/list with the tools the caller can run: role and
// scopes both allow them (docs/reference/mcp.md#tools).
func (e *Engine) listTools(x *exchange) (decorable, *Error) {
	items, next, err := listing(e, x, e.catalog.Tools, func(t Tool) Access { return t.Access })
	if err != nil {
		return nil, err
	}
	return &listToolsResult{Tools: items, NextCursor: next}, nil
}

// resolveTool finds name among the tools the caller's role allows. A tool
// the role forbids is unknown: its existence never leaks.
func (e *Engine) resolveTool(x *exchange, name string) (*Tool, *Error) {
	all, err := e.catalog.Tools(x.r.Context(), x.principal)
	if err != nil {
		return nil, e.internal(x, err)
	}
	i := slices.IndexFunc(all, func(t Tool) bool { return t.Name == name })
	if i < 0 || !x.principal.Role.AtLeast(all[i].Access.MinRole) {
		return nil, InvalidParams("Unknown tool: %s", name)
	}
	x.toolKnown = true
	return &all[i], nil
}

type callToolResult struct {
	Content           []Content       `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError,omitempty"`
	decorations
}

// inputRequiredResult asks the client for input before the call can finish
// (era 2026 multi round-trip requests).
type inputRequiredResult struct {
	InputRequests map[string]json.RawMessage `json:"inputRequests"`
	RequestState  string                     `json:"requestState,omitempty"`
	decorations
}

// callTool answers tools/call, applying rungs 9–14 of docs/reference/mcp.md#order-of-checks in order.
func (e *Engine) callTool(x *exchange) (decorable, *Error) {
	// Rung 9: params.
	var p struct {
		Name      *string         `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		mrtrParams
	}
	if err := decodeParams(x, &p); err != nil {
		return nil, err
	}
	if p.Name == nil {
		return nil, InvalidParams("Invalid params: name is required and must be a string")
	}
	x.tool = *p.Name
	tool, rerr := e.resolveTool(x, *p.Name)
	if rerr != nil {
		return nil, rerr
	}
	x.metricName = tool.Name
	// The tool's writes are recorded as this call's (core/audit).
	x.r = x.r.WithContext(audit.WithCall(x.r.Context(), audit.Call{Tool: tool.Name}))
	args := p.Arguments
	if args == nil || string(args) == "null" {
		args = json.RawMessage("{}")
	} else if args[0] != '{' {
		return nil, InvalidParams("Invalid params: arguments must be an object")
	}
	// Rung 10: the organisation's rate limit.
	if !e.rungOrgLimit(x) {
		return nil, errAnswered
	}
	// Rung 11: scope, with a step-up challenge the client can act on.
	if s := tool.Access.Scope; s != "" && !x.principal.HasScope(s) {
		e.writeChallenge(x, e.authn.InsufficientScope(x.r, x.principal, s))
		return nil, errAnswered
	}
	// Rung 12: client capabilities the tool's input requests need.
	if missing := missingCapabilities(&x.client, tool.RequiresCapabilities); len(missing) > 0 {
		return nil, MissingCapability(missing...)
	}
	// Rung 13: Mcp-Param-* mirrors of x-mcp-header parameters (era 2026).
	if x.client.Era == Era2026 {
		if err := checkParamHeaders(x.r.Header, tool.HeaderParams, args); err != nil {
			return nil, err
		}
	}
	// Rung 14: dispatch.
	call := &ToolCall{Tool: tool, Arguments: args, Client: x.client, InputResponses: p.InputResponses, RequestState: p.state(), RequestID: x.requestID}
	res, err := e.catalog.CallTool(x.r.Context(), x.principal, call)
	if err != nil {
		return nil, e.internal(x, err)
	}
	return e.toolResult(x, res)
}

func (e *Engine) toolResult(x *exchange, res *ToolResult) (decorable, *Error) {
	if len(res.InputRequests) > 0 {
		return e.inputRequired(x, res.InputRequests, res.RequestState, res.Meta)
	}
	out := &callToolResult{Content: res.Content, StructuredContent: res.StructuredContent, IsError: res.IsError}
	x.toolError = res.IsError
	out.Meta = res.Meta
	if out.Content == nil {
		out.Content = []Content{}
	}
	return out, nil
}

// inputRequired turns a catalog's input requests into an input_required
// result (era 2026), after checking the client declared every capability
// they need: a server never sends a request the client cannot answer.
// Era-2025 clients cannot answer input requests at all: -32021.
func (e *Engine) inputRequired(x *exchange, reqs map[string]json.RawMessage, state string, meta map[string]any) (decorable, *Error) {
	need := requiredForInput(reqs)
	if missing := missingCapabilities(&x.client, need); len(missing) > 0 {
		return nil, MissingCapability(missing...)
	}
	if x.client.Era != Era2026 {
		return nil, MissingCapability(need...) // era 2025 has no way to answer
	}
	out := &inputRequiredResult{InputRequests: reqs, RequestState: state}
	x.inputRequired = true
	out.ResultType, out.Meta = "input_required", meta
	return out, nil
}

// mrtrParams are the retry members of a multi-round-trip request.
type mrtrParams struct {
	InputResponses map[string]json.RawMessage `json:"inputResponses"`
	RequestState   *string                    `json:"requestState"`
}

func (p *mrtrParams) state() string {
	if p.RequestState == nil {
		return ""
	}
	return *p.RequestState
}

// capabilityFor maps an input request's method to the client capability
// that allows it.
var capabilityFor = map[string]string{
	"elicitation/create":     "elicitation",
	"sampling/createMessage": "sampling",
	"roots/list":             "roots",
}

func requiredForInput(reqs map[string]json.RawMessage) []string {
	var out []string
	for _, raw := range reqs {
		var r struct {
			Method string `json:"method"`
		}
		if json.Unmarshal(raw, &r) == nil {
			if c, ok := capabilityFor[r.Method]; ok && !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
	}
	slices.Sort(out)
	return out
}

// missingCapabilities returns the capabilities in need the client did not
// declare. Era-2025 clients declare none per request, so they miss all.
func missingCapabilities(c *ClientContext, need []string) []string {
	var out []string
	for _, n := range need {
		if c.Era != Era2026 || !c.HasCapability(n) {
			out = append(out, n)
		}
	}
	return out
}
