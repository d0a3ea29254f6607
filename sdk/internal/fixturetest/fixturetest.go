// Package fixturetest checks a guest SDK against sdk/ABI.md through the
// SDK's fixture bundle: a bundle named "fixture" that every SDK (C, Rust,
// AssemblyScript, …) implements to one spec, using only the SDK's public
// API, the way a partner would. The spec is the doc comment of Run.
//
// It owns the expectations, not the toolchains: each SDK's test builds its
// fixture (kadutest.BuildScript) and hands the module to Run and FuzzEcho,
// which load it in kadutest's fake host.
//
// It must not be imported outside tests, nor stand in for the real host:
// core/app's tests load the SDKs' example bundles in the server itself.
package fixturetest

import (
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/kobana/kadu/sdk/go/kadu"
	"github.com/kobana/kadu/sdk/go/kadu/kadutest"
)

// Routes are the API routes the fixture declares.
var Routes = []string{"GET /api/v1/tasks/{id}", "POST /api/v1/tasks/{id}/run", "GET /api/v1/usage"}

// Run checks the fixture module at path. The fixture is, in short (the
// SDKs' prompts and READMEs spell it out):
//
//   - manifest "fixture" 1.0.0, completions true, the Routes above;
//   - tools echo (round-trips arguments.value through the SDK's JSON),
//     get_task and run_task (typed API calls), call (raw api calls with
//     repeat and padding), whoami (caller_info and client), config, log,
//     fail (the three error tiers), big (output of a given size) and ask
//     (input required with state);
//   - resource fixture://status, template fixture://items/{id} ("missing"
//     is not found), prompt greet, completions for both.
func Run(t *testing.T, path string) {
	t.Helper()
	tests := []struct {
		name string
		f    func(t *testing.T, path string)
	}{
		{"manifest", testManifest},
		{"echo", testEcho},
		{"deep nesting", testDeepNesting},
		{"typed api calls", testTypedAPI},
		{"raw api calls and refusals", testRawAPI},
		{"caller and client of any size", testWhoami},
		{"config of any size", testConfig},
		{"log levels", testLog},
		{"three error tiers", testFail},
		{"output cap", testBig},
		{"input required", testAsk},
		{"resources", testResources},
		{"prompts and completions", testPrompts},
		{"unknown names", testUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.f(t, path) })
	}
}

// load loads the fixture in a fresh fake host h (nil: defaults).
func load(t *testing.T, path string, h *kadutest.Host) *kadutest.Bundle {
	t.Helper()
	if h == nil {
		h = &kadutest.Host{}
	}
	return kadutest.Wasm(t, path, h)
}

func testManifest(t *testing.T, path string) {
	m := load(t, path, nil).Manifest()
	if m.Name != "fixture" || m.Version != "1.0.0" || !m.Completions {
		t.Errorf("manifest %q %q completions=%v; want fixture 1.0.0 with completions", m.Name, m.Version, m.Completions)
	}
	if !sameSet(m.Routes, Routes) {
		t.Errorf("routes %v; want %v", m.Routes, Routes)
	}
	want := []string{"ask", "big", "call", "config", "echo", "fail", "get_task", "log", "run_task", "whoami"}
	if got := m.ToolNames(); !sameSet(got, want) {
		t.Errorf("tools %v; want %v", got, want)
	}
	for _, tool := range m.Tools {
		a := tool.Annotations
		if a == nil || a.ReadOnlyHint == nil || a.DestructiveHint == nil || a.IdempotentHint == nil || a.OpenWorldHint == nil {
			t.Errorf("tool %s: annotations %+v; the SDK must write all four hints", tool.Name, a)
			continue
		}
		wantRead := tool.Name != "run_task"
		if *a.ReadOnlyHint != wantRead || *a.DestructiveHint || *a.OpenWorldHint {
			t.Errorf("tool %s: readOnly %v destructive %v openWorld %v; want readOnly %v and neither other",
				tool.Name, *a.ReadOnlyHint, *a.DestructiveHint, *a.OpenWorldHint, wantRead)
		}
		wantAccess := kadutest.Access{MinRole: "viewer", Scope: "read"}
		if tool.Name == "run_task" {
			wantAccess = kadutest.Access{MinRole: "member", Scope: "run"}
		}
		if tool.Access == nil || *tool.Access != wantAccess {
			t.Errorf("tool %s: access %+v; want %+v", tool.Name, tool.Access, wantAccess)
		}
	}
	if len(m.Resources) != 1 || m.Resources[0].URI != "fixture://status" {
		t.Errorf("resources %+v; want fixture://status", m.Resources)
	}
	if len(m.ResourceTemplates) != 1 || m.ResourceTemplates[0].URITemplate != "fixture://items/{id}" {
		t.Errorf("templates %+v; want fixture://items/{id}", m.ResourceTemplates)
	}
	if len(m.Prompts) != 1 || m.Prompts[0].Name != "greet" {
		t.Errorf("prompts %+v; want greet", m.Prompts)
	}
}

