package confirm

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kobana/kadu/core/mcp"
	"github.com/kobana/kadu/core/store"
)

func TestInChat(t *testing.T) {
	forEachBackend(t, map[string]func(*testing.T, *harness){
		"FirstCallAsks":           testFirstCallAsks,
		"AcceptRunsOnce":          testAcceptRunsOnce,
		"ReplayReturnsOutcome":    testReplayReturnsOutcome,
		"ReplayOnAnotherReplica":  testReplayOnAnotherReplica,
		"DeclineAndCancel":        testDeclineAndCancel,
		"StateFailures":           testStateFailures,
		"CanonicalArguments":      testCanonicalArguments,
		"AskAgain":                testAskAgain,
		"WrongShape":              testWrongShape,
		"UnknownResponsesIgnored": testUnknownResponsesIgnored,
		"ConcurrentAccepts":       testConcurrentAccepts,
		"KeyRotation":             testKeyRotation,
		"PassThrough":             testPassThrough,
		"InvalidArguments":        testInvalidArguments,
		"NoAnnotations":           testNoAnnotations,
		"ErrorOutcomeReplayed":    testErrorOutcomeReplayed,
		"NothingSecretLogged":     testNothingSecretLogged,
	})
}

// testFirstCallAsks: a client that declared form elicitation gets the
// input_required result of docs/reference/confirmation.md, byte for byte, and nothing runs.
func testFirstCallAsks(t *testing.T, h *harness) {
	want := `{"method":"elicitation/create","params":{"mode":"form",` +
		`"message":"Run task *Conciliação diária* with input (amount: 1, period: 2026-03) and 2 input files; it may cost up to R$ 5,00.",` +
		`"requestedSchema":{"type":"object","properties":{"confirm":{"type":"boolean","title":"Continue?"}},"required":["confirm"]}}}`
	for _, caps := range []string{capsForm, capsFormOnly, capsFormURL} {
		r := h.call(callReq{caps: caps})
		res := r.result(t)
		if res.ResultType != "input_required" || len(res.InputRequests) != 1 {
			t.Fatalf("caps %s: got %s", caps, r.body)
		}
		if got := string(res.InputRequests["confirm"]); got != want {
			t.Errorf("caps %s: inputRequests.confirm =\n%s\nwant\n%s", caps, got, want)
		}
		if !strings.HasPrefix(res.RequestState, statePrefix) || len(res.RequestState) > maxStateLen {
			t.Errorf("requestState = %q, want a kc1. state", res.RequestState)
		}
		if res.Content != nil || res.StructuredContent != nil {
			t.Errorf("input_required carries a tool result: %s", r.body)
		}
	}
	h.nothingRan("after asking")
}

// testAcceptRunsOnce: accept + confirm:true runs the tool exactly once, as
// the caller, without our response or state.
func testAcceptRunsOnce(t *testing.T, h *harness) {
	state := h.ask(callReq{})
	res := h.call(callReq{state: state, responses: accept}).result(t)
	if res.ResultType != "complete" || res.IsError != nil || len(res.Content) != 1 || !strings.Contains(res.Content[0].Text, `"exe_`) {
		t.Fatalf("accepted call answered %+v", res)
	}
	h.ranOnce("after accepting")
	call, p := h.next.last()
	if p != alice || call.RequestState != "" || call.InputResponses != nil || string(call.Arguments) != h.runArgs() {
		t.Errorf("Next got principal %v, state %q, responses %v, args %s", p, call.RequestState, call.InputResponses, call.Arguments)
	}
	cs, err := h.db.GetConfirmState(t.Context(), "org_a", mustOpen(t, h.conf, state).Nonce)
	if err != nil || cs.Status != store.ConfirmAccepted || cs.Outcome == nil {
		t.Errorf("confirm state = %+v, %v; want accepted with its outcome", cs, err)
	}
}

// testReplayReturnsOutcome: a replay of an accepted state within its
// lifetime returns the first run's outcome, whatever it answers now, and
// runs nothing.
func testReplayReturnsOutcome(t *testing.T, h *harness) {
	state := h.ask(callReq{})
	first := h.call(callReq{state: state, responses: accept})
	h.clock.Advance(4 * time.Minute)
	for _, responses := range []string{accept, declineIt, cancelIt} {
		again := h.call(callReq{state: state, responses: responses})
		if string(again.Result) != string(first.Result) {
			t.Errorf("replay with %s answered\n%s\nwant the first outcome\n%s", responses, again.Result, first.Result)
		}
	}
	h.ranOnce("after replays")
	// Past its lifetime the state is refused like any expired one.
	h.clock.Advance(time.Minute)
	h.call(callReq{state: state, responses: accept}).wantInvalidState(t, "replay after expiry")
	h.ranOnce("after a late replay")
}

