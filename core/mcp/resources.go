package mcp

import (
	"encoding/json"
	"errors"
)

type listResourcesResult struct {
	Resources  []Resource `json:"resources"`
	NextCursor string     `json:"nextCursor,omitempty"`
	decorations
}

func (e *Engine) listResources(x *exchange) (decorable, *Error) {
	items, next, err := listing(e, x, e.catalog.Resources, func(r Resource) Access { return r.Access })
	if err != nil {
		return nil, err
	}
	return &listResourcesResult{Resources: items, NextCursor: next}, nil
}

type listResourceTemplatesResult struct {
	ResourceTemplates []ResourceTemplate `json:"resourceTemplates"`
	NextCursor        string             `json:"nextCursor,omitempty"`
	decorations
}

func (e *Engine) listResourceTemplates(x *exchange) (decorable, *Error) {
	items, next, err := listing(e, x, e.catalog.ResourceTemplates, func(r ResourceTemplate) Access { return r.Access })
	if err != nil {
		return nil, err
	}
	return &listResourceTemplatesResult{ResourceTemplates: items, NextCursor: next}, nil
}

type readResourceResult struct {
	Contents []ResourceContents `json:"contents"`
	decorations
}

// readResource answers resources/read. Not found — including another
// organisation's document — is -32602 in era 2026 and -32002 in era 2025,
// both with data.uri.
func (e *Engine) readResource(x *exchange) (decorable, *Error) {
	var p struct {
		URI *string `json:"uri"`
		mrtrParams
	}
	if err := decodeParams(x, &p); err != nil {
		return nil, err
	}
	if p.URI == nil {
		return nil, InvalidParams("Invalid params: uri is required and must be a string")
	}
	x.resourceURI = *p.URI
	if !e.rungOrgLimit(x) {
		return nil, errAnswered
	}
	res, err := e.catalog.ReadResource(x.r.Context(), x.principal, &ReadResourceRequest{
		URI: *p.URI, Client: x.client, RequestID: x.requestID, InputResponses: p.InputResponses, RequestState: p.state(),
	})
	if errors.Is(err, ErrResourceNotFound) {
		code := int64(CodeInvalidParams)
		if x.client.Era == Era2025 {
			code = CodeResourceNotFound
		}
		return nil, &Error{Code: code, Message: "Resource not found", Data: map[string]string{"uri": *p.URI}}
	}
	if err != nil {
		return nil, e.internal(x, err)
	}
	if len(res.InputRequests) > 0 {
		return e.inputRequired(x, res.InputRequests, res.RequestState, res.Meta)
	}
	out := &readResourceResult{Contents: res.Contents}
	if out.Contents == nil {
		out.Contents = []ResourceContents{}
	}
	out.Meta = res.Meta
	return out, nil
}

type listPromptsResult struct {
	Prompts    []Prompt `json:"prompts"`
	NextCursor string   `json:"nextCursor,omitempty"`
	decorations
}

func (e *Engine) listPrompts(x *exchange) (decorable, *Error) {
	items, next, err := listing(e, x, e.catalog.Prompts, func(p Prompt) Access { return p.Access })
	if err != nil {
		return nil, err
	}
	return &listPromptsResult{Prompts: items, NextCursor: next}, nil
}

type getPromptResult struct {
	Description string          `json:"description,omitempty"`
	Messages    []PromptMessage `json:"messages"`
	decorations
}

// getPrompt answers prompts/get. A prompt the caller may not use is unknown.
func (e *Engine) getPrompt(x *exchange) (decorable, *Error) {
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
	all, err := e.catalog.Prompts(x.r.Context(), x.principal)
	if err != nil {
		return nil, e.internal(x, err)
	}
	var prompt *Prompt
	for i := range all {
		if all[i].Name == *p.Name && x.principal.Allows(all[i].Access.MinRole, all[i].Access.Scope) {
			prompt = &all[i]
			break
		}
	}
	if prompt == nil {
		return nil, InvalidParams("Unknown prompt: %s", *p.Name)
	}
	x.metricName = prompt.Name
	var args map[string]string
	if p.Arguments != nil && string(p.Arguments) != "null" {
		if json.Unmarshal(p.Arguments, &args) != nil {
			return nil, InvalidParams("Invalid params: arguments must be an object of strings")
		}
	}
	for _, a := range prompt.Arguments {
		if _, ok := args[a.Name]; a.Required && !ok {
			return nil, InvalidParams("Invalid params: argument %q of prompt %s is required", a.Name, prompt.Name)
		}
	}
	if !e.rungOrgLimit(x) {
		return nil, errAnswered
	}
	res, cerr := e.catalog.GetPrompt(x.r.Context(), x.principal, &GetPromptRequest{
		Prompt: prompt, Arguments: args, Client: x.client, RequestID: x.requestID, InputResponses: p.InputResponses, RequestState: p.state(),
	})
	if cerr != nil {
		return nil, e.internal(x, cerr)
	}
	if len(res.InputRequests) > 0 {
		return e.inputRequired(x, res.InputRequests, res.RequestState, res.Meta)
	}
	out := &getPromptResult{Description: res.Description, Messages: res.Messages}
	if out.Messages == nil {
		out.Messages = []PromptMessage{}
	}
	out.Meta = res.Meta
	return out, nil
}

type completeResult struct {
	*CompleteResult
	decorations
}

// complete answers completion/complete with at most 100 values.
func (e *Engine) complete(x *exchange) (decorable, *Error) {
	req := &CompleteRequest{}
	if err := decodeParams(x, req); err != nil {
		return nil, err
	}
	switch req.Ref.Type {
	case "ref/prompt":
		if req.Ref.Name == "" {
			return nil, InvalidParams("Invalid params: ref.name is required for ref/prompt")
		}
	case "ref/resource":
		if req.Ref.URI == "" {
			return nil, InvalidParams("Invalid params: ref.uri is required for ref/resource")
		}
	default:
		return nil, InvalidParams(`Invalid params: ref.type must be "ref/prompt" or "ref/resource"`)
	}
	if req.Argument.Name == "" {
		return nil, InvalidParams("Invalid params: argument.name is required")
	}
	if !e.rungOrgLimit(x) {
		return nil, errAnswered
	}
	req.Client, req.RequestID = x.client, x.requestID
	res, err := e.catalog.Complete(x.r.Context(), x.principal, req)
	if err != nil {
		return nil, e.internal(x, err)
	}
	c := &res.Completion
	if c.Values == nil {
		c.Values = []string{}
	}
	if len(c.Values) > 100 {
		total := len(c.Values)
		if c.Total == nil || *c.Total < total {
			c.Total = &total
		}
		c.Values, c.HasMore = c.Values[:100], true
	}
	return &completeResult{CompleteResult: res}, nil
}
