package confirm

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kobana/kadu/core/store"
)

// A replica killed between claiming a confirmation and recording what the
// call answered is simulated by claiming in the store directly: no run,
// no outcome, ever.
func TestInterrupted(t *testing.T) {
	forEachBackend(t, map[string]func(*testing.T, *harness){
		"StaleClaimAnsweredOnce":     testStaleClaimAnsweredOnce,
		"ConcurrentRetriesAgree":     testInterruptedRetriesAgree,
		"SlowRunKeepsRecordedAnswer": testSlowRunKeepsRecordedAnswer,
		"StaleApproval":              testStaleApproval,
		"SlowApprovedRun":            testSlowApprovedRun,
	})
}

// claimDead claims state's nonce as accepted the way a replica does just
// before running the call, and then dies.
func (h *harness) claimDead(state string) string {
	h.t.Helper()
	claims := mustOpen(h.t, h.conf, state)
	if _, claimed, err := h.db.ClaimConfirmState(h.t.Context(), "org_a", claims.Nonce, store.ConfirmAccepted,
		claims.expiresAt(), h.clock.Now()); err != nil || !claimed {
		h.t.Fatalf("ClaimConfirmState = %t, %v; want a fresh claim", claimed, err)
	}
	return claims.Nonce
}

// wantStillRunning fails unless r is the "still running" answer.
func wantStillRunning(t *testing.T, what string, r rpcResult) {
	t.Helper()
	res := r.result(t)
	if res.IsError == nil || !*res.IsError || len(res.Content) != 1 || !strings.Contains(res.Content[0].Text, "still running") {
		t.Errorf("%s: got %s; want the isError \"still running\" answer", what, r.body)
	}
}

// wantInterrupted fails unless r is the definitive interrupted answer.
func wantInterrupted(t *testing.T, what string, r rpcResult) {
	t.Helper()
	res := r.result(t)
	if res.IsError == nil || !*res.IsError || len(res.Content) != 1 ||
		string(res.StructuredContent) != `{"status":"outcome_unknown","reason":"server_stopped"}` {
		t.Fatalf("%s: got %s; want the interrupted outcome", what, r.body)
	}
	for _, part := range []string{"Run a task", "stopped before it recorded the outcome", "may or may not have taken effect",
		"will not be run again", "read tool", "call kadu_tasks_run again without requestState"} {
		if !strings.Contains(res.Content[0].Text, part) {
			t.Errorf("%s: text lacks %q:\n%s", what, part, res.Content[0].Text)
		}
	}
}

// testStaleClaimAnsweredOnce: before RunLimit a retry hears "still
// running"; from RunLimit on it gets the interrupted outcome, recorded once
// and replayed on every replica; a late record of the original run changes
// nothing; and the call never runs.
func testStaleClaimAnsweredOnce(t *testing.T, h *harness) {
	h.conf.pollEvery, h.conf.polls = time.Millisecond, 2
	state := h.ask(callReq{})
	nonce := h.claimDead(state)
	wantStillRunning(t, "at once", h.call(callReq{state: state, responses: accept}))
	h.clock.Advance(DefaultRunLimit - time.Second)
	wantStillRunning(t, "a second before the run limit", h.call(callReq{state: state, responses: accept}))
	h.clock.Advance(time.Second)
	first := h.call(callReq{state: state, responses: accept})
	wantInterrupted(t, "at the run limit", first)
	if !strings.Contains(h.logs.String(), "recorded it as interrupted") {
		t.Errorf("no warning logged:\n%s", h.logs)
	}

	other := newEngine(t, h.newConfirmer(testKey(1)))
	for _, r := range []rpcResult{h.call(callReq{state: state, responses: accept}), h.callOn(other, callReq{state: state, responses: accept})} {
		if string(r.Result) != string(first.Result) {
			t.Errorf("replay answered\n%s\nwant\n%s", r.Result, first.Result)
		}
	}
	late := json.RawMessage(`{"result":{"content":[{"type":"text","text":"ran late"}]}}`)
	if err := h.db.RecordConfirmOutcome(t.Context(), "org_a", nonce, late); err == nil {
		t.Error("a late record of the original run overwrote the interrupted outcome")
	}
	if r := h.call(callReq{state: state, responses: accept}); string(r.Result) != string(first.Result) {
		t.Errorf("replay after a late record answered\n%s\nwant\n%s", r.Result, first.Result)
	}
	h.nothingRan("after an interrupted claim")
}

// testInterruptedRetriesAgree: many retries at once, on several replicas,
// past the run limit, all get one and the same outcome.
func testInterruptedRetriesAgree(t *testing.T, h *harness) {
	state := h.ask(callReq{})
	h.claimDead(state)
	h.clock.Advance(DefaultRunLimit)
	replicas := []http.Handler{h.engine, newEngine(t, h.newConfirmer(testKey(1))), newEngine(t, h.newConfirmer(testKey(1)))}
	const senders = 9
	answers := make([]rpcResult, senders)
	var wg sync.WaitGroup
	for i := range senders {
		wg.Go(func() { answers[i] = h.callOn(replicas[i%len(replicas)], callReq{state: state, responses: accept}) })
	}
	wg.Wait()
	wantInterrupted(t, "sender 0", answers[0])
	for i, a := range answers[1:] {
		if string(a.Result) != string(answers[0].Result) {
			t.Errorf("sender %d answered\n%s\nwant\n%s", i+1, a.Result, answers[0].Result)
		}
	}
	h.nothingRan("after concurrent retries")
}