// testReplayOnAnotherReplica: the single use is in the shared store, not
// in a replica's memory.
func testReplayOnAnotherReplica(t *testing.T, h *harness) {
	state := h.ask(callReq{})
	first := h.call(callReq{state: state, responses: accept})
	other := newEngine(t, h.newConfirmer(testKey(1)))
	again := h.callOn(other, callReq{state: state, responses: accept})
	if string(again.Result) != string(first.Result) {
		t.Errorf("replay on another replica answered %s, want %s", again.Result, first.Result)
	}
	h.ranOnce("after a replay on another replica")
}

// testDeclineAndCancel: decline, cancel and confirm:false run nothing, say
// so, and use the state up.
func testDeclineAndCancel(t *testing.T, h *harness) {
	tests := []struct {
		responses, reason, text string
	}{
		{declineIt, "declined", "Nothing was done: the person declined to run Run a task."},
		{acceptNo, "declined", "Nothing was done: the person declined to run Run a task."},
		{cancelIt, "cancelled", "Nothing was done: the person cancelled the request to run Run a task."},
	}
	for _, tt := range tests {
		state := h.ask(callReq{})
		res := h.call(callReq{state: state, responses: tt.responses}).result(t)
		want := `{"status":"not_executed","reason":"` + tt.reason + `"}`
		if res.IsError != nil || string(res.StructuredContent) != want || len(res.Content) != 1 || res.Content[0].Text != tt.text {
			t.Errorf("%s: got %+v (structuredContent %s), want %s and %q", tt.responses, res, res.StructuredContent, want, tt.text)
		}
		// Declining consumed the state: neither another answer nor an
		// accept runs anything.
		h.call(callReq{state: state, responses: tt.responses}).wantInvalidState(t, "replay of "+tt.reason)
		h.call(callReq{state: state, responses: accept}).wantInvalidState(t, "accept after "+tt.reason)
		cs, err := h.db.GetConfirmState(t.Context(), "org_a", mustOpen(t, h.conf, state).Nonce)
		if err != nil || cs.Status != store.ConfirmDeclined {
			t.Errorf("confirm state = %+v, %v; want declined", cs, err)
		}
	}
	h.nothingRan("after declining and cancelling")
}

// testStateFailures: every requestState that fails verification is
// -32602 "Invalid or expired requestState" with HTTP 200, and nothing runs.
func testStateFailures(t *testing.T, h *harness) {
	otherArgs := fmt.Sprintf(`{"id":%q,"input":{"period":"2026-04","amount":1},"input_file_ids":[%q,%q]}`, h.task.ID, h.files[0], h.files[1])
	same := `{"older_than_days":30}`
	removed := newEngine(t, h.newConfirmer(testKey(2)))
	tests := []struct {
		name   string
		first  callReq                   // the call that got the state; default a kadu_tasks_run
		state  func(state string) string // what the client sends back; nil: the state itself
		retry  callReq                   // the retry, before state and responses are set
		setup  func()
		engine http.Handler // the replica the retry reaches; nil: the first one
	}{
		{name: "tampered", state: func(s string) string { return flip(s, len(s)/2) }},
		{name: "tampered first byte", state: func(s string) string { return flip(s, len(statePrefix)) }},
		{name: "truncated", state: func(s string) string { return s[:len(s)-4] }},
		{name: "extended", state: func(s string) string { return s + "AAAA" }},
		{name: "not base64", state: func(string) string { return statePrefix + "!!!" }},
		{name: "empty body", state: func(string) string { return statePrefix }},
		{name: "too long", state: func(s string) string { return s + strings.Repeat("A", maxStateLen) }},
		{name: "expired", setup: func() { h.clock.Advance(DefaultStateTTL) }},
		{name: "another person", retry: callReq{as: bob}},
		{name: "same subject at another issuer", retry: callReq{as: dave}},
		{name: "same person in another organisation", retry: callReq{as: erin}},
		{name: "other arguments", retry: callReq{args: otherArgs}},
		{name: "another tool", first: callReq{tool: "acme_no_hints", args: same}, retry: callReq{tool: "acme_purge", args: same}},
		{name: "key removed from the ring", engine: removed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			state := h.ask(tt.first)
			if tt.state != nil {
				state = tt.state(state)
			}
			if tt.setup != nil {
				tt.setup()
			}
			r := tt.retry
			r.state, r.responses = state, accept
			engine := tt.engine
			if engine == nil {
				engine = h.engine
			}
			h.callOn(engine, r).wantInvalidState(t, tt.name)
		})
	}
	h.nothingRan("after refused states")
}

