package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/mcp"
	"github.com/kobana/kadu/core/plugin/internal/stateseal"
)

func TestArgumentsValidatedBeforeTheGuest(t *testing.T) {
	tests := []struct {
		name      string
		args      string
		wantInMsg []string
	}{
		{name: "wrong type", args: `{"text":5}`, wantInMsg: []string{"/text:", "want string"}},
		{name: "missing required", args: `{}`, wantInMsg: []string{"(root):", "text"}},
		{name: "unknown member", args: `{"text":"a","colour":"red"}`, wantInMsg: []string{"(root):", "colour"}},
		{name: "too long", args: `{"text":"` + strings.Repeat("a", 65) + `"}`, wantInMsg: []string{"/text:", "64"}},
	}
	e := newEnv(t, nil, bundle(t, "echo"))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := e.call(t, "org_a", "echo", tt.args)
			if err != nil {
				t.Fatalf("CallTool = %v; an inputSchema violation is a tool error the model can fix (docs/reference/mcp.md#order-of-checks rung 14)", err)
			}
			msg := text(t, res)
			if !res.IsError || !strings.HasPrefix(msg, "Invalid arguments for echo: ") {
				t.Fatalf("result = %+v %q, want an isError result", res, msg)
			}
			for _, s := range tt.wantInMsg {
				if !strings.Contains(msg, s) {
					t.Errorf("message %q does not contain %q", msg, s)
				}
			}
		})
	}
	if st := e.statusOf(t, "echo"); st.Calls != 0 || st.Instances != 0 {
		t.Fatalf("invalid arguments entered the guest: %+v", st)
	}
}

func TestUnknownTool(t *testing.T) {
	e := newEnv(t, nil, bundle(t, "echo"))
	_, err := e.call(t, "org_a", "nope", `{}`)
	if !errors.Is(err, &mcp.Error{Code: mcp.CodeInvalidParams}) {
		t.Fatalf("unknown tool = %v, want -32602", err)
	}
}

func TestResourcesPromptsAndCompletions(t *testing.T) {
	noCompletions := bundle(t, "echo")
	noCompletions.Name = "quiet"
	noCompletions.Config = map[string]string{"bundle_name": "quiet", "tool_prefix": "quiet_", "completions": "false"}
	e := newEnv(t, nil, bundle(t, "echo"), noCompletions)
	ctx, p := context.Background(), principal("org_a")

	res, err := e.r.Resources(ctx, p)
	if err != nil || len(res) != 2 || res[0].URI != "test://echo/readme" || res[0].Access.Scope != auth.ScopeRead {
		t.Fatalf("Resources = %+v, %v", res, err)
	}
	tmpls, err := e.r.ResourceTemplates(ctx, p)
	if err != nil || len(tmpls) != 2 || tmpls[1].URITemplate != "test://quiet/items/{id}" {
		t.Fatalf("ResourceTemplates = %+v, %v", tmpls, err)
	}

	read := func(p *auth.Principal, uri string) (*mcp.ReadResourceResult, error) {
		return e.r.ReadResource(ctx, p, &mcp.ReadResourceRequest{URI: uri, Client: era2026(), RequestID: "req_test"})
	}
	for uri, want := range map[string]string{
		"test://echo/readme":     "read test://echo/readme at 1.0.0",
		"test://echo/items/42":   "read test://echo/items/42 at 1.0.0",
		"test://quiet/items/abc": "read test://quiet/items/abc at 1.0.0",
	} {
		got, err := read(p, uri)
		if err != nil || len(got.Contents) != 1 || got.Contents[0].Text != want || got.Contents[0].URI != uri {
			t.Errorf("ReadResource(%s) = %+v, %v; want %q", uri, got, err, want)
		}
	}
	for _, uri := range []string{"test://echo/nothing", "test://echo/items/", "test://echo/items/1/2"} {
		if _, err := read(p, uri); !errors.Is(err, mcp.ErrResourceNotFound) {
			t.Errorf("ReadResource(%s) = %v, want ErrResourceNotFound", uri, err)
		}
	}
	noScope := *p
	noScope.Scopes = nil
	if _, err := read(&noScope, "test://echo/readme"); !errors.Is(err, mcp.ErrResourceNotFound) {
		t.Errorf("a resource the caller may not see = %v, want ErrResourceNotFound", err)
	}

	prompts, err := e.r.Prompts(ctx, p)
	if err != nil || len(prompts) != 2 || prompts[0].Name != "greet" || !prompts[0].Arguments[0].Required {
		t.Fatalf("Prompts = %+v, %v", prompts, err)
	}
	got, err := e.r.GetPrompt(ctx, p, &mcp.GetPromptRequest{Prompt: &prompts[0], Arguments: map[string]string{"who": "Ana"}, Client: era2026()})
	if err != nil || len(got.Messages) != 1 || got.Messages[0].Role != "user" {
		t.Fatalf("GetPrompt = %+v, %v", got, err)
	}
	if b, _ := json.Marshal(got.Messages[0].Content); !strings.Contains(string(b), "Hello, Ana") {
		t.Fatalf("prompt content = %s", b)
	}

	complete := func(ref mcp.CompleteReference) []string {
		t.Helper()
		req := &mcp.CompleteRequest{Ref: ref, Client: era2026()}
		req.Argument.Name, req.Argument.Value = "who", "an"
		res, err := e.r.Complete(ctx, p, req)
		if err != nil {
			t.Fatalf("Complete(%+v): %v", ref, err)
		}
		return res.Completion.Values
	}
	want := []string{"an-1", "an-2"}
	if got := complete(mcp.CompleteReference{Type: "ref/prompt", Name: "greet"}); !reflect.DeepEqual(got, want) {
		t.Errorf("prompt completion = %v, want %v", got, want)
	}
	if got := complete(mcp.CompleteReference{Type: "ref/resource", URI: "test://echo/items/{id}"}); !reflect.DeepEqual(got, want) {
		t.Errorf("template completion = %v, want %v", got, want)
	}
	if got := complete(mcp.CompleteReference{Type: "ref/prompt", Name: "quiet_greet"}); len(got) != 0 {
		t.Errorf(`a bundle with "completions": false completed %v`, got)
	}
	if got := complete(mcp.CompleteReference{Type: "ref/prompt", Name: "unknown"}); len(got) != 0 {
		t.Errorf("an unknown prompt completed %v", got)
	}
}

