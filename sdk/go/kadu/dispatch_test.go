package kadu

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

type out struct {
	N int `json:"n"`
}

func TestToolAnswers(t *testing.T) {
	apiErr := &APIError{Status: 422, Body: []byte(`{"status":422,"errors":[{"code":"validation_error","hint":"Fix q."}],"request_id":"req_1"}` + "\n")}
	tests := []struct {
		name       string
		structured bool
		value      any
		err        error
		wantStatus int32
		want       string
	}{
		{name: "struct", value: out{N: 1}, want: `{"content":[{"type":"text","text":"{\"n\":1}"}]}`},
		{name: "struct with output schema", structured: true, value: out{N: 1},
			want: `{"content":[{"type":"text","text":"{\"n\":1}"}],"structuredContent":{"n":1}}`},
		{name: "string as it is, HTML not escaped", value: "a <b> & c", want: `{"content":[{"type":"text","text":"a <b> & c"}]}`},
		{name: "raw JSON keeps its bytes, trimmed", structured: true, value: json.RawMessage(" {\"b\":1,\"a\":2}\n"),
			want: `{"content":[{"type":"text","text":"{\"b\":1,\"a\":2}"}],"structuredContent":{"b":1,"a":2}}`},
		{name: "*Result as it is", value: &Result{Content: []any{Text("x")}, IsError: true},
			want: `{"content":[{"type":"text","text":"x"}],"isError":true}`},
		{name: "ToolError", err: ToolError("Give an id."), want: `{"content":[{"type":"text","text":"Give an id."}],"isError":true}`},
		{name: "wrapped ToolError", err: errors.Join(errors.New("ctx"), ToolError("inner")),
			want: `{"content":[{"type":"text","text":"inner"}],"isError":true}`},
		{name: "API 4xx is its body", err: apiErr,
			want: `{"content":[{"type":"text","text":"{\"status\":422,\"errors\":[{\"code\":\"validation_error\",\"hint\":\"Fix q.\"}],\"request_id\":\"req_1\"}"}],"isError":true}`},
		{name: "API 4xx without a JSON body", err: &APIError{Status: 413},
			want: `{"content":[{"type":"text","text":"The Kadu API refused the request (HTTP 413)."}],"isError":true}`},
		{name: "API 5xx asks to try again", err: &APIError{Status: 500, Body: []byte(`{"request_id":"req_5"}`)},
			want: `{"content":[{"type":"text","text":"Kadu could not complete this request (HTTP 500, request_id req_5). Nothing says the request was wrong: try again in a moment. For a write, retry with the same idempotency_key so that it is not done twice."}],"isError":true}`},
		{name: "plain error is its text", err: errors.New("bad month"), want: `{"content":[{"type":"text","text":"bad month"}],"isError":true}`},
		{name: "RPCError is status 1", err: InvalidParams("No such thing", nil), wantStatus: 1, want: `{"code":-32602,"message":"No such thing"}`},
		{name: "input required", err: InputRequired(map[string]InputRequest{"ok": Elicit("Sure?", json.RawMessage(`{"type":"object"}`))}, []int{1}),
			want: `{"resultType":"input_required","inputRequests":{"ok":{"method":"elicitation/create","params":{"message":"Sure?","mode":"form","requestedSchema":{"type":"object"}}}},"state":[1]}`},
		{name: "state over 16 KiB is a fault", err: InputRequired(map[string]InputRequest{"ok": {Method: MethodListRoots}}, strings.Repeat("x", MaxStateBytes)), wantStatus: 2},
		{name: "no input requests is a fault", err: InputRequired(nil, nil), wantStatus: 2},
		{name: "bad request key is a fault", err: InputRequired(map[string]InputRequest{"a b": {Method: MethodListRoots}}, nil), wantStatus: 2},
		{name: "a string for an output schema is a fault", structured: true, value: "text", wantStatus: 2},
		{name: "an array for an output schema is a fault", structured: true, value: []int{1}, wantStatus: 2},
		{name: "raw bytes that are not JSON are sent as text (the host checks structuredContent)", value: json.RawMessage(`{`),
			want: `{"content":[{"type":"text","text":"{"}]}`},
		{name: "string escaping", value: "q\"\\\n\t\x01\u2028é\xff", want: `{"content":[{"type":"text","text":"q\"\\\n\t\u0001\u2028é\ufffd"}]}`},
		{name: "nil *Result is a fault", value: (*Result)(nil), wantStatus: 2},
		{name: "*Result without structuredContent under an output schema is a fault", structured: true, value: &Result{Content: []any{Text("x")}}, wantStatus: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := Tool[struct{}, any]{Name: "x", InputSchema: noInput, Annotations: reads, Access: anyone,
				Handler: func(*Call, struct{}) (any, error) { return tt.value, tt.err }}
			if tt.structured {
				tool.OutputSchema = noInput
			}
			h := &fakeHost{}
			status, got := handle(t, mustServer(t, tool), h, map[string]any{"op": "tools/call", "params": map[string]any{"name": "x"}})
			if status != tt.wantStatus || (tt.want != "" && got != tt.want) {
				t.Errorf("= %d %s\nwant %d %s (logs %q)", status, got, tt.wantStatus, tt.want, h.logs)
			}
			if status == 2 && len(h.logs) == 0 {
				t.Errorf("a fault logged nothing; the operator would not know why")
			}
		})
	}
}