// echoValues are JSON texts whose value must survive the SDK's parser and
// writer: escapes, every plane of Unicode, numbers at the edges of what a
// float64 holds and beyond it.
var echoValues = []string{
	`null`, `true`, `false`, `0`, `-0`, `1`, `-1`, `3.14159`, `1e308`, `-1.5e-7`, `2.5E+3`,
	`12345678901234567890123`, `0.1000000000000000055511151231257827`, `9007199254740993`,
	`""`, `"plain"`, `"quote \" backslash \\ slash / \b\f\n\r\t"`, `"\u0000\u001f\u007f"`,
	`"ação, 日本語, emoji 😀, \ud83d\ude00"`, `"\u2028\u2029"`, `"<script>&amp;</script>"`,
	`[]`, `{}`, `[1,"two",[3],{"four":4}]`, `{"a":{"b":{"c":[null,true,{"d":"e"}]}},"":"empty key"}`,
	`{"dup":1,"order":[3,2,1],"z":0,"a":0}`,
}

func testEcho(t *testing.T, path string) {
	b := load(t, path, nil)
	for _, v := range echoValues {
		r := b.CallTool(t, "echo", map[string]any{"value": json.RawMessage(v)})
		if r.IsError {
			t.Errorf("echo %s: isError %s", v, r.Text())
			continue
		}
		checkEcho(t, v, r)
	}
}

// checkEcho checks that r carries value v in structuredContent and, as
// the same JSON, in its text.
func checkEcho(t testing.TB, v string, r *kadutest.ToolResult) {
	t.Helper()
	var sc struct {
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(r.StructuredContent, &sc); err != nil || sc.Value == nil {
		t.Errorf("echo %s: structuredContent %s: %v", v, r.StructuredContent, err)
		return
	}
	if err := sameJSON(v, string(sc.Value)); err != nil {
		t.Errorf("echo %s: structuredContent.value %s: %v", v, sc.Value, err)
	}
	if err := sameJSON(string(r.StructuredContent), r.Text()); err != nil {
		t.Errorf("echo %s: text %q is not the structuredContent %s: %v", v, r.Text(), r.StructuredContent, err)
	}
}

func testDeepNesting(t *testing.T, path string) {
	b := load(t, path, nil)
	shallow := strings.Repeat("[", 16) + "1" + strings.Repeat("]", 16)
	r := b.CallTool(t, "echo", map[string]any{"value": json.RawMessage(shallow)})
	checkEcho(t, shallow, r)
	// Deeper than any SDK's limit: a clean refusal, never a crash.
	deep := strings.Repeat(`{"a":[`, 5000) + strings.Repeat("]}", 5000)
	out := b.Invoke(t, kadutest.Invocation{Op: "tools/call", Params: map[string]any{"name": "echo", "arguments": map[string]any{"value": json.RawMessage(deep)}}})
	if out.Fault != "" {
		t.Fatalf("echo of 10,000 levels faulted (%s); want an isError result or a protocol error", out.Fault)
	}
	if out.Status == 0 && !strings.Contains(string(out.Output), `"isError":true`) {
		t.Errorf("echo of 10,000 levels: %.200s; want isError", out.Output)
	}
	// The instance keeps working.
	checkEcho(t, `"after"`, b.CallTool(t, "echo", map[string]any{"value": "after"}))
}

// tasksAPI is a fake API for the typed calls: tsk_1 exists, "boom" is a
// 503, anything else is 404; runs are accepted.
func tasksAPI() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/tasks/{id}", func(w http.ResponseWriter, r *http.Request) {
		switch r.PathValue("id") {
		case "tsk_1":
			writeJSON(w, 200, `{"id":"tsk_1","name":"Resumo de extrato","version":3}`)
		case "boom":
			writeJSON(w, 503, `{"status":503,"errors":[{"code":"unavailable","title":"Unavailable","detail":"Try later.","param":null,"hint":"Retry."}],"request_id":"req_boom"}`)
		default:
			writeJSON(w, 404, notFound)
		}
	})
	mux.HandleFunc("POST /api/v1/tasks/{id}/run", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 202, `{"id":"exe_1","task_id":"`+r.PathValue("id")+`","status":"queued"}`)
	})
	mux.HandleFunc("GET /api/v1/usage", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, `{"plan":"free"}`)
	})
	return mux
}