// flip changes the character at i of a base64url string to another valid
// one.
func flip(s string, i int) string {
	b := []byte(s)
	if b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	return string(b)
}

// testCanonicalArguments: the digest is over canonical JSON, so reordered
// members and 1.0 for 1 are the same arguments.
func testCanonicalArguments(t *testing.T, h *harness) {
	state := h.ask(callReq{})
	same := fmt.Sprintf(`{"input_file_ids":[%q,%q],"input":{"amount":1.0,"period":"2026-03"},"id":%q}`, h.files[0], h.files[1], h.task.ID)
	res := h.call(callReq{state: state, responses: accept, args: same}).result(t)
	if res.IsError != nil || res.ResultType != "complete" {
		t.Errorf("reordered arguments: %+v", res)
	}
	h.ranOnce("with reordered arguments")
}

// testAskAgain: a valid state without a confirm response, or responses
// without a state, get a fresh input_required.
func testAskAgain(t *testing.T, h *harness) {
	state := h.ask(callReq{})
	for _, r := range []callReq{
		{state: state, responses: noResponse},
		{state: state},
		{state: state, responses: `{"other":{"action":"accept"}}`},
		{responses: accept},
	} {
		res := h.call(r).result(t)
		if res.ResultType != "input_required" || res.RequestState == "" || res.RequestState == state {
			t.Errorf("state %t, responses %s: got %+v; want a fresh input_required", r.state != "", r.responses, res)
		}
	}
	h.nothingRan("after asking again")
	// The first state still works: it was never answered.
	h.call(callReq{state: state, responses: accept}).result(t)
	h.ranOnce("after accepting the first state")
}

// testWrongShape: a confirm response of the wrong shape is -32602 naming
// the field, and nothing runs.
func testWrongShape(t *testing.T, h *harness) {
	state := h.ask(callReq{})
	for _, bad := range []string{
		`{"action":"accept"}`,
		`{"action":"accept","content":{}}`,
		`{"action":"accept","content":{"confirm":"yes"}}`,
		`{"action":"accept","content":{"confirm":1}}`,
		`{"action":"accept","content":[]}`,
		`{"action":"maybe"}`,
		`{"action":true}`,
		`{"content":{"confirm":true}}`,
		`{"Action":"accept","Content":{"Confirm":true}}`,
		`{"action":"accept","content":{"confirm":null}}`,
		`{"action":null}`,
		`"accept"`,
		`true`,
		`null`,
		`[]`,
	} {
		r := h.call(callReq{state: state, responses: `{"confirm":` + bad + `}`})
		if r.status != http.StatusOK || r.Error == nil || r.Error.Code != mcp.CodeInvalidParams ||
			!strings.Contains(r.Error.Message, "inputResponses.confirm") {
			t.Errorf("confirm %s: got HTTP %d %s; want -32602 naming inputResponses.confirm", bad, r.status, r.body)
		}
	}
	h.nothingRan("after malformed answers")
	// The state was not used up by malformed answers.
	h.call(callReq{state: state, responses: accept}).result(t)
	h.ranOnce("after a well-formed accept")
}

// testUnknownResponsesIgnored: responses under other keys do not get in
// the way, and Next gets them without ours.
func testUnknownResponsesIgnored(t *testing.T, h *harness) {
	state := h.ask(callReq{})
	h.call(callReq{state: state, responses: `{"note":{"action":"accept","content":{"x":1}},"confirm":{"action":"accept","content":{"confirm":true},"_meta":{}}}`}).result(t)
	h.ranOnce("with an extra response")
	call, _ := h.next.last()
	if _, ok := call.InputResponses["confirm"]; ok || len(call.InputResponses) != 1 || call.InputResponses["note"] == nil {
		t.Errorf("Next got responses %v; want only note", call.InputResponses)
	}
}