func TestHandleNeverFaultsOnAMalformedInvocation(t *testing.T) {
	s := mustServer(t, Tool[struct{}, string]{Name: "x", InputSchema: noInput, Annotations: reads, Access: anyone, Handler: noop})
	for _, in := range []string{`not json`, `{"op":"tools/call","params":"x"}`, `{"op":"tools/call","params":{"name":"y"}}`, `{"op":"nope"}`, `[]`} {
		h := &fakeHost{input: []byte(in)}
		if status := s.Handle(h, int32(len(in))); status != 1 || !json.Valid(h.output) {
			t.Errorf("Handle(%s) = %d %s; want status 1 with a JSON-RPC error", in, status, h.output)
		}
	}
}

func TestCallAPI(t *testing.T) {
	var gotMethod, gotPath, gotBody string
	h := &fakeHost{api: func(method, path string, body []byte) (int, []byte) {
		gotMethod, gotPath, gotBody = method, path, string(body)
		return 201, []byte(`{"id":"tsk_1"}`)
	}}
	c := &Call{host: h, inv: &invocation{}}
	var created struct {
		ID string `json:"id"`
	}
	if err := c.Do("POST", "/api/v1/tasks", map[string]string{"name": "<x>"}, &created); err != nil || created.ID != "tsk_1" {
		t.Fatalf("Do() = %v, %+v", err, created)
	}
	if gotMethod != "POST" || gotPath != "/api/v1/tasks" || gotBody != `{"name":"<x>"}` {
		t.Errorf("request = %s %s %s", gotMethod, gotPath, gotBody)
	}
	resp, err := c.API("GET", "/api/v1/tasks/tsk_1", nil)
	if err != nil || gotBody != "" || resp.Status != 201 {
		t.Errorf("API() with no body = %+v, %v; body sent %q", resp, err, gotBody)
	}
	h.api = func(string, string, []byte) (int, []byte) {
		return 404, []byte(`{"status":404,"errors":[{"code":"not_found","detail":"Task x was not found."}]}`)
	}
	err = c.Do("GET", "/api/v1/tasks/x", nil, nil)
	var ae *APIError
	if !errors.As(err, &ae) || ae.Status != 404 || ae.Code() != "not_found" || err.Error() != "kadu api: HTTP 404 not_found: Task x was not found." {
		t.Errorf("Do() on 404 = %v; want an *APIError", err)
	}
}

func TestCallerAndConfigReadAnySize(t *testing.T) {
	long := strings.Repeat("v", 1000)
	h := &fakeHost{
		caller: []byte(`{"org_id":"o","user_id":"u","role":"admin","scopes":["kadu.admin","kadu.read","kadu.run","kadu.write"],"request_id":"` + long + `","client":null}`),
		config: map[string]string{"long": long, "empty": ""},
	}
	c := &Call{host: h, inv: &invocation{}}
	who := c.Caller()
	if who.OrgID != "o" || who.RequestID != long || !who.HasScope(ScopeWrite) || who.HasScope("billing") || who.Client != nil {
		t.Errorf("Caller() = %+v", who)
	}
	who.Scopes[0] = "changed"
	if c.Caller().Scopes[0] != "kadu.admin" {
		t.Error("Caller() shares its Scopes slice with the caller")
	}
	restore := installForTest(h)
	defer restore()
	for key, want := range map[string]struct {
		v  string
		ok bool
	}{"long": {long, true}, "empty": {"", true}, "absent": {"", false}} {
		if v, ok := Config(key); v != want.v || ok != want.ok {
			t.Errorf("Config(%q) = %d bytes, %v; want %d bytes, %v", key, len(v), ok, len(want.v), want.ok)
		}
	}
}