const notFound = `{"status":404,"errors":[{"code":"not_found","title":"Not found","detail":"No task with this id.","param":"id","hint":"List tasks to find the id."}],"request_id":"req_404"}`

func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}

func testTypedAPI(t *testing.T, path string) {
	h := &kadutest.Host{API: tasksAPI()}
	b := load(t, path, h)

	r := b.CallTool(t, "get_task", map[string]any{"id": "tsk_1"})
	if r.IsError || sameJSON(string(r.StructuredContent), `{"id":"tsk_1","name":"Resumo de extrato","version":3}`) != nil {
		t.Errorf("get_task tsk_1: isError %v, structuredContent %s", r.IsError, r.StructuredContent)
	}
	r = b.CallTool(t, "get_task", map[string]any{"id": "tsk_missing"})
	if !r.IsError || sameJSON(r.Text(), notFound) != nil {
		t.Errorf("get_task of a missing task: isError %v, text %q; want isError with the API's error body as it is", r.IsError, r.Text())
	}
	r = b.CallTool(t, "get_task", map[string]any{"id": "boom"})
	if !r.IsError || !strings.Contains(r.Text(), "HTTP 503") || !strings.Contains(r.Text(), "req_boom") || !strings.Contains(r.Text(), "try again") {
		t.Errorf("get_task on a 503: isError %v, text %q; want the retry text with the status and request_id", r.IsError, r.Text())
	}
	h.Reset()
	b.CallTool(t, "get_task", map[string]any{"id": "a/b c?d%"})
	if reqs := h.Requests(); len(reqs) != 1 || reqs[0].Path != "/api/v1/tasks/a%2Fb%20c%3Fd%25" {
		t.Errorf("get_task of an id with /, space, ? and %%: requests %+v; want the id percent-encoded as one path segment", reqs)
	}

	h.Reset()
	r = b.CallTool(t, "run_task", map[string]any{"id": "tsk_1", "input": map[string]any{"month": "2026-11"}})
	reqs := h.Requests()
	if r.IsError || len(reqs) != 1 || reqs[0].Method != "POST" || reqs[0].Path != "/api/v1/tasks/tsk_1/run" {
		t.Fatalf("run_task: isError %v %q, requests %+v", r.IsError, r.Text(), reqs)
	}
	if err := sameJSON(string(reqs[0].Body), `{"input":{"month":"2026-11"},"idempotency_key":"fixture-tsk_1"}`); err != nil {
		t.Errorf("run_task body %s: %v", reqs[0].Body, err)
	}
	if !strings.Contains(string(r.StructuredContent), `"exe_1"`) {
		t.Errorf("run_task result %s; want the execution", r.StructuredContent)
	}
}

// callResult is the structuredContent of the call tool.
type callResult struct {
	Statuses []int          `json:"statuses"`
	LastBody map[string]any `json:"last_body"`
}

