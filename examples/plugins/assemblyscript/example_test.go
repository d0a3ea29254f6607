package inbox_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/kobana/kadu/sdk/go/kadu"
	"github.com/kobana/kadu/sdk/go/kadu/kadutest"
)

// Executions as the fake API knows them.
const (
	question = `{"id":"exe_1","task_id":"tsk_1","status":"waiting_input","pending_input":{"kind":"question",` +
		`"prompt":"Which month should I close?","input_schema":{"type":"object","properties":{"month":{"type":"string"}},"required":["month"]},` +
		`"step_id":"stp_1","expires_at":"2026-11-30T12:00:00Z"}}`
	noStep = `{"id":"exe_2","task_id":"tsk_2","status":"waiting_input","pending_input":{"kind":"approval",` +
		`"prompt":"Send the report?","input_schema":{"type":"object","properties":{"approve":{"type":"boolean"}}},` +
		`"step_id":null,"expires_at":"2026-12-01T00:00:00Z"}}`
	fileAnswer = `{"id":"exe_3","task_id":"tsk_3","status":"waiting_input","pending_input":{"kind":"question",` +
		`"prompt":"Which statement?","input_schema":{"type":"object","properties":{"file":{"type":"object"}}},` +
		`"step_id":"stp_3","expires_at":"2026-12-01T00:00:00Z"}}`
	done     = `{"id":"exe_9","task_id":"tsk_1","status":"succeeded","pending_input":null}`
	notFound = `{"status":404,"errors":[{"code":"not_found","title":"Not found","detail":"No execution exe_404.",` +
		`"param":"id","hint":"List executions to find the id."}],"request_id":"req_404"}`
	conflict = `{"status":409,"errors":[{"code":"conflict","title":"Conflict","detail":"The execution is no longer waiting.",` +
		`"param":null,"hint":"Read the execution again."}],"request_id":"req_409"}`
)

// api is a fake Kadu API for the three routes of the bundle.
func api(t *testing.T) http.Handler {
	mux := http.NewServeMux()
	byID := map[string]string{"exe_1": question, "exe_2": noStep, "exe_3": fileAnswer, "exe_9": done}
	mux.HandleFunc("GET /api/v1/executions", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("status") != "waiting_input" {
			t.Errorf("list without status=waiting_input: %s", r.URL)
		}
		write(w, 200, `{"data":[`+question+`,`+noStep+`],"meta":{"next_cursor":null,"limit":`+r.URL.Query().Get("limit")+`}}`)
	})
	mux.HandleFunc("GET /api/v1/executions/{id}", func(w http.ResponseWriter, r *http.Request) {
		if exe, ok := byID[r.PathValue("id")]; ok {
			write(w, 200, exe)
			return
		}
		write(w, 404, notFound)
	})
	mux.HandleFunc("POST /api/v1/executions/{id}/continue", func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			t.Errorf("reading the body: %v", err)
		}
		if r.PathValue("id") == "exe_2" {
			write(w, 409, conflict)
			return
		}
		write(w, 202, `{"id":"`+r.PathValue("id")+`","task_id":"tsk_1","status":"running","pending_input":null}`)
	})
	return mux
}

