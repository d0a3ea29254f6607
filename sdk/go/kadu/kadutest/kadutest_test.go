package kadutest_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/kobana/kadu/sdk/go/kadu"
	"github.com/kobana/kadu/sdk/go/kadu/internal/fixture"
	"github.com/kobana/kadu/sdk/go/kadu/kadutest"
)

// The fixture is registered natively here, and built as wasm from
// ../internal/fixture/wasm: every test runs on both and expects the same.
func init() { kadu.Register(fixture.Bundle, fixture.Features...) }

// fakeAPI answers the routes the fixture calls.
func fakeAPI() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/tasks/{id}", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("id") == "tsk_missing" {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"status":404,"errors":[{"code":"not_found","title":"Not found","detail":"Task tsk_missing was not found in your organisation.","param":null,"hint":"Check the id."}],"request_id":"req_1"}` + "\n"))
			return
		}
		_, _ = w.Write([]byte(`{"id":"` + r.PathValue("id") + `","name":"Daily"}` + "\n"))
	})
	mux.HandleFunc("GET /api/v1/executions", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"data":[],"meta":{"next_cursor":null,"limit":20}}` + "\n"))
	})
	mux.HandleFunc("POST /api/v1/tasks/{id}/run", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write([]byte(`{"id":"exe_1","status":"queued"}` + "\n"))
	})
	mux.HandleFunc("GET /api/v1/usage", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"status":503,"errors":[{"code":"unavailable"}],"request_id":"req_503"}`))
	})
	return mux
}

// both runs f on the fixture loaded natively and as wasm, each with a host
// that newHost configures.
func both(t *testing.T, newHost func() *kadutest.Host, f func(t *testing.T, b *kadutest.Bundle, h *kadutest.Host)) {
	t.Helper()
	if newHost == nil {
		newHost = func() *kadutest.Host { return &kadutest.Host{API: fakeAPI()} }
	}
	t.Run("native", func(t *testing.T) {
		h := newHost()
		f(t, kadutest.Native(t, h), h)
	})
	t.Run("wasm", func(t *testing.T) {
		path := kadutest.BuildWasm(t, "../internal/fixture/wasm")
		h := newHost()
		f(t, kadutest.Wasm(t, path, h), h)
	})
}

func TestManifestDescribesEveryFeature(t *testing.T) {
	both(t, nil, func(t *testing.T, b *kadutest.Bundle, _ *kadutest.Host) {
		m := b.Manifest()
		if m.ABI != "kadu/v1" || m.Name != "fixture" || m.Version != "0.1.0-test" {
			t.Errorf("manifest header = %q %q %q", m.ABI, m.Name, m.Version)
		}
		for _, name := range []string{"fx_task_get", "fx_executions_list", "fx_task_run", "fx_echo", "fx_confirm_name"} {
			if m.Tool(name) == nil {
				t.Errorf("tool %s missing; have %v", name, m.ToolNames())
			}
		}
		run := m.Tool("fx_task_run")
		if a := run.Annotations; !*a.DestructiveHint || *a.ReadOnlyHint || *a.IdempotentHint || a.OpenWorldHint == nil || *a.OpenWorldHint {
			t.Errorf("fx_task_run annotations = %+v; want destructive only, openWorldHint false", a)
		}
		if run.Access.MinRole != "member" || run.Access.Scope != "run" {
			t.Errorf("fx_task_run access = %+v", run.Access)
		}
		wantRoutes := []string{"GET /api/v1/tasks/{id}", "GET /api/v1/executions", "POST /api/v1/tasks/{id}/run", "GET /api/v1/usage"}
		if !slices.Equal(m.Routes, wantRoutes) {
			t.Errorf("routes = %v; want %v", m.Routes, wantRoutes)
		}
		if !m.Completions || len(m.Resources) != 1 || len(m.ResourceTemplates) != 1 || len(m.Prompts) != 1 {
			t.Errorf("completions %v, %d resources, %d templates, %d prompts", m.Completions, len(m.Resources), len(m.ResourceTemplates), len(m.Prompts))
		}
		var schema map[string]any
		_ = json.Unmarshal(m.Tool("fx_echo").InputSchema, &schema)
		if schema["additionalProperties"] != false {
			t.Errorf("fx_echo inputSchema = %s; want additionalProperties false", m.Tool("fx_echo").InputSchema)
		}
	})
}

func TestToolOutputIsTextAndStructuredContent(t *testing.T) {
	both(t, nil, func(t *testing.T, b *kadutest.Bundle, _ *kadutest.Host) {
		res := b.CallTool(t, "fx_echo", map[string]any{"text": "<olá>"})
		want := `{"text":"<olá>","org":"org_test"}`
		if res.IsError || res.Text() != want || string(res.StructuredContent) != want {
			t.Errorf("fx_echo = %+v; want text and structuredContent %s", res, want)
		}
	})
}