func call(t *testing.T, b *kadutest.Bundle, args map[string]any) callResult {
	t.Helper()
	r := b.CallTool(t, "call", args)
	var out callResult
	if r.IsError || json.Unmarshal(r.StructuredContent, &out) != nil {
		t.Fatalf("call %v: isError %v, %s %q", args, r.IsError, r.StructuredContent, r.Text())
	}
	return out
}

// firstCode is the code of the first error in an API error body.
func firstCode(body map[string]any) string {
	errs, _ := body["errors"].([]any)
	if len(errs) == 0 {
		return ""
	}
	e, _ := errs[0].(map[string]any)
	code, _ := e["code"].(string)
	return code
}

func testRawAPI(t *testing.T, path string) {
	h := &kadutest.Host{API: tasksAPI(), APIBudget: 3, Grant: []string{"GET /api/v1/tasks/{id}", "POST /api/v1/tasks/{id}/run", "GET /api/v1/usage"}}
	b := load(t, path, h)

	got := call(t, b, map[string]any{"method": "GET", "path": "/api/v1/usage", "repeat": 5})
	if !slices.Equal(got.Statuses, []int{200, 200, 200, 429, 429}) || firstCode(got.LastBody) != "api_budget_exhausted" {
		t.Errorf("5 calls on a budget of 3: %v, last %v; want 200×3 then 429 api_budget_exhausted", got.Statuses, got.LastBody)
	}
	got = call(t, b, map[string]any{"method": "DELETE", "path": "/api/v1/webhooks/whk_1"})
	if !slices.Equal(got.Statuses, []int{403}) || firstCode(got.LastBody) != "route_not_granted" {
		t.Errorf("an undeclared route: %v %v; want 403 route_not_granted", got.Statuses, got.LastBody)
	}
	got = call(t, b, map[string]any{"method": "POST", "path": "/api/v1/tasks/tsk_1/run", "pad_bytes": 1<<20 + 10})
	if !slices.Equal(got.Statuses, []int{413}) || firstCode(got.LastBody) != "payload_too_large" {
		t.Errorf("a body over 1 MiB: %v %v; want 413 payload_too_large", got.Statuses, got.LastBody)
	}
	h.Reset()
	got = call(t, b, map[string]any{"method": "POST", "path": "/api/v1/tasks/tsk_1/run", "pad_bytes": 64 << 10})
	reqs := h.Requests()
	if !slices.Equal(got.Statuses, []int{202}) || len(reqs) != 1 || len(reqs[0].Body) < 64<<10 || !json.Valid(reqs[0].Body) {
		t.Errorf("a 64 KiB body: %v, %d requests; want 202 with the whole JSON body sent", got.Statuses, len(reqs))
	}
}

func testWhoami(t *testing.T, path string) {
	for _, size := range []int{8, 200 << 10} {
		caller := kadu.Caller{OrgID: "org_w", UserID: "user_" + strings.Repeat("u", size), Role: kadu.RoleAdmin,
			Scopes: []string{"kadu.admin", "kadu.read", "kadu.run", "kadu.write"}, RequestID: "req_w",
			Client: &kadu.ClientInfo{Name: "claude-ai", Version: "1.0"}}
		b := load(t, path, &kadutest.Host{Caller: &caller})
		r := b.CallTool(t, "whoami", map[string]any{})
		var got struct {
			kadu.Caller
			Capabilities    map[string]any `json:"capabilities"`
			ProtocolVersion string         `json:"protocol_version"`
		}
		if err := json.Unmarshal(r.StructuredContent, &got); err != nil {
			t.Fatalf("whoami (user_id of %d bytes): %v: %.300s", size, err, r.StructuredContent)
		}
		if got.UserID != caller.UserID || got.OrgID != "org_w" || got.Role != kadu.RoleAdmin || got.RequestID != "req_w" ||
			!slices.Equal(got.Scopes, caller.Scopes) || got.Client == nil || *got.Client != *caller.Client {
			t.Errorf("whoami (user_id of %d bytes) = org %q role %q scopes %v client %+v, user_id of %d bytes; want the caller",
				size, got.OrgID, got.Role, got.Scopes, got.Client, len(got.UserID))
		}
		if _, ok := got.Capabilities["elicitation"]; !ok || got.ProtocolVersion != "2026-07-28" {
			t.Errorf("whoami: capabilities %v, protocol_version %q; want the client's", got.Capabilities, got.ProtocolVersion)
		}
	}
	// An era-2025 client: capabilities unknown, so null.
	b := load(t, path, nil)
	out := b.Invoke(t, kadutest.Invocation{Op: "tools/call", Params: map[string]any{"name": "whoami", "arguments": map[string]any{}},
		Client: &kadu.Client{ProtocolVersion: "2025-06-18"}})
	var r kadutest.ToolResult
	var sc map[string]json.RawMessage
	if out.Status != 0 || json.Unmarshal(out.Output, &r) != nil || json.Unmarshal(r.StructuredContent, &sc) != nil ||
		string(sc["capabilities"]) != "null" || string(sc["protocol_version"]) != `"2025-06-18"` {
		t.Errorf("whoami from an era-2025 client: status %d %.300s; want capabilities null", out.Status, out.Output)
	}
}

