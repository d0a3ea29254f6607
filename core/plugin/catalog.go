package plugin

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/kobana/kadu/core/api/routeclass"
	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/mcp"
)

// The Catalog side of the Registry. Listings return the current snapshot's
// slices as they are, or the view of the bundles the caller's organisation
// sees (audience.go); the engine filters by access and never writes them;
// calls acquire the version serving the entry, so a call that starts on a
// version finishes on it whatever Reload does meanwhile.

// Tools implements mcp.Catalog: those of the bundles p's organisation
// sees.
func (r *Registry) Tools(ctx context.Context, p *auth.Principal) ([]mcp.Tool, error) {
	v, err := r.currentView(ctx, p)
	return v.tools, err
}

// Resources implements mcp.Catalog: those of the bundles p's organisation
// sees.
func (r *Registry) Resources(ctx context.Context, p *auth.Principal) ([]mcp.Resource, error) {
	v, err := r.currentView(ctx, p)
	return v.resources, err
}

// ResourceTemplates implements mcp.Catalog: those of the bundles p's organisation
// sees.
func (r *Registry) ResourceTemplates(ctx context.Context, p *auth.Principal) ([]mcp.ResourceTemplate, error) {
	v, err := r.currentView(ctx, p)
	return v.templates, err
}

// Prompts implements mcp.Catalog: those of the bundles p's organisation
// sees.
func (r *Registry) Prompts(ctx context.Context, p *auth.Principal) ([]mcp.Prompt, error) {
	v, err := r.currentView(ctx, p)
	return v.prompts, err
}

type toolCallParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// CallTool implements mcp.Catalog. Arguments are validated against the
// tool's inputSchema before the guest runs; a violation is an isError
// result naming each failing JSON pointer (docs/reference/mcp.md#order-of-checks rung 14: the model can
// correct its arguments). An unknown tool is -32602.
func (r *Registry) CallTool(ctx context.Context, p *auth.Principal, call *mcp.ToolCall) (*mcp.ToolResult, error) {
	name := call.Tool.Name
	w, err := r.callerViewer(ctx, p)
	if err != nil {
		return nil, err
	}
	var def *toolDef
	v, err := r.acquire(func(s *snapshot) *version {
		ref := s.tools[name]
		if ref.v == nil || !s.sees(ref.v, w) {
			return nil
		}
		def = ref.def
		return ref.v
	})
	if err != nil {
		return nil, err
	}
	if v == nil {
		return nil, mcp.InvalidParams("Unknown tool: %s", name)
	}
	defer v.release()
	args := call.Arguments
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	req := &request{p: p, op: opToolsCall, target: name, args: args,
		client: &call.Client, reqID: call.RequestID, replies: call.InputResponses, state: call.RequestState,
		class: toolClass(def.tool.Annotations)}
	// A retry's state before its arguments: a state the registry did not
	// seal is refused as such (ErrStateRefused), never answered as the
	// tool's error, so nothing takes it for a call that ran.
	if _, err := v.openState(req, v.reg.set.now()); err != nil {
		return nil, err
	}
	if err := def.schema.check(p.OrgID, args); err != nil {
		return &mcp.ToolResult{IsError: true, Content: []mcp.Content{
			mcp.Text(fmt.Sprintf("Invalid arguments for %s: %v. Fix them to match the tool's inputSchema and call again.", name, err)),
		}}, nil
	}
	if req.params, err = appendToolParams(make([]byte, 0, 32+len(name)+len(args)), name, args); err != nil {
		return nil, mcp.InvalidParams("Invalid arguments for %s: %v", name, err)
	}
	var res *mcp.ToolResult
	err = v.run(ctx, req, func(out []byte) error {
		res, err = decodeToolResult(v, req, def, out)
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// toolOutput is a tools/call output: a CallToolResult, or an
// input-required result. It is decoded once, whichever it is.
type toolOutput struct {
	ResultType        string            `json:"resultType"`
	Content           []json.RawMessage `json:"content"`
	StructuredContent json.RawMessage   `json:"structuredContent"`
	IsError           bool              `json:"isError"`
	inputRequired
}

// decodeToolResult checks a tools/call output. An input-required result
// goes through checkInputRequired. A CallToolResult has content blocks that
// are objects with a type, a structuredContent that is an object, and,
// when it is not an error, structuredContent that matches the
// outputSchema the tool declared. The blocks and structuredContent are
// passed on as the guest wrote them.
func decodeToolResult(v *version, req *request, def *toolDef, out []byte) (*mcp.ToolResult, error) {
	var tr toolOutput
	if !decodeToolOutputFast(out, &tr) {
		tr = toolOutput{}
		if err := json.Unmarshal(out, &tr); err != nil {
			return nil, v.faultf("tools/call output is not a CallToolResult: %v", err)
		}
	}
	switch tr.ResultType {
	case "", "complete":
	case resultInputRequired:
		reqs, sealed, err := v.checkInputRequired(req, &tr.inputRequired)
		return &mcp.ToolResult{InputRequests: reqs, RequestState: sealed}, err
	default:
		return nil, v.faultf("unknown resultType %q", tr.ResultType)
	}
	res := &mcp.ToolResult{IsError: tr.IsError, Content: make([]mcp.Content, 0, len(tr.Content))}
	for i, c := range tr.Content {
		// out is valid JSON (inst.call checked it), as each block is.
		if typ, ok := objectString(c, "type"); !ok || typ == "" {
			return nil, v.faultf("content[%d] is not a content block with a type", i)
		}
		res.Content = append(res.Content, c)
	}
	if sc := tr.StructuredContent; len(sc) > 0 && string(sc) != "null" {
		if sc[0] != '{' {
			return nil, v.faultf("structuredContent is not an object")
		}
		if def.output != nil && !tr.IsError {
			if err := def.output.check(req.p.OrgID, sc); err != nil {
				return nil, v.faultf("structuredContent does not match the tool's outputSchema: %v", err)
			}
		}
		res.StructuredContent = sc
	}
	return res, nil
}

// ReadResource implements mcp.Catalog: a fixed URI, else the first
// template that matches, routes the read to its bundle. A URI nobody
// serves, or that p may not see, is mcp.ErrResourceNotFound.
func (r *Registry) ReadResource(ctx context.Context, p *auth.Principal, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	w, err := r.callerViewer(ctx, p)
	if err != nil {
		return nil, err
	}
	var access mcp.Access
	v, err := r.acquire(func(s *snapshot) *version {
		v, acc := s.resolveURIFor(req.URI, w)
		access = acc
		return v
	})
	if err != nil {
		return nil, err
	}
	if v == nil {
		return nil, mcp.ErrResourceNotFound
	}
	defer v.release()
	if !p.Allows(access.MinRole, access.Scope) {
		return nil, mcp.ErrResourceNotFound
	}
	params, err := json.Marshal(map[string]string{"uri": req.URI})
	if err != nil {
		return nil, fmt.Errorf("encoding resources/read params: %w", err)
	}
	rq := &request{p: p, op: opReadResource, target: req.URI, params: params,
		client: &req.Client, reqID: req.RequestID, replies: req.InputResponses, state: req.RequestState,
		class: routeclass.Read}
	var res *mcp.ReadResourceResult
	err = v.run(ctx, rq, func(out []byte) error {
		reqs, sealed, ok, err := v.asInputRequired(rq, out)
		if err != nil || ok {
			res = &mcp.ReadResourceResult{InputRequests: reqs, RequestState: sealed}
			return err
		}
		var rr struct {
			Contents []mcp.ResourceContents `json:"contents"`
		}
		if err := json.Unmarshal(out, &rr); err != nil {
			return v.faultf("resources/read output is not {\"contents\":[…]}: %v", err)
		}
		for i, c := range rr.Contents {
			if c.URI == "" {
				return v.faultf("contents[%d] has no uri", i)
			}
		}
		res = &mcp.ReadResourceResult{Contents: rr.Contents}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

type promptParams struct {
	Name      string            `json:"name"`
	Arguments map[string]string `json:"arguments"`
}

// GetPrompt implements mcp.Catalog for a prompt the engine resolved.
func (r *Registry) GetPrompt(ctx context.Context, p *auth.Principal, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	name := req.Prompt.Name
	w, err := r.callerViewer(ctx, p)
	if err != nil {
		return nil, err
	}
	v, err := r.acquire(func(s *snapshot) *version {
		if v := s.prompts[name]; v != nil && s.sees(v, w) {
			return v
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if v == nil {
		return nil, mcp.ErrPromptNotFound
	}
	defer v.release()
	args := req.Arguments
	if args == nil {
		args = map[string]string{}
	}
	rawArgs, err := json.Marshal(args)
	if err != nil {
		return nil, fmt.Errorf("encoding prompt arguments: %w", err)
	}
	params, err := json.Marshal(promptParams{Name: name, Arguments: args})
	if err != nil {
		return nil, fmt.Errorf("encoding prompts/get params: %w", err)
	}
	rq := &request{p: p, op: opPromptsGet, target: name, args: rawArgs, params: params,
		client: &req.Client, reqID: req.RequestID, replies: req.InputResponses, state: req.RequestState,
		class: routeclass.Read}
	var res *mcp.GetPromptResult
	err = v.run(ctx, rq, func(out []byte) error {
		reqs, sealed, ok, err := v.asInputRequired(rq, out)
		if err != nil || ok {
			res = &mcp.GetPromptResult{InputRequests: reqs, RequestState: sealed}
			return err
		}
		var pr struct {
			Description string `json:"description"`
			Messages    []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(out, &pr); err != nil {
			return v.faultf("prompts/get output is not {\"messages\":[…]}: %v", err)
		}
		res = &mcp.GetPromptResult{Description: pr.Description, Messages: make([]mcp.PromptMessage, 0, len(pr.Messages))}
		for i, m := range pr.Messages {
			if (m.Role != "user" && m.Role != "assistant") || len(m.Content) == 0 || m.Content[0] != '{' {
				return v.faultf("messages[%d]: want a role of user or assistant and a content object", i)
			}
			res.Messages = append(res.Messages, mcp.PromptMessage{Role: m.Role, Content: m.Content})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

type completeParams struct {
	Ref      mcp.CompleteReference `json:"ref"`
	Argument struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	} `json:"argument"`
	Context *struct {
		Arguments map[string]string `json:"arguments,omitempty"`
	} `json:"context,omitempty"`
}

// Complete implements mcp.Catalog: the bundle owning the prompt or
// template answers, when its manifest says "completions": true. A ref
// nobody serves, or that p may not use, gets no suggestions.
func (r *Registry) Complete(ctx context.Context, p *auth.Principal, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	w, err := r.callerViewer(ctx, p)
	if err != nil {
		return nil, err
	}
	var access mcp.Access
	v, err := r.acquire(func(s *snapshot) *version {
		switch req.Ref.Type {
		case "ref/prompt":
			if v := s.prompts[req.Ref.Name]; v != nil && s.sees(v, w) {
				for _, pr := range v.man.prompts {
					if pr.Name == req.Ref.Name {
						access = pr.Access
					}
				}
				return v
			}
		case "ref/resource":
			for _, t := range s.templates {
				if t.def.entry.URITemplate == req.Ref.URI && s.sees(t.v, w) {
					access = t.def.entry.Access
					return t.v
				}
			}
			if res, ok := s.resources[req.Ref.URI]; ok && s.sees(res.v, w) {
				access = res.res.Access
				return res.v
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if v == nil {
		return &mcp.CompleteResult{}, nil
	}
	defer v.release()
	if !v.man.m.Completions || !p.Allows(access.MinRole, access.Scope) {
		return &mcp.CompleteResult{}, nil
	}
	cp := completeParams{Ref: req.Ref, Context: req.Context}
	cp.Argument.Name, cp.Argument.Value = req.Argument.Name, req.Argument.Value
	params, err := json.Marshal(cp)
	if err != nil {
		return nil, fmt.Errorf("encoding completion/complete params: %w", err)
	}
	target := req.Ref.Name + req.Ref.URI
	rq := &request{p: p, op: opComplete, target: target, params: params, client: &req.Client, reqID: req.RequestID,
		class: routeclass.Read}
	var res *mcp.CompleteResult
	err = v.run(ctx, rq, func(out []byte) error {
		var cr struct {
			mcp.CompleteResult
			ResultType string `json:"resultType"`
		}
		if err := json.Unmarshal(out, &cr); err != nil {
			return v.faultf("completion/complete output is not {\"completion\":{\"values\":[…]}}: %v", err)
		}
		if cr.ResultType != "" {
			return v.faultf("completion/complete cannot answer resultType %q", cr.ResultType)
		}
		res = &cr.CompleteResult
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}