// testConcurrentAccepts: the same accepted state sent many times at once,
// to several replicas, runs the tool once; every sender gets its outcome.
func testConcurrentAccepts(t *testing.T, h *harness) {
	state := h.ask(callReq{})
	gate, entered := make(chan struct{}), make(chan struct{}, 16)
	h.next.set(func(n *fakeNext) { n.gate, n.entered = gate, entered })
	replicas := []http.Handler{h.engine, newEngine(t, h.newConfirmer(testKey(1))), newEngine(t, h.newConfirmer(testKey(1)))}
	const senders = 9
	results := make([]rpcResult, senders)
	var wg sync.WaitGroup
	for i := range senders {
		wg.Go(func() { results[i] = h.callOn(replicas[i%len(replicas)], callReq{state: state, responses: accept}) })
	}
	<-entered // one sender runs the tool; the others wait for its outcome
	close(gate)
	wg.Wait()
	for i, r := range results {
		if string(r.Result) != string(results[0].Result) || r.Error != nil {
			t.Errorf("sender %d got %s; want the same outcome as sender 0 (%s)", i, r.body, results[0].body)
		}
	}
	h.ranOnce("after concurrent accepts")
}

// testKeyRotation: a state sealed with a key still in the ring opens on a
// replica that seals with a newer key; one sealed with a key removed from
// the ring does not (StateFailures covers that).
func testKeyRotation(t *testing.T, h *harness) {
	state := h.ask(callReq{}) // sealed with key 1
	rotated := newEngine(t, h.newConfirmer(testKey(2), testKey(1)))
	h.callOn(rotated, callReq{state: state, responses: accept}).result(t)
	h.ranOnce("after accepting an old-key state on a rotated replica")
	// The rotated replica seals with the new key, which the old ring
	// cannot open.
	fresh := h.callOn(rotated, callReq{args: `{"older_than_days":1}`, tool: "acme_purge"}).result(t).RequestState
	h.call(callReq{tool: "acme_purge", args: `{"older_than_days":1}`, state: fresh, responses: accept}).
		wantInvalidState(t, "a new-key state on a replica without the new key")
}

// testPassThrough: tools that are not destructive, and requestStates that
// are not ours, go to Next untouched.
func testPassThrough(t *testing.T, h *harness) {
	res := h.call(callReq{tool: "kadu_tasks_list", args: `{}`}).result(t)
	if len(res.Content) != 1 || res.Content[0].Text != "ran kadu_tasks_list" || h.next.count() != 1 {
		t.Errorf("read-only tool: %+v, %d calls", res, h.next.count())
	}
	h.call(callReq{tool: "acme_purge", args: `{}`, state: "bundle-state-1", responses: `{"ask":{"action":"accept"}}`}).result(t)
	call, _ := h.next.last()
	if call.RequestState != "bundle-state-1" || string(call.InputResponses["ask"]) != `{"action":"accept"}` || h.next.count() != 2 {
		t.Errorf("a bundle's state reached Next as %q with %v", call.RequestState, call.InputResponses)
	}
}

// testInvalidArguments: arguments the schema refuses are an isError result
// naming the field, before anyone is asked; nothing runs.
func testInvalidArguments(t *testing.T, h *harness) {
	for _, r := range []callReq{
		{args: `{"id":"tsk_nope"}`},
		{args: `{"id":"tsk_nope"}`, era2025: true},
		{args: `{"id":"tsk_nope"}`, state: statePrefix + "x", responses: accept},
	} {
		res := h.call(r).result(t)
		if res.IsError == nil || !*res.IsError || res.InputRequests != nil || len(res.Content) != 1 ||
			!strings.Contains(res.Content[0].Text, "/id") || !strings.Contains(res.Content[0].Text, "nothing was done") {
			t.Errorf("invalid arguments answered %+v", res)
		}
	}
	h.nothingRan("after invalid arguments")
	if n := countApprovals(t, h); n != 0 {
		t.Errorf("%d approvals created for invalid arguments", n)
	}
}

// testNoAnnotations: a tool without annotations is destructive by the
// protocol's defaults, and confirmed.
func testNoAnnotations(t *testing.T, h *harness) {
	state := h.ask(callReq{tool: "acme_no_hints", args: `{"x":1}`})
	h.nothingRan("after asking")
	h.call(callReq{tool: "acme_no_hints", args: `{"x":1}`, state: state, responses: accept}).result(t)
	if h.next.count() != 1 {
		t.Errorf("Next ran %d calls, want 1", h.next.count())
	}
}