func testConfig(t *testing.T, path string) {
	big := strings.Repeat("v", 200<<10)
	b := load(t, path, &kadutest.Host{Config: map[string]string{"small": "42", "big": big, "empty": ""}})
	for _, tt := range []struct {
		key     string
		present bool
		value   string
	}{{"small", true, "42"}, {"big", true, big}, {"empty", true, ""}, {"absent", false, ""}} {
		var got struct {
			Key     string  `json:"key"`
			Present bool    `json:"present"`
			Value   *string `json:"value"`
		}
		r := b.CallTool(t, "config", map[string]any{"key": tt.key})
		if err := json.Unmarshal(r.StructuredContent, &got); err != nil {
			t.Fatalf("config %s: %v", tt.key, err)
		}
		if got.Key != tt.key || got.Present != tt.present || (got.Value != nil) != tt.present || got.Value != nil && *got.Value != tt.value {
			t.Errorf("config %s: key %q present %v value of %d bytes; want present %v with %d bytes", tt.key, got.Key, got.Present, lenOf(got.Value), tt.present, len(tt.value))
		}
	}
}

func lenOf(s *string) int {
	if s == nil {
		return -1
	}
	return len(*s)
}

func testLog(t *testing.T, path string) {
	h := &kadutest.Host{}
	b := load(t, path, h)
	for level := range 4 {
		h.Reset()
		msg := fmt.Sprintf("level %d: ação ✓", level)
		b.CallTool(t, "log", map[string]any{"level": level, "message": msg})
		found := false
		for _, l := range h.Logs() {
			if l.Message == msg && l.Level == int32(level) {
				found = true
			}
		}
		if !found {
			t.Errorf("log at level %d: host logs %+v; want %q at that level", level, h.Logs(), msg)
		}
	}
}

func testFail(t *testing.T, path string) {
	h := &kadutest.Host{}
	b := load(t, path, h)
	r := b.CallTool(t, "fail", map[string]any{"tier": "tool", "message": "the month is closed"})
	if !r.IsError || r.Text() != "the month is closed" {
		t.Errorf("tool error: isError %v text %q", r.IsError, r.Text())
	}
	for _, tt := range []struct {
		code, want int
	}{{0, -32602}, {-32001, -32001}} {
		args := map[string]any{"tier": "protocol", "message": "no such month"}
		if tt.code != 0 {
			args["code"] = tt.code
		}
		out := b.Invoke(t, kadutest.Invocation{Op: "tools/call", Params: map[string]any{"name": "fail", "arguments": args}})
		var e struct {
			Code    int            `json:"code"`
			Message string         `json:"message"`
			Data    map[string]any `json:"data"`
		}
		if out.Status != 1 || out.Fault != "" || json.Unmarshal(out.Output, &e) != nil || e.Code != tt.want || e.Message != "no such month" || e.Data["tier"] != "protocol" {
			t.Errorf("protocol error (code %d): status %d fault %q output %s; want status 1 with code %d", tt.code, out.Status, out.Fault, out.Output, tt.want)
		}
	}
	h.Reset()
	out := b.Invoke(t, kadutest.Invocation{Op: "tools/call", Params: map[string]any{"name": "fail", "arguments": map[string]any{"tier": "fault", "message": "invariant broken: ledger"}}})
	if out.Fault == "" {
		t.Errorf("fault: status %d output %s; want a fault", out.Status, out.Output)
	}
	logged := false
	for _, l := range h.Logs() {
		logged = logged || strings.Contains(l.Message, "invariant broken: ledger")
	}
	if !logged {
		t.Logf("note: the fault's message was not logged (logs %+v)", h.Logs())
	}
	// The host replaces a faulted instance; the bundle serves on.
	checkEcho(t, `"still here"`, b.CallTool(t, "echo", map[string]any{"value": "still here"}))
}