// testSlowRunKeepsRecordedAnswer: a run that outlasts the run limit finds
// the interrupted outcome recorded by a retry, and answers it too, so that
// the client hears one story.
func testSlowRunKeepsRecordedAnswer(t *testing.T, h *harness) {
	state := h.ask(callReq{})
	gate, entered := make(chan struct{}), make(chan struct{}, 1)
	h.next.set(func(n *fakeNext) { n.gate, n.entered = gate, entered })
	original := make(chan rpcResult, 1)
	go func() { original <- h.call(callReq{state: state, responses: accept}) }()
	select {
	case <-entered:
	case <-time.After(30 * time.Second):
		t.Fatal("the accepted call did not reach Next within 30 s")
	}
	h.clock.Advance(DefaultRunLimit)
	other := newEngine(t, h.newConfirmer(testKey(1)))
	retry := h.callOn(other, callReq{state: state, responses: accept})
	wantInterrupted(t, "retry past the run limit", retry)
	close(gate)
	var got rpcResult
	select {
	case got = <-original:
	case <-time.After(30 * time.Second):
		t.Fatal("the original call did not answer within 30 s of its run ending")
	}
	if string(got.Result) != string(retry.Result) {
		t.Errorf("the slow original answered\n%s\nwant the recorded\n%s", got.Result, retry.Result)
	}
	if !strings.Contains(h.logs.String(), "finished after its outcome was recorded as interrupted") {
		t.Errorf("the late finish was not logged:\n%s", h.logs)
	}
	h.ranOnce("after a slow run")
}

// testStaleApproval: an approval decided (Continue) by a replica that died
// before recording the outcome reads as approved and running until the run
// limit, then as failed with the interrupted outcome; nothing runs.
func testStaleApproval(t *testing.T, h *harness) {
	link := h.link(callReq{caps: capsNone})
	if _, err := h.db.DecideApproval(t.Context(), "org_a", link.ApprovalID, store.ApprovalApproved, h.clock.Now()); err != nil {
		t.Fatalf("DecideApproval: %v", err)
	}
	h.clock.Advance(DefaultRunLimit - time.Second)
	a, err := h.conf.Approval(t.Context(), "org_a", link.ApprovalID)
	if err != nil || a.Status != store.ApprovalApproved || a.Outcome != nil {
		t.Fatalf("before the run limit: %s with outcome %s, %v; want approved, running", a.Status, a.Outcome, err)
	}
	h.clock.Advance(time.Second)
	a, err = h.conf.Approval(t.Context(), "org_a", link.ApprovalID)
	if err != nil || a.Status != store.ApprovalFailed || !strings.Contains(string(a.Outcome), "stopped before it recorded the outcome") ||
		!strings.Contains(string(a.Outcome), `"isError":true`) {
		t.Fatalf("at the run limit: %s with outcome %s, %v; want failed with the interrupted outcome", a.Status, a.Outcome, err)
	}
	again, err := h.conf.Approval(t.Context(), "org_a", link.ApprovalID)
	if err != nil || string(again.Outcome) != string(a.Outcome) {
		t.Errorf("read again: %s, %v; want the same outcome", again.Outcome, err)
	}
	if _, err := h.db.FinishApproval(t.Context(), "org_a", link.ApprovalID, store.ApprovalApproved,
		json.RawMessage(`{"content":[]}`), h.clock.Now()); err == nil {
		t.Error("a late record of the original run overwrote the interrupted outcome")
	}
	h.nothingRan("after an interrupted approval")
}

// testSlowApprovedRun: Decide whose run outlasts the run limit returns the
// interrupted outcome recorded meanwhile, without an error.
func testSlowApprovedRun(t *testing.T, h *harness) {
	link := h.link(callReq{caps: capsNone})
	gate, entered := make(chan struct{}), make(chan struct{}, 1)
	h.next.set(func(n *fakeNext) { n.gate, n.entered = gate, entered })
	type decided struct {
		a   store.Approval
		err error
	}
	done := make(chan decided, 1)
	go func() {
		a, err := h.conf.Decide(t.Context(), alice, "org_a", link.ApprovalID, true)
		done <- decided{a, err}
	}()
	select {
	case <-entered:
	case <-time.After(30 * time.Second):
		t.Fatal("the approved call did not reach Next within 30 s")
	}
	h.clock.Advance(DefaultRunLimit)
	read, err := h.newConfirmer(testKey(1)).Approval(t.Context(), "org_a", link.ApprovalID)
	if err != nil || read.Status != store.ApprovalFailed {
		t.Fatalf("read past the run limit: %s, %v; want failed", read.Status, err)
	}
	close(gate)
	var d decided
	select {
	case d = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Decide did not return within 30 s of its run ending")
	}
	if d.err != nil || d.a.Status != store.ApprovalFailed || string(d.a.Outcome) != string(read.Outcome) {
		t.Errorf("Decide = %s %s, %v; want the recorded failed outcome %s", d.a.Status, d.a.Outcome, d.err, read.Outcome)
	}
	h.ranOnce("after a slow approved run")
}