// testErrorOutcomeReplayed: when the confirmed call fails, a replay gets
// the same error, without running it again.
func testErrorOutcomeReplayed(t *testing.T, h *harness) {
	h.next.set(func(n *fakeNext) {
		n.answer = func(*mcp.ToolCall) (*mcp.ToolResult, error) {
			return nil, &mcp.Error{Code: mcp.CodeMissingCapability, Message: "Missing required client capability",
				Data: map[string]any{"requiredCapabilities": map[string]any{"sampling": map[string]any{}}}, Status: http.StatusBadRequest}
		}
	})
	state := h.ask(callReq{tool: "acme_purge", args: `{}`})
	first := h.call(callReq{tool: "acme_purge", args: `{}`, state: state, responses: accept})
	again := h.call(callReq{tool: "acme_purge", args: `{}`, state: state, responses: accept})
	if first.status != http.StatusBadRequest || again.status != first.status || string(again.body) != string(first.body) {
		t.Errorf("first answer HTTP %d %s; replay HTTP %d %s", first.status, first.body, again.status, again.body)
	}
	if h.next.count() != 1 {
		t.Errorf("Next ran %d calls, want 1", h.next.count())
	}

	h.next.set(func(n *fakeNext) {
		n.answer = func(*mcp.ToolCall) (*mcp.ToolResult, error) { return nil, fmt.Errorf("guest trapped: secret detail") }
	})
	state = h.ask(callReq{tool: "acme_purge", args: `{"older_than_days":2}`})
	for range 2 {
		r := h.call(callReq{tool: "acme_purge", args: `{"older_than_days":2}`, state: state, responses: accept})
		if r.Error == nil || r.Error.Code != mcp.CodeInternalError || strings.Contains(string(r.body), "secret") {
			t.Errorf("fault answered %s", r.body)
		}
	}
	if h.next.count() != 2 {
		t.Errorf("Next ran %d calls, want 2", h.next.count())
	}
}

// testNothingSecretLogged: logs name the organisation, tool and request,
// never the requestState or the arguments.
func testNothingSecretLogged(t *testing.T, h *harness) {
	state := h.ask(callReq{})
	h.call(callReq{state: state, responses: accept})
	h.call(callReq{state: flip(state, 10), responses: accept})
	h.call(callReq{caps: capsNone})
	logMu.Lock()
	logs := h.logs.String()
	logMu.Unlock()
	if strings.Contains(logs, state[len(statePrefix):len(statePrefix)+20]) || strings.Contains(logs, "2026-03") || strings.Contains(logs, h.files[0]) {
		t.Errorf("logs hold a requestState or arguments:\n%s", logs)
	}
	for _, want := range []string{"asked in the chat", "the call ran", "requestState refused", "approval requested"} {
		if !strings.Contains(logs, want) {
			t.Errorf("logs lack %q:\n%s", want, logs)
		}
	}
}

func mustOpen(t testing.TB, c *Confirmer, state string) stateClaims {
	t.Helper()
	claims, err := c.keys.open(state)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return claims
}

func countApprovals(t testing.TB, h *harness) int {
	t.Helper()
	var n int
	if err := h.db.Writer().QueryRowContext(t.Context(), `SELECT COUNT(*) FROM approvals`).Scan(&n); err != nil {
		t.Fatalf("counting approvals: %v", err)
	}
	return n
}

// Encoding an outcome keeps what the client saw.
func TestOutcomeRoundTrip(t *testing.T) {
	res := &mcp.ToolResult{Content: []mcp.Content{mcp.Text("a"), json.RawMessage(`{"type":"image","data":"AA==","mimeType":"image/png"}`)},
		StructuredContent: json.RawMessage(`{"k":1}`), IsError: true, Meta: map[string]any{"m": "v"}}
	raw, err := encodeOutcome(res, nil)
	if err != nil {
		t.Fatal(err)
	}
	back, err := decodeOutcome(raw)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(res)
	b, _ := json.Marshal(back)
	if string(a) != string(b) {
		t.Errorf("round trip:\n got %s\nwant %s", b, a)
	}
	ir := &mcp.ToolResult{InputRequests: map[string]json.RawMessage{"q": json.RawMessage(`{"method":"roots/list"}`)}, RequestState: "bundle"}
	raw, _ = encodeOutcome(ir, nil)
	back, _ = decodeOutcome(raw)
	if back.RequestState != "bundle" || string(back.InputRequests["q"]) != `{"method":"roots/list"}` {
		t.Errorf("input_required round trip: %+v", back)
	}
}