func testBig(t *testing.T, path string) {
	b := load(t, path, &kadutest.Host{OutputCap: 4096})
	r := b.CallTool(t, "big", map[string]any{"bytes": 1000})
	if r.Text() != strings.Repeat("x", 1000) {
		t.Errorf("big 1000: text of %d bytes", len(r.Text()))
	}
	out := b.Invoke(t, kadutest.Invocation{Op: "tools/call", Params: map[string]any{"name": "big", "arguments": map[string]any{"bytes": 10000}}})
	if out.Fault == "" || !strings.Contains(out.Fault, "output") {
		t.Errorf("output over the cap: status %d fault %q; want the fault \"output too large\"", out.Status, out.Fault)
	}
	if r := b.CallTool(t, "big", map[string]any{"bytes": 10}); r.Text() != "xxxxxxxxxx" {
		t.Errorf("after the fault, big 10 = %q", r.Text())
	}
}

func testAsk(t *testing.T, path string) {
	b := load(t, path, nil)
	first := b.CallTool(t, "ask", map[string]any{})
	if first.ResultType != "input_required" {
		t.Fatalf("ask: %+v; want input_required", first)
	}
	var req struct {
		Method string `json:"method"`
		Params struct {
			Mode            string         `json:"mode"`
			Message         string         `json:"message"`
			RequestedSchema map[string]any `json:"requestedSchema"`
		} `json:"params"`
	}
	if err := json.Unmarshal(first.InputRequests["name"], &req); err != nil || req.Method != "elicitation/create" ||
		req.Params.Mode != "form" || req.Params.Message != "What is your name?" || req.Params.RequestedSchema["type"] != "object" {
		t.Errorf("ask: inputRequests %s; want an elicitation form named name", first.InputRequests["name"])
	}
	if err := sameJSON(string(first.State), `{"step":1,"asked":"name"}`); err != nil {
		t.Errorf("ask: state %s: %v", first.State, err)
	}
	retry := func(state string, response string) kadutest.Outcome {
		return b.Invoke(t, kadutest.Invocation{Op: "tools/call", Params: map[string]any{"name": "ask", "arguments": map[string]any{}},
			State: json.RawMessage(state), InputResponses: map[string]json.RawMessage{"name": json.RawMessage(response)}})
	}
	tests := []struct {
		name, state, response string
		wantStatus            int32
		want                  string
	}{
		{"accepted", string(first.State), `{"action":"accept","content":{"name":"Ada ✓"}}`, 0, `"Hello, Ada ✓!"`},
		{"declined", string(first.State), `{"action":"decline"}`, 0, `"No name given: the person declined."`},
		{"cancelled", string(first.State), `{"action":"cancel"}`, 0, `"No name given: the person declined."`},
		{"foreign state", `{"step":7,"asked":"name"}`, `{"action":"accept","content":{"name":"Eve"}}`, 1, `-32602`},
	}
	for _, tt := range tests {
		out := retry(tt.state, tt.response)
		if out.Fault != "" || out.Status != tt.wantStatus || !strings.Contains(string(out.Output), tt.want) {
			t.Errorf("ask %s: status %d fault %q output %s; want status %d with %s", tt.name, out.Status, out.Fault, out.Output, tt.wantStatus, tt.want)
		}
		if tt.name == "declined" && !strings.Contains(string(out.Output), `"isError":true`) {
			t.Errorf("ask declined: %s; want isError", out.Output)
		}
	}
}