func TestRouteToolsCarryArgumentsToTheRoute(t *testing.T) {
	tests := []struct {
		name       string
		tool       string
		args       map[string]any
		wantMethod string
		wantPath   string
		wantBody   string
		wantText   string
		structured bool
	}{
		{
			name: "path parameter", tool: "fx_task_get", args: map[string]any{"id": "tsk_1"},
			wantMethod: "GET", wantPath: "/api/v1/tasks/tsk_1",
			wantText: `{"id":"tsk_1","name":"Daily"}`, structured: true,
		},
		{
			name: "path parameter escaped", tool: "fx_task_get", args: map[string]any{"id": "a b/c?"},
			wantMethod: "GET", wantPath: "/api/v1/tasks/a%20b%2Fc%3F",
			wantText: `{"id":"a b/c?","name":"Daily"}`, structured: true,
		},
		{
			name: "query parameters encoded, sorted, null left out", tool: "fx_executions_list",
			args:       map[string]any{"status": "failed", "limit": 10, "created_after": "2026-01-01T00:00:00+03:00", "cursor": nil},
			wantMethod: "GET", wantPath: "/api/v1/executions?created_after=2026-01-01T00%3A00%3A00%2B03%3A00&limit=10&status=failed",
			wantText: `{"data":[],"meta":{"next_cursor":null,"limit":20}}`, structured: true,
		},
		{
			name: "body fields and idempotency_key", tool: "fx_task_run",
			args:       map[string]any{"id": "tsk_1", "input": map[string]any{"b": 2, "a": "x"}, "idempotency_key": "k-1"},
			wantMethod: "POST", wantPath: "/api/v1/tasks/tsk_1/run", wantBody: `{"idempotency_key":"k-1","input":{"a":"x","b":2}}`,
			wantText: `{"id":"exe_1","status":"queued"}`,
		},
		{
			name: "no body when only the path parameter is given", tool: "fx_task_run", args: map[string]any{"id": "tsk_1"},
			wantMethod: "POST", wantPath: "/api/v1/tasks/tsk_1/run",
			wantText: `{"id":"exe_1","status":"queued"}`,
		},
	}
	both(t, nil, func(t *testing.T, b *kadutest.Bundle, h *kadutest.Host) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				h.Reset()
				res := b.CallTool(t, tt.tool, tt.args)
				reqs := h.Requests()
				if len(reqs) != 1 {
					t.Fatalf("requests = %+v; want one", reqs)
				}
				r := reqs[0]
				if r.Method != tt.wantMethod || r.Path != tt.wantPath || string(r.Body) != tt.wantBody {
					t.Errorf("request = %s %s %s; want %s %s %s", r.Method, r.Path, r.Body, tt.wantMethod, tt.wantPath, tt.wantBody)
				}
				if res.IsError || res.Text() != tt.wantText {
					t.Errorf("result = %q (isError %v); want %q", res.Text(), res.IsError, tt.wantText)
				}
				if got := len(res.StructuredContent) > 0; got != tt.structured {
					t.Errorf("structuredContent = %s; want present %v", res.StructuredContent, tt.structured)
				}
			})
		}
	})
}