func TestInputRequired(t *testing.T) {
	e := newEnv(t, nil, bundle(t, "input"))
	first := func(org, tool string, client mcp.ClientContext) (*mcp.ToolResult, error) {
		return e.callWith(t, org, &mcp.ToolCall{Tool: &mcp.Tool{Name: tool}, Arguments: json.RawMessage(`{"id":"x"}`), Client: client, RequestID: "req_1"})
	}
	res, err := first("org_a", "ask", era2026("elicitation"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.InputRequests) != 1 || res.RequestState == "" {
		t.Fatalf("first call = %+v, want input requests and a requestState", res)
	}
	var req struct {
		Method string `json:"method"`
	}
	json.Unmarshal(res.InputRequests["colour"], &req)
	if req.Method != "elicitation/create" || strings.Contains(res.RequestState, "step") {
		t.Fatalf("input request %s, requestState %q", res.InputRequests["colour"], res.RequestState)
	}
	state := res.RequestState
	reply := map[string]json.RawMessage{"colour": json.RawMessage(`{"action":"accept","content":{"colour":"blue"}}`)}
	retry := func(org, sealed, args string) (*mcp.ToolResult, error) {
		return e.callWith(t, org, &mcp.ToolCall{Tool: &mcp.Tool{Name: "ask"}, Arguments: json.RawMessage(args),
			Client: era2026("elicitation"), RequestID: "req_2", InputResponses: reply, RequestState: sealed})
	}
	res, err = retry("org_a", state, `{"id":"x"}`)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		State     map[string]any `json:"state"`
		Responses map[string]any `json:"responses"`
	}
	if err := json.Unmarshal(res.StructuredContent, &got); err != nil {
		t.Fatal(err)
	}
	if got.State["step"] != float64(1) || got.Responses["colour"].(map[string]any)["action"] != "accept" {
		t.Fatalf("retry handed the guest state %v and responses %v", got.State, got.Responses)
	}

	badState := func(name, org, sealed, args string) {
		t.Run(name, func(t *testing.T) {
			_, err := retry(org, sealed, args)
			var rpc *mcp.Error
			if !errors.As(err, &rpc) || rpc.Code != mcp.CodeInvalidParams || rpc.Message != "Invalid or expired requestState" {
				t.Fatalf("retry = %v, want -32602 Invalid or expired requestState", err)
			}
		})
	}
	badState("tampered", "org_a", flip(state), `{"id":"x"}`)
	badState("another organisation", "org_b", state, `{"id":"x"}`)
	badState("other arguments", "org_a", state, `{"id":"y"}`)
	e.clock.Advance(stateseal.TTL)
	badState("expired", "org_a", state, `{"id":"x"}`)

	t.Run("capability not declared", func(t *testing.T) {
		tests := []struct {
			name   string
			tool   string
			client mcp.ClientContext
			want   string
		}{
			{name: "no elicitation", tool: "ask", client: era2026("sampling"), want: "elicitation"},
			{name: "no sampling", tool: "ask_sampling", client: era2026("elicitation"), want: "sampling"},
			{name: "era 2025", tool: "ask", client: mcp.ClientContext{ProtocolVersion: "2025-06-18", Era: mcp.Era2025}, want: "elicitation"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, err := first("org_a", tt.tool, tt.client)
				var rpc *mcp.Error
				if !errors.As(err, &rpc) || rpc.Code != mcp.CodeMissingCapability {
					t.Fatalf("call = %v, want -32021", err)
				}
				data, _ := json.Marshal(rpc.Data)
				if !strings.Contains(string(data), `"requiredCapabilities":{"`+tt.want+`":{}}`) {
					t.Fatalf("data = %s, want requiredCapabilities.%s", data, tt.want)
				}
			})
		}
	})
}