func testResources(t *testing.T, path string) {
	b := load(t, path, nil)
	read := func(uri string) kadutest.Outcome {
		return b.Invoke(t, kadutest.Invocation{Op: "resources/read", Params: map[string]any{"uri": uri}})
	}
	for _, tt := range []struct{ uri, want string }{
		{"fixture://status", `{"contents":[{"uri":"fixture://status","mimeType":"text/plain","text":"ok"}]}`},
		{"fixture://items/abc", `{"contents":[{"uri":"fixture://items/abc","mimeType":"application/json","text":"{\"id\":\"abc\"}"}]}`},
		{`fixture://items/q"uote`, `{"contents":[{"uri":"fixture://items/q\"uote","mimeType":"application/json","text":"{\"id\":\"q\\\"uote\"}"}]}`},
	} {
		out := read(tt.uri)
		if out.Status != 0 || sameJSON(string(out.Output), tt.want) != nil {
			t.Errorf("resources/read %s: status %d fault %q %s; want %s", tt.uri, out.Status, out.Fault, out.Output, tt.want)
		}
	}
	out := read("fixture://items/missing")
	if out.Status != 1 || sameJSON(string(out.Output), `{"code":-32602,"message":"Resource not found","data":{"uri":"fixture://items/missing"}}`) != nil {
		t.Errorf("resources/read of a missing item: status %d %s; want status 1 Resource not found", out.Status, out.Output)
	}
}

func testPrompts(t *testing.T, path string) {
	b := load(t, path, nil)
	out := b.Invoke(t, kadutest.Invocation{Op: "prompts/get", Params: map[string]any{"name": "greet", "arguments": map[string]string{"name": "Ada"}}})
	want := `{"description":"Greets someone","messages":[{"role":"user","content":{"type":"text","text":"Say hello to Ada."}}]}`
	if out.Status != 0 || sameJSON(string(out.Output), want) != nil {
		t.Errorf("prompts/get greet: status %d %s; want %s", out.Status, out.Output, want)
	}
	for _, tt := range []struct {
		ref      map[string]any
		arg, val string
		want     []string
	}{
		{map[string]any{"type": "ref/prompt", "name": "greet"}, "name", "al", []string{"alice", "albert"}},
		{map[string]any{"type": "ref/prompt", "name": "greet"}, "name", "", []string{"alice", "albert", "bob"}},
		{map[string]any{"type": "ref/resource", "uri": "fixture://items/{id}"}, "id", "item1", []string{"item1", "item10"}},
		{map[string]any{"type": "ref/resource", "uri": "fixture://items/{id}"}, "id", "zzz", []string{}},
		{map[string]any{"type": "ref/prompt", "name": "greet"}, "other", "a", []string{}},
	} {
		out := b.Invoke(t, kadutest.Invocation{Op: "completion/complete", Params: map[string]any{"ref": tt.ref, "argument": map[string]string{"name": tt.arg, "value": tt.val}}})
		var got struct {
			Completion struct {
				Values []string `json:"values"`
			} `json:"completion"`
		}
		if out.Status != 0 || json.Unmarshal(out.Output, &got) != nil || !slices.Equal(got.Completion.Values, tt.want) && !(len(tt.want) == 0 && len(got.Completion.Values) == 0) {
			t.Errorf("complete %v %s=%q: status %d %s; want values %v", tt.ref, tt.arg, tt.val, out.Status, out.Output, tt.want)
		}
	}
}