func TestErrorsReachTheModelAsTheRightTier(t *testing.T) {
	tests := []struct {
		name        string
		tool        string
		args        map[string]any
		wantStatus  int32
		wantIsError bool
		wantText    string // substring of the result text, or of the status-1 message
		wantFault   bool
	}{
		{name: "API 4xx is the API's error JSON", tool: "fx_task_get", args: map[string]any{"id": "tsk_missing"},
			wantIsError: true, wantText: `{"status":404,"errors":[{"code":"not_found"`},
		{name: "API 5xx asks to try again", tool: "fx_usage", args: map[string]any{},
			wantIsError: true, wantText: "HTTP 503, request_id req_503). Nothing says the request was wrong: try again"},
		{name: "route outside the manifest", tool: "fx_forbidden", args: map[string]any{},
			wantIsError: true, wantText: `"code":"route_not_granted"`},
		{name: "ToolError", tool: "fx_fail", args: map[string]any{"kind": "tool"},
			wantIsError: true, wantText: "Nothing to do: the task is already archived."},
		{name: "APIError returned by the handler, body trimmed", tool: "fx_fail", args: map[string]any{"kind": "api4xx"},
			wantIsError: true, wantText: `"hint":"Do not retry."}],"request_id":"req_9"}`},
		{name: "plain error", tool: "fx_fail", args: map[string]any{"kind": "plain"},
			wantIsError: true, wantText: "plain failure"},
		{name: "arguments that do not fit In", tool: "fx_echo", args: map[string]any{"text": 5},
			wantIsError: true, wantText: "The arguments do not fit this tool"},
		{name: "RPCError is status 1", tool: "fx_fail", args: map[string]any{"kind": "rpc"},
			wantStatus: 1, wantText: `{"code":-32602,"message":"Unknown thing","data":{"thing":"x"}}`},
		{name: "unknown tool", tool: "fx_nope", args: map[string]any{},
			wantStatus: 1, wantText: `{"code":-32602,"message":"Unknown tool: fx_nope"}`},
		{name: "input request with a bad method is a bug", tool: "fx_fail", args: map[string]any{"kind": "input_bad_method"},
			wantStatus: 2, wantFault: true},
		{name: "panic is a fault", tool: "fx_panic", args: map[string]any{},
			wantStatus: 2, wantFault: true},
	}
	both(t, nil, func(t *testing.T, b *kadutest.Bundle, _ *kadutest.Host) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				out := b.Invoke(t, kadutest.Invocation{Op: "tools/call", Params: map[string]any{"name": tt.tool, "arguments": tt.args}})
				if out.Status != tt.wantStatus || (out.Fault != "") != tt.wantFault {
					t.Fatalf("status %d, fault %q; want %d, fault %v (output %s)", out.Status, out.Fault, tt.wantStatus, tt.wantFault, out.Output)
				}
				switch {
				case tt.wantFault:
					return
				case tt.wantStatus == 1:
					if string(out.Output) != tt.wantText {
						t.Errorf("output = %s; want %s", out.Output, tt.wantText)
					}
					return
				}
				var res kadutest.ToolResult
				if err := json.Unmarshal(out.Output, &res); err != nil {
					t.Fatal(err)
				}
				if res.IsError != tt.wantIsError || !strings.Contains(res.Text(), tt.wantText) {
					t.Errorf("result = %q (isError %v); want isError %v containing %q", res.Text(), res.IsError, tt.wantIsError, tt.wantText)
				}
			})
		}
	})
}

func TestPanicIsLoggedAndTheNextCallWorks(t *testing.T) {
	both(t, nil, func(t *testing.T, b *kadutest.Bundle, h *kadutest.Host) {
		out := b.Invoke(t, kadutest.Invocation{Op: "tools/call", Params: map[string]any{"name": "fx_panic", "arguments": map[string]any{}}})
		if out.Status != 2 {
			t.Fatalf("status = %d; want 2", out.Status)
		}
		logged := false
		for _, l := range h.Logs() {
			logged = logged || (l.Level == 3 && strings.Contains(l.Message, "panic: boom") && strings.Contains(l.Message, "goroutine"))
		}
		if !logged {
			t.Errorf("logs = %v; want the panic with its stack at level error", h.Logs())
		}
		if res := b.CallTool(t, "fx_echo", map[string]any{"text": "again"}); res.IsError {
			t.Errorf("call after the panic = %+v", res)
		}
	})
}

func TestCallerAndConfigOfAnySize(t *testing.T) {
	long := strings.Repeat("g", 300) // past the SDK's first buffers
	scopes := []string{"kadu.admin", "kadu.read", "kadu.run", "kadu.write", "x." + strings.Repeat("s", 300)}
	caller := kadu.Caller{OrgID: "org_9", UserID: "u", Role: kadu.RoleOwner, Scopes: scopes, RequestID: "req_2",
		Client: &kadu.ClientInfo{Name: "claude", Version: "1"}}
	newHost := func() *kadutest.Host {
		return &kadutest.Host{API: fakeAPI(), Caller: &caller, Config: map[string]string{"greeting": long}}
	}
	both(t, newHost, func(t *testing.T, b *kadutest.Bundle, _ *kadutest.Host) {
		res := b.CallTool(t, "fx_caller", map[string]any{})
		var got kadu.Caller
		if err := json.Unmarshal([]byte(res.Text()), &got); err != nil {
			t.Fatal(err)
		}
		if got.OrgID != "org_9" || got.Role != kadu.RoleOwner || !slices.Equal(got.Scopes, scopes) || got.Client == nil || got.Client.Name != "claude" {
			t.Errorf("caller = %+v", got)
		}
		if res := b.CallTool(t, "fx_config", map[string]any{}); res.Text() != long {
			t.Errorf("config = %q; want the 300-byte greeting", res.Text())
		}
	})
	both(t, nil, func(t *testing.T, b *kadutest.Bundle, _ *kadutest.Host) {
		if res := b.CallTool(t, "fx_config", map[string]any{}); res.Text() != "no greeting" {
			t.Errorf("config without a value = %q", res.Text())
		}
	})
}