func TestLogFormatsLikeSlogText(t *testing.T) {
	h := &fakeHost{}
	restore := installForTest(h)
	defer restore()
	Log.Info("ran", "task_id", "tsk_1", "n", 2)
	Log.WithGroup("g").With("a", "b c").Warn("x")
	want := []string{"ran task_id=tsk_1 n=2", `x g.a="b c"`}
	if strings.Join(h.logs, "|") != strings.Join(want, "|") {
		t.Errorf("logs = %q; want %q", h.logs, want)
	}
}

func TestTemplateMatching(t *testing.T) {
	tests := []struct {
		template string
		uri      string
		want     map[string]string // nil: no match
	}{
		{"kobana://kadu/tasks/{id}", "kobana://kadu/tasks/tsk_1", map[string]string{"id": "tsk_1"}},
		{"kobana://kadu/tasks/{id}", "kobana://kadu/tasks/", nil},
		{"kobana://kadu/tasks/{id}", "kobana://kadu/tasks/a/b", nil},
		{"kobana://kadu/tasks/{id}", "kobana://kadu/tasks/a?x=1", nil},
		{"kobana://kadu/tasks/{id}", "kobana://kadu/tasks/a%20b", map[string]string{"id": "a b"}},
		{"kobana://kadu/tasks/{id}", "kobana://kadu/tasks/a%zz", nil},
		{"kobana://kadu/executions/{id}/steps", "kobana://kadu/executions/exe_1/steps", map[string]string{"id": "exe_1"}},
		{"kobana://kadu/executions/{id}/steps", "kobana://kadu/executions/exe_1", nil},
		{"x://a.b/{p}-{q}", "x://a.b/1-2-3", map[string]string{"p": "1-2", "q": "3"}},
		{"x://a.b/{p}", "x://aXb/1", nil}, // the literal dot is not a regexp dot
	}
	for _, tt := range tests {
		t.Run(tt.template+" "+tt.uri, func(t *testing.T) {
			tm, err := compileTemplate(tt.template)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := (&templateEntry{tmpl: tm, vars: tm.Vars()}).match(tt.uri)
			if ok != (tt.want != nil) {
				t.Fatalf("match = %v, %v; want %v", got, ok, tt.want)
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("var %s = %q; want %q", k, got[k], v)
				}
			}
		})
	}
}

func TestRetryAccessors(t *testing.T) {
	first := &Call{host: &fakeHost{}, inv: &invocation{Client: json.RawMessage(`{"capabilities":null,"protocol_version":"2025-06-18"}`)}}
	var st struct{ Step int }
	if first.Retrying() || first.HasCapability("elicitation") || first.Client().ProtocolVersion != "2025-06-18" {
		t.Errorf("first call: Retrying %v, elicitation %v, client %+v", first.Retrying(), first.HasCapability("elicitation"), first.Client())
	}
	if ok, err := first.State(&st); ok || err != nil {
		t.Errorf("State() on a first call = %v, %v", ok, err)
	}
	retry := &Call{host: &fakeHost{}, inv: &invocation{
		State:          json.RawMessage(`{"Step":2}`),
		InputResponses: map[string]json.RawMessage{"ok": json.RawMessage(`{"action":"decline"}`), "bad": json.RawMessage(`[1]`)},
	}}
	var resp struct{ Action string }
	if ok, err := retry.State(&st); !retry.Retrying() || !ok || err != nil || st.Step != 2 {
		t.Errorf("State() on a retry = %v, %v, %+v", ok, err, st)
	}
	if ok, err := retry.InputResponse("ok", &resp); !ok || err != nil || resp.Action != "decline" {
		t.Errorf("InputResponse(ok) = %v, %v, %+v", ok, err, resp)
	}
	if ok, err := retry.InputResponse("bad", &resp); !ok || err == nil {
		t.Errorf("InputResponse(bad) = %v, %v; want an error naming the key", ok, err)
	}
	if ok, _ := retry.InputResponse("absent", &resp); ok {
		t.Error("InputResponse(absent) reported a response")
	}
}