func testUnknown(t *testing.T, path string) {
	b := load(t, path, nil)
	for _, inv := range []kadutest.Invocation{
		{Op: "tools/call", Params: map[string]any{"name": "nope", "arguments": map[string]any{}}},
		{Op: "prompts/get", Params: map[string]any{"name": "nope", "arguments": map[string]any{}}},
		{Op: "resources/read", Params: map[string]any{"uri": "fixture://nope"}},
	} {
		out := b.Invoke(t, inv)
		if out.Status != 1 || !strings.Contains(string(out.Output), "-32602") {
			t.Errorf("%s of an unknown name: status %d fault %q %s; want status 1 -32602", inv.Op, out.Status, out.Fault, out.Output)
		}
	}
}

// FuzzEcho sends any JSON value through the fixture's echo tool: the SDK's
// parser and writer must give back the same value, or refuse it cleanly
// (too deep), and never fault.
func FuzzEcho(f *testing.F, path string) {
	for _, v := range echoValues {
		f.Add([]byte(v))
	}
	f.Add([]byte(strings.Repeat("[", 300) + strings.Repeat("]", 300)))
	b := kadutest.Wasm(f, path, &kadutest.Host{})
	f.Fuzz(func(t *testing.T, data []byte) {
		// What a host can send: JSON that Go decoded and encoded again
		// (invalid UTF-8 is replaced on the way).
		var v any
		if json.Unmarshal(data, &v) != nil {
			return
		}
		norm, err := json.Marshal(v)
		if err != nil {
			return
		}
		out := b.Invoke(t, kadutest.Invocation{Op: "tools/call", Params: map[string]any{"name": "echo", "arguments": map[string]any{"value": json.RawMessage(norm)}}})
		if out.Fault != "" {
			t.Fatalf("echo %.200s faulted: %s", norm, out.Fault)
		}
		var r kadutest.ToolResult
		if out.Status != 0 || json.Unmarshal(out.Output, &r) != nil || r.IsError {
			if Depth(norm) > 32 {
				return // an SDK may refuse deep nesting, cleanly
			}
			t.Fatalf("echo %.200s: status %d %.300s", norm, out.Status, out.Output)
		}
		checkEcho(t, string(norm), &r)
	})
}

// Depth is the deepest nesting of arrays and objects in a JSON text: an
// SDK may refuse a value deeper than its limit.
func Depth(js []byte) int {
	d, most, inString, escaped := 0, 0, false, false
	for _, c := range js {
		switch {
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case inString:
		case c == '[' || c == '{':
			d++
			most = max(most, d)
		case c == ']' || c == '}':
			d--
		}
	}
	return most
}

// sameJSON reports how a and b differ as JSON values: numbers compare by
// exact decimal value, objects by members (order aside).
func sameJSON(a, b string) error {
	va, err := decode(a)
	if err != nil {
		return fmt.Errorf("decoding %.100q: %w", a, err)
	}
	vb, err := decode(b)
	if err != nil {
		return fmt.Errorf("decoding %.100q: %w", b, err)
	}
	return equal(va, vb, "$")
}

func decode(s string) (any, error) {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, fmt.Errorf("text after the value")
	}
	return v, nil
}

func equal(a, b any, at string) error {
	switch x := a.(type) {
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return fmt.Errorf("%s: %v is not the number %s", at, b, x)
		}
		rx, okx := new(big.Rat).SetString(string(x))
		ry, oky := new(big.Rat).SetString(string(y))
		if !okx || !oky || rx.Cmp(ry) != 0 {
			return fmt.Errorf("%s: number %s became %s", at, x, y)
		}
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return fmt.Errorf("%s: object %v became %v", at, x, b)
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok {
				return fmt.Errorf("%s: member %q lost", at, k)
			}
			if err := equal(v, w, at+"."+k); err != nil {
				return err
			}
		}
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return fmt.Errorf("%s: array %v became %v", at, x, b)
		}
		for i := range x {
			if err := equal(x[i], y[i], fmt.Sprintf("%s[%d]", at, i)); err != nil {
				return err
			}
		}
	default:
		if a != b {
			return fmt.Errorf("%s: %#v became %#v", at, a, b)
		}
	}
	return nil
}

// sameSet reports whether a and b hold the same strings.
func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