func TestLogLevelsAndAttributes(t *testing.T) {
	both(t, nil, func(t *testing.T, b *kadutest.Bundle, h *kadutest.Host) {
		b.CallTool(t, "fx_log", map[string]any{})
		want := []kadutest.LogEntry{
			{Level: 0, Message: "debugging n=1"},
			{Level: 1, Message: "informing"},
			{Level: 2, Message: `warning task_id=tsk_1 why="two words"`},
			{Level: 3, Message: "failing"},
		}
		if got := h.Logs(); !slices.Equal(got, want) {
			t.Errorf("logs = %q; want %q", got, want)
		}
	})
}

func TestOutputOverTheCapFaults(t *testing.T) {
	newHost := func() *kadutest.Host { return &kadutest.Host{OutputCap: 1000} }
	both(t, newHost, func(t *testing.T, b *kadutest.Bundle, h *kadutest.Host) {
		if res := b.CallTool(t, "fx_big", map[string]any{"bytes": 10}); res.Text() != "xxxxxxxxxx" {
			t.Errorf("small output = %q", res.Text())
		}
		out := b.Invoke(t, kadutest.Invocation{Op: "tools/call", Params: map[string]any{"name": "fx_big", "arguments": map[string]any{"bytes": 2000}}})
		if out.Fault != "output too large" {
			t.Errorf("outcome = %+v; want the fault output too large", out)
		}
		if logs := h.Logs(); len(logs) == 0 || !strings.Contains(logs[len(logs)-1].Message, "over this bundle's output cap") {
			t.Errorf("logs = %v; want the SDK to say the output was over the cap", logs)
		}
	})
}

func TestInputRequiredRoundTrip(t *testing.T) {
	both(t, nil, func(t *testing.T, b *kadutest.Bundle, _ *kadutest.Host) {
		first := b.CallTool(t, "fx_confirm_name", map[string]any{})
		if first.ResultType != "input_required" || string(first.State) != `{"step":2}` {
			t.Fatalf("first call = %+v; want input_required with state", first)
		}
		var reqs map[string]struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		raw, _ := json.Marshal(first.InputRequests)
		_ = json.Unmarshal(raw, &reqs)
		if reqs["name"].Method != "elicitation/create" || !strings.Contains(string(reqs["name"].Params), `"mode":"form"`) ||
			reqs["root"].Method != "roots/list" || string(reqs["root"].Params) != "{}" {
			t.Errorf("inputRequests = %s", raw)
		}
		retry := b.Invoke(t, kadutest.Invocation{
			Op:             "tools/call",
			Params:         map[string]any{"name": "fx_confirm_name", "arguments": map[string]any{}},
			State:          first.State,
			InputResponses: map[string]json.RawMessage{"name": json.RawMessage(`{"action":"accept","content":{"name":"Ana"}}`)},
		})
		var res kadutest.ToolResult
		_ = json.Unmarshal(retry.Output, &res)
		if retry.Status != 0 || res.Text() != "name=Ana step=2" {
			t.Errorf("retry = %+v; want name=Ana step=2", retry)
		}
		noElicit := b.Invoke(t, kadutest.Invocation{
			Op:     "tools/call",
			Params: map[string]any{"name": "fx_confirm_name", "arguments": map[string]any{}},
			Client: &kadu.Client{ProtocolVersion: "2025-06-18"},
		})
		_ = json.Unmarshal(noElicit.Output, &res)
		if !res.IsError || !strings.Contains(res.Text(), "cannot answer questions") {
			t.Errorf("era-2025 client = %s; want a tool error offering another way", noElicit.Output)
		}
	})
}