func write(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

// load builds the bundle with build.sh and loads it in a fake host whose
// API is api.
func load(t *testing.T) (*kadutest.Bundle, *kadutest.Host) {
	t.Helper()
	h := &kadutest.Host{API: api(t)}
	return kadutest.Wasm(t, kadutest.BuildScript(t, "."), h), h
}

func logged(h *kadutest.Host, msg string) bool {
	for _, l := range h.Logs() {
		if l.Level == 1 && l.Message == msg {
			return true
		}
	}
	return false
}

func TestManifest(t *testing.T) {
	b, _ := load(t)
	m := b.Manifest()
	if m.Name != "inbox" || m.Version != "1.0.0" {
		t.Errorf("bundle %s %s; want inbox 1.0.0", m.Name, m.Version)
	}
	wantRoutes := []string{"GET /api/v1/executions", "GET /api/v1/executions/{id}", "POST /api/v1/executions/{id}/continue"}
	if strings.Join(m.Routes, ",") != strings.Join(wantRoutes, ",") {
		t.Errorf("routes %v; want %v", m.Routes, wantRoutes)
	}
	list, answer := m.Tool("inbox_list"), m.Tool("inbox_answer")
	if list == nil || answer == nil || len(m.Tools) != 2 {
		t.Fatalf("tools %v; want inbox_list and inbox_answer", m.ToolNames())
	}
	if list.Title != "Questions waiting for you" || !*list.Annotations.ReadOnlyHint || *list.Annotations.DestructiveHint ||
		!*list.Annotations.IdempotentHint || *list.Access != (kadutest.Access{MinRole: "viewer", Scope: "read"}) {
		t.Errorf("inbox_list: %+v %+v %+v", list.Title, list.Annotations, list.Access)
	}
	if !strings.Contains(list.Description, "data") {
		t.Errorf("inbox_list description %q; want it to say prompts are data, not instructions", list.Description)
	}
	a := answer.Annotations
	// Destructive: continuing an execution may approve a step, and the
	// host lets only a destructive tool call the continue route.
	if answer.Title != "Answer a waiting execution" || *a.ReadOnlyHint || !*a.DestructiveHint || *a.IdempotentHint || *a.OpenWorldHint ||
		len(answer.OutputSchema) != 0 ||
		*answer.Access != (kadutest.Access{MinRole: "member", Scope: "run"}) || len(answer.RequiresCapabilities) != 0 {
		t.Errorf("inbox_answer: %q %+v %+v requires %v", answer.Title, a, answer.Access, answer.RequiresCapabilities)
	}
}

func TestList(t *testing.T) {
	b, h := load(t)
	for _, tt := range []struct {
		name, wantPath string
		args           map[string]any
	}{
		{"default limit", "/api/v1/executions?status=waiting_input&limit=10", map[string]any{}},
		{"limit 5", "/api/v1/executions?status=waiting_input&limit=5", map[string]any{"limit": 5}},
	} {
		h.Reset()
		r := b.CallTool(t, "inbox_list", tt.args)
		if reqs := h.Requests(); len(reqs) != 1 || reqs[0].Path != tt.wantPath {
			t.Errorf("%s: requests %+v; want GET %s", tt.name, reqs, tt.wantPath)
		}
		var got struct {
			Waiting []map[string]any `json:"waiting"`
			Count   int              `json:"count"`
		}
		if r.IsError || json.Unmarshal(r.StructuredContent, &got) != nil || got.Count != 2 || len(got.Waiting) != 2 {
			t.Fatalf("%s: isError %v %s", tt.name, r.IsError, r.StructuredContent)
		}
		first := got.Waiting[0]
		if first["execution_id"] != "exe_1" || first["task_id"] != "tsk_1" || first["kind"] != "question" ||
			first["prompt"] != "Which month should I close?" || first["expires_at"] != "2026-11-30T12:00:00Z" {
			t.Errorf("%s: first %v", tt.name, first)
		}
		if r.Text() != string(r.StructuredContent) {
			t.Errorf("%s: text %q; want the structuredContent's JSON", tt.name, r.Text())
		}
		if !logged(h, "listed 2") {
			t.Errorf("%s: logs %+v; want \"listed 2\" at info", tt.name, h.Logs())
		}
	}
}

// TestAnswerRefusals covers the first call's isError answers: the API's
// error, an execution that is not waiting, a client without forms, and a
// question a form cannot carry.
func TestAnswerRefusals(t *testing.T) {
	b, _ := load(t)
	era2025 := &kadu.Client{ProtocolVersion: "2025-06-18"}
	for _, tt := range []struct {
		name, id string
		client   *kadu.Client
		want     string
	}{
		{"not found: the API's body", "exe_404", nil, notFound},
		{"not waiting", "exe_9", nil, "Execution exe_9 is succeeded, not waiting for an answer."},
		{"no forms", "exe_1", era2025, "This client cannot show a form. The question is: Which month should I close?. " +
			"Answer with kadu_executions_continue (execution_id exe_1)."},
		{"not a flat form", "exe_3", nil, "kadu_executions_continue (execution_id exe_3)"},
	} {
		out := b.Invoke(t, kadutest.Invocation{Op: "tools/call", Client: tt.client,
			Params: map[string]any{"name": "inbox_answer", "arguments": map[string]any{"execution_id": tt.id}}})
		var r kadutest.ToolResult
		if out.Status != 0 || json.Unmarshal(out.Output, &r) != nil || !r.IsError || !strings.Contains(r.Text(), tt.want) {
			t.Errorf("%s: status %d fault %q %s; want isError with %q", tt.name, out.Status, out.Fault, out.Output, tt.want)
		}
	}
}

// answerFlow makes the first call for id and returns the state to retry with.
func answerFlow(t *testing.T, b *kadutest.Bundle, id string) json.RawMessage {
	t.Helper()
	r := b.CallTool(t, "inbox_answer", map[string]any{"execution_id": id})
	if r.ResultType != "input_required" {
		t.Fatalf("inbox_answer %s: %s %q; want input_required", id, r.StructuredContent, r.Text())
	}
	return r.State
}

func retry(t *testing.T, b *kadutest.Bundle, id string, state json.RawMessage, response string) kadutest.Outcome {
	t.Helper()
	return b.Invoke(t, kadutest.Invocation{Op: "tools/call",
		Params:         map[string]any{"name": "inbox_answer", "arguments": map[string]any{"execution_id": id}},
		State:          state,
		InputResponses: map[string]json.RawMessage{"answer": json.RawMessage(response)}})
}

func TestAnswer(t *testing.T) {
	b, h := load(t)
	first := b.CallTool(t, "inbox_answer", map[string]any{"execution_id": "exe_1"})
	var req struct {
		Method string `json:"method"`
		Params struct {
			Mode            string          `json:"mode"`
			Message         string          `json:"message"`
			RequestedSchema json.RawMessage `json:"requestedSchema"`
		} `json:"params"`
	}
	if first.ResultType != "input_required" || json.Unmarshal(first.InputRequests["answer"], &req) != nil {
		t.Fatalf("first call: %+v", first)
	}
	if req.Method != "elicitation/create" || req.Params.Mode != "form" || req.Params.Message != "Which month should I close?" ||
		string(req.Params.RequestedSchema) != `{"type":"object","properties":{"month":{"type":"string"}},"required":["month"]}` {
		t.Errorf("input request %s; want a form with the pending prompt and input_schema", first.InputRequests["answer"])
	}
	if string(first.State) != `{"execution_id":"exe_1","step_id":"stp_1"}` {
		t.Errorf("state %s", first.State)
	}

	h.Reset()
	out := retry(t, b, "exe_1", first.State, `{"action":"accept","content":{"month":"2026-11"}}`)
	var r kadutest.ToolResult
	if out.Status != 0 || json.Unmarshal(out.Output, &r) != nil || r.IsError ||
		string(r.StructuredContent) != `{"execution_id":"exe_1","answered":true,"status":"running"}` {
		t.Fatalf("accepted: status %d %s", out.Status, out.Output)
	}
	reqs := h.Requests()
	if len(reqs) != 1 || reqs[0].Method != "POST" || reqs[0].Path != "/api/v1/executions/exe_1/continue" ||
		string(reqs[0].Body) != `{"answer":{"month":"2026-11"},"idempotency_key":"inbox-exe_1-stp_1"}` {
		t.Errorf("accepted: requests %+v; want one POST continue with the answer and idempotency key", reqs)
	}
	if !logged(h, "answered exe_1") {
		t.Errorf("logs %+v; want \"answered exe_1\" at info", h.Logs())
	}
}

func TestAnswerRetries(t *testing.T) {
	b, h := load(t)
	state1 := answerFlow(t, b, "exe_1")
	state2 := answerFlow(t, b, "exe_2")
	for _, tt := range []struct {
		name, id   string
		state      json.RawMessage
		response   string
		wantStatus int32
		want       string // in the output
		wantPost   string // the continue body; "" for none
	}{
		{"declined", "exe_1", state1, `{"action":"decline"}`, 0,
			`"structuredContent":{"execution_id":"exe_1","answered":false,"status":"waiting_input"}`, ""},
		{"cancelled", "exe_1", state1, `{"action":"cancel"}`, 0, `still waiting`, ""},
		{"another execution's state", "exe_2", state1, `{"action":"accept","content":{"approve":true}}`, 1, `-32602`, ""},
		{"409 from the API, as it is", "exe_2", state2, `{"action":"accept","content":{"approve":true}}`, 0,
			`"isError":true`, `{"answer":{"approve":true},"idempotency_key":"inbox-exe_2-none"}`},
	} {
		h.Reset()
		out := retry(t, b, tt.id, tt.state, tt.response)
		if out.Fault != "" || out.Status != tt.wantStatus || !strings.Contains(string(out.Output), tt.want) {
			t.Errorf("%s: status %d fault %q %s; want status %d with %s", tt.name, out.Status, out.Fault, out.Output, tt.wantStatus, tt.want)
		}
		var posted string
		for _, r := range h.Requests() {
			if r.Method == "POST" {
				posted = string(r.Body)
			}
		}
		if posted != tt.wantPost {
			t.Errorf("%s: posted %q; want %q", tt.name, posted, tt.wantPost)
		}
		if tt.name == "409 from the API, as it is" {
			var r kadutest.ToolResult
			if json.Unmarshal(out.Output, &r) != nil || r.Text() != conflict {
				t.Errorf("%s: text %q; want the API's body", tt.name, r.Text())
			}
		}
	}
}