func TestResources(t *testing.T) {
	tests := []struct {
		name       string
		uri        string
		wantStatus int32
		wantOutput string
	}{
		{name: "fixed", uri: "fixture://hello", wantOutput: `{"contents":[{"uri":"fixture://hello","mimeType":"text/plain","text":"hello"}]}`},
		{name: "template mirrors its route", uri: "fixture://tasks/tsk_1",
			wantOutput: `{"contents":[{"uri":"fixture://tasks/tsk_1","mimeType":"application/json","text":"{\"id\":\"tsk_1\",\"name\":\"Daily\"}"}]}`},
		{name: "template, API 404", uri: "fixture://tasks/tsk_missing", wantStatus: 1,
			wantOutput: `{"code":-32602,"message":"Resource not found","data":{"uri":"fixture://tasks/tsk_missing"}}`},
		{name: "no such resource", uri: "fixture://nope/x", wantStatus: 1,
			wantOutput: `{"code":-32602,"message":"Resource not found","data":{"uri":"fixture://nope/x"}}`},
		{name: "template variable cannot span segments", uri: "fixture://tasks/a/b", wantStatus: 1,
			wantOutput: `{"code":-32602,"message":"Resource not found","data":{"uri":"fixture://tasks/a/b"}}`},
	}
	both(t, nil, func(t *testing.T, b *kadutest.Bundle, _ *kadutest.Host) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				out := b.Invoke(t, kadutest.Invocation{Op: "resources/read", Params: map[string]any{"uri": tt.uri}})
				if out.Status != tt.wantStatus || string(out.Output) != tt.wantOutput {
					t.Errorf("= %d %s %q; want %d %s", out.Status, out.Output, out.Fault, tt.wantStatus, tt.wantOutput)
				}
			})
		}
	})
}

func TestPromptsAndCompletions(t *testing.T) {
	tests := []struct {
		name       string
		inv        kadutest.Invocation
		wantStatus int32
		wantOutput string
	}{
		{name: "prompt", inv: kadutest.Invocation{Op: "prompts/get", Params: map[string]any{"name": "fx_greet", "arguments": map[string]string{"name": "Ana"}}},
			wantOutput: `{"description":"A greeting","messages":[{"role":"user","content":{"type":"text","text":"Greet Ana."}}]}`},
		{name: "prompt without a required argument", inv: kadutest.Invocation{Op: "prompts/get", Params: map[string]any{"name": "fx_greet"}},
			wantStatus: 1, wantOutput: `{"code":-32602,"message":"Missing required argument: name"}`},
		{name: "prompt ToolError is invalid params", inv: kadutest.Invocation{Op: "prompts/get", Params: map[string]any{"name": "fx_greet", "arguments": map[string]string{"name": "A", "tone": "rude"}}},
			wantStatus: 1, wantOutput: `{"code":-32602,"message":"tone rude is not offered; use polite"}`},
		{name: "unknown prompt", inv: kadutest.Invocation{Op: "prompts/get", Params: map[string]any{"name": "nope"}},
			wantStatus: 1, wantOutput: `{"code":-32602,"message":"Unknown prompt: nope"}`},
		{name: "unknown op", inv: kadutest.Invocation{Op: "tasks/get", Params: map[string]any{}},
			wantStatus: 1, wantOutput: `{"code":-32602,"message":"This bundle does not serve op \"tasks/get\"."}`},
	}
	both(t, nil, func(t *testing.T, b *kadutest.Bundle, _ *kadutest.Host) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				out := b.Invoke(t, tt.inv)
				if out.Status != tt.wantStatus || string(out.Output) != tt.wantOutput {
					t.Errorf("= %d %s %q; want %d %s", out.Status, out.Output, out.Fault, tt.wantStatus, tt.wantOutput)
				}
			})
		}
		t.Run("completion capped at 100", func(t *testing.T) {
			out := b.Invoke(t, kadutest.Invocation{Op: "completion/complete", Params: map[string]any{
				"ref": map[string]string{"type": "ref/prompt", "name": "fx_greet"}, "argument": map[string]string{"name": "name", "value": "An"}}})
			var res struct {
				Completion struct {
					Values  []string `json:"values"`
					Total   int      `json:"total"`
					HasMore bool     `json:"hasMore"`
				} `json:"completion"`
			}
			if err := json.Unmarshal(out.Output, &res); err != nil || out.Status != 0 {
				t.Fatalf("= %d %s", out.Status, out.Output)
			}
			if c := res.Completion; len(c.Values) != 100 || !c.HasMore || c.Total != 150 || !strings.HasPrefix(c.Values[0], "An") {
				t.Errorf("completion = %d values, hasMore %v, total %d", len(c.Values), c.HasMore, c.Total)
			}
		})
	})
}

func TestGrantNarrowsTheManifestRoutes(t *testing.T) {
	newHost := func() *kadutest.Host {
		return &kadutest.Host{API: fakeAPI(), Grant: []string{"GET /api/v1/executions"}}
	}
	both(t, newHost, func(t *testing.T, b *kadutest.Bundle, _ *kadutest.Host) {
		res := b.CallTool(t, "fx_task_get", map[string]any{"id": "tsk_1"})
		if !res.IsError || !strings.Contains(res.Text(), "route_not_granted") {
			t.Errorf("ungranted route = %q; want route_not_granted", res.Text())
		}
	})
}
