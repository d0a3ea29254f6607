package confirm

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/mcp"
	"github.com/kobana/kadu/core/store"
)

func TestApprovals(t *testing.T) {
	forEachBackend(t, map[string]func(*testing.T, *harness){
		"LinkForClientsThatCannotAsk": testLinkForClientsThatCannotAsk,
		"ApprovalRecord":              testApprovalRecord,
		"ContinueRunsAsRequester":     testContinueRunsAsRequester,
		"OtherUserRefused":            testOtherUserRefused,
		"Cancel":                      testCancel,
		"Expired":                     testExpired,
		"ConcurrentContinue":          testConcurrentContinue,
		"ToolGoneOrForbidden":         testToolGoneOrForbidden,
		"CallFailures":                testCallFailures,
		"ApprovalLookup":              testApprovalLookup,
		"ToolTitleAndExplain":         testToolTitleAndExplain,
	})
}

// approvalAnswer is the structuredContent of an approval_required answer.
type approvalAnswer struct {
	Status      string `json:"status"`
	ApprovalID  string `json:"approval_id"`
	ApprovalURL string `json:"approval_url"`
	ExpiresAt   string `json:"expires_at"`
}

// link makes a call that must get an approval link and returns it.
func (h *harness) link(r callReq) approvalAnswer {
	h.t.Helper()
	res := h.call(r).result(h.t)
	var a approvalAnswer
	if err := json.Unmarshal(res.StructuredContent, &a); err != nil || a.Status != "approval_required" {
		h.t.Fatalf("want an approval_required answer, got %+v (%v)", res, err)
	}
	return a
}

// testLinkForClientsThatCannotAsk: era-2025 clients, era-2026 clients
// without elicitation, and those with url elicitation only get an approval
// link in a normal result; nothing runs.
func testLinkForClientsThatCannotAsk(t *testing.T, h *harness) {
	for _, r := range []callReq{
		{era2025: true},
		{caps: capsNone},
		{caps: capsURLOnly},
		{caps: `{"elicitation":null}`},
		{caps: `{"sampling":{},"roots":{}}`},
	} {
		resp := h.call(r)
		res := resp.result(t)
		wantType := "complete"
		if r.era2025 {
			wantType = ""
		}
		if res.ResultType != wantType || res.InputRequests != nil || res.RequestState != "" || res.IsError != nil {
			t.Errorf("era2025 %t caps %s: %s", r.era2025, r.caps, resp.body)
			continue
		}
		var a approvalAnswer
		if err := json.Unmarshal(res.StructuredContent, &a); err != nil {
			t.Fatalf("structuredContent: %v", err)
		}
		want := fmt.Sprintf(`{"status":"approval_required","approval_id":%q,"approval_url":%q,"expires_at":%q}`,
			a.ApprovalID, publicURL+"/approve/"+a.ApprovalID, h.clock.Now().Add(DefaultApprovalTTL).Format(timeLayout))
		if string(res.StructuredContent) != want || !store.ValidID(store.PrefixApproval, a.ApprovalID) {
			t.Errorf("structuredContent =\n%s\nwant\n%s", res.StructuredContent, want)
		}
		text := res.Content[0].Text
		for _, part := range []string{"Nothing has been done yet", a.ApprovalURL, a.ExpiresAt, "kadu_approvals_get", a.ApprovalID,
			"Run task *Conciliação diária* with input (amount: 1, period: 2026-03) and 2 input files; it may cost up to R$ 5,00."} {
			if !strings.Contains(text, part) {
				t.Errorf("text lacks %q:\n%s", part, text)
			}
		}
	}
	h.nothingRan("after approval links")
	if n := countApprovals(t, h); n != 5 {
		t.Errorf("%d approvals, want one per call (5)", n)
	}
}

// testApprovalRecord: the approval holds the call and who made it, never
// a token; the client's name only as an era-2026 request reported it.
func testApprovalRecord(t *testing.T, h *harness) {
	for _, tt := range []struct {
		req      callReq
		wantName string
	}{
		{callReq{caps: capsNone}, "Claude Desktop"},
		{callReq{era2025: true}, ""},
	} {
		link := h.link(tt.req)
		a, err := h.conf.Approval(t.Context(), "org_a", link.ApprovalID)
		if err != nil {
			t.Fatalf("Approval: %v", err)
		}
		want := store.ApprovalPrincipal{Issuer: alice.Issuer, Subject: "alice", OrgID: "org_a", Role: "member",
			Scopes: []string{auth.ScopeRun}, ClientID: "client-a"}
		if a.Tool != "kadu_tasks_run" || a.ToolTitle != "Run a task" || string(a.Arguments) != h.runArgs() ||
			!slices.Equal(a.Principal.Scopes, want.Scopes) || a.Principal.Issuer != want.Issuer || a.Principal.Subject != want.Subject ||
			a.Principal.OrgID != want.OrgID || a.Principal.Role != want.Role || a.Principal.ClientID != want.ClientID ||
			a.ClientID != "client-a" || a.ClientName != tt.wantName || a.Status != store.ApprovalPending ||
			!a.ExpiresAt.Equal(h.clock.Now().Add(DefaultApprovalTTL)) {
			t.Errorf("approval = %+v", a)
		}
		if strings.Contains(strings.ToLower(string(a.Arguments)+fmt.Sprint(a.Principal)), "bearer") {
			t.Errorf("approval holds a token: %+v", a)
		}
	}
}

// testContinueRunsAsRequester: Continue by the person who made the call
// runs it once, in-process, as the stored principal, and keeps the outcome.
func testContinueRunsAsRequester(t *testing.T, h *harness) {
	link := h.link(callReq{caps: capsNone})
	h.clock.Advance(time.Minute)
	signedIn := &auth.Principal{Issuer: alice.Issuer, Subject: alice.Subject, OrgID: "org_a", Role: auth.RoleViewer}
	a, err := h.conf.Decide(t.Context(), signedIn, "org_a", link.ApprovalID, true)
	if err != nil {
		t.Fatalf("Decide: %v", err)
	}
	h.ranOnce("after Continue")
	call, p := h.next.last()
	if p.Subject != "alice" || p.Role != auth.RoleMember || !slices.Equal(p.Scopes, []string{auth.ScopeRun}) || p.OrgID != "org_a" ||
		p.Issuer != alice.Issuer || call.RequestState != "" || call.InputResponses != nil || string(call.Arguments) != h.runArgs() {
		t.Errorf("ran as %+v with %+v", p, call)
	}
	var out struct {
		Content []mcp.TextContent `json:"content"`
		IsError bool              `json:"isError"`
	}
	if err := json.Unmarshal(a.Outcome, &out); err != nil || out.IsError || len(out.Content) != 1 || !strings.Contains(out.Content[0].Text, `"exe_`) {
		t.Errorf("outcome = %s (%v)", a.Outcome, err)
	}
	if a.Status != store.ApprovalApproved || a.DecidedAt == nil || !a.DecidedAt.Equal(h.clock.Now()) {
		t.Errorf("approval after Continue = %+v", a)
	}
	// Single use.
	_, err = h.conf.Decide(t.Context(), signedIn, "org_a", link.ApprovalID, true)
	if !errors.Is(err, ErrDecided) {
		t.Errorf("second Continue: %v, want ErrDecided", err)
	}
	h.ranOnce("after a second Continue")
}

// testOtherUserRefused: nobody but the requester (same issuer and subject)
// may decide; their attempts change nothing.
func testOtherUserRefused(t *testing.T, h *harness) {
	link := h.link(callReq{caps: capsNone})
	for _, p := range []*auth.Principal{bob, carol, dave, nil} {
		for _, proceed := range []bool{true, false} {
			_, err := h.conf.Decide(t.Context(), p, "org_a", link.ApprovalID, proceed)
			if !errors.Is(err, ErrNotRequester) {
				t.Errorf("Decide by %v: %v, want ErrNotRequester", p, err)
			}
		}
	}
	// Another organisation does not see it at all.
	if _, err := h.conf.Decide(t.Context(), erin, "org_b", link.ApprovalID, true); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Decide from another organisation: %v, want store.ErrNotFound", err)
	}
	h.nothingRan("after refused decisions")
	a, _ := h.conf.Approval(t.Context(), "org_a", link.ApprovalID)
	if a.Status != store.ApprovalPending {
		t.Errorf("status = %s, want pending", a.Status)
	}
}

// testCancel: Cancel runs nothing and ends the approval.
func testCancel(t *testing.T, h *harness) {
	link := h.link(callReq{caps: capsNone})
	a, err := h.conf.Decide(t.Context(), alice, "org_a", link.ApprovalID, false)
	if err != nil || a.Status != store.ApprovalCancelled || a.Outcome != nil {
		t.Fatalf("Cancel: %+v, %v", a, err)
	}
	if _, err := h.conf.Decide(t.Context(), alice, "org_a", link.ApprovalID, true); !errors.Is(err, ErrDecided) {
		t.Errorf("Continue after Cancel: %v, want ErrDecided", err)
	}
	h.nothingRan("after Cancel")
}

// testExpired: past its expiry an approval reads as expired and cannot be
// decided; nothing runs.
func testExpired(t *testing.T, h *harness) {
	link := h.link(callReq{caps: capsNone})
	h.clock.Advance(DefaultApprovalTTL)
	a, err := h.conf.Approval(t.Context(), "org_a", link.ApprovalID)
	if err != nil || a.Status != store.ApprovalExpired {
		t.Errorf("Approval after expiry: %+v, %v", a, err)
	}
	for _, proceed := range []bool{true, false} {
		if _, err := h.conf.Decide(t.Context(), alice, "org_a", link.ApprovalID, proceed); !errors.Is(err, ErrExpired) {
			t.Errorf("Decide(proceed=%t) after expiry: %v, want ErrExpired", proceed, err)
		}
	}
	h.nothingRan("after expiry")
}

// testConcurrentContinue: two (or eight) Continue clicks at once, on any
// replicas, run the call once.
func testConcurrentContinue(t *testing.T, h *harness) {
	link := h.link(callReq{caps: capsNone})
	replicas := []*Confirmer{h.conf, h.newConfirmer(testKey(1))}
	var won, decided atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range 8 {
		wg.Go(func() {
			<-start
			_, err := replicas[i%2].Decide(t.Context(), alice, "org_a", link.ApprovalID, true)
			switch {
			case err == nil:
				won.Add(1)
			case errors.Is(err, ErrDecided):
				decided.Add(1)
			default:
				t.Errorf("Decide: %v", err)
			}
		})
	}
	close(start)
	wg.Wait()
	if won.Load() != 1 || decided.Load() != 7 {
		t.Errorf("%d won, %d already decided; want 1 and 7", won.Load(), decided.Load())
	}
	h.ranOnce("after concurrent Continue clicks")
}

// testToolGoneOrForbidden: a tool removed since, or no longer allowed to
// the stored principal, fails the approval with a clear outcome; nothing
// runs.
func testToolGoneOrForbidden(t *testing.T, h *harness) {
	gone := h.link(callReq{caps: capsNone})
	h.next.set(func(n *fakeNext) { n.hide = map[string]bool{"kadu_tasks_run": true} })
	a, err := h.conf.Decide(t.Context(), alice, "org_a", gone.ApprovalID, true)
	if err != nil || a.Status != store.ApprovalFailed || !strings.Contains(string(a.Outcome), "no longer available") ||
		!strings.Contains(string(a.Outcome), `"isError":true`) {
		t.Errorf("tool gone: %+v (%s), %v", a, a.Outcome, err)
	}
	h.next.set(func(n *fakeNext) { n.hide = nil })

	// A viewer's call, approved: the tool needs member.
	viewer := &auth.Principal{Issuer: alice.Issuer, Subject: "vic", OrgID: "org_a", Role: auth.RoleViewer, Scopes: []string{auth.ScopeAdmin}}
	tool := mcp.Tool{Name: "kadu_tasks_run", Title: "Run a task", Annotations: &mcp.ToolAnnotations{DestructiveHint: true}}
	res, err := h.conf.CallTool(t.Context(), viewer, &mcp.ToolCall{Tool: &tool, Arguments: json.RawMessage(h.runArgs()), Client: mcp.ClientContext{Era: mcp.Era2025}})
	if err != nil {
		t.Fatalf("CallTool: %v", err)
	}
	var link approvalAnswer
	_ = json.Unmarshal(res.StructuredContent, &link)
	a, err = h.conf.Decide(t.Context(), viewer, "org_a", link.ApprovalID, true)
	if err != nil || a.Status != store.ApprovalFailed || !strings.Contains(string(a.Outcome), "no longer available") {
		t.Errorf("role too low: %+v (%s), %v", a, a.Outcome, err)
	}
	h.nothingRan("after approvals of unavailable tools")
}

// testCallFailures: a call that asks for input or faults fails the
// approval; its error results are outcomes like any other.
func testCallFailures(t *testing.T, h *harness) {
	tests := []struct {
		name       string
		answer     func(*mcp.ToolCall) (*mcp.ToolResult, error)
		wantStatus store.ApprovalStatus
		wantText   string
	}{
		{"asks for input", func(*mcp.ToolCall) (*mcp.ToolResult, error) {
			return &mcp.ToolResult{InputRequests: map[string]json.RawMessage{"q": json.RawMessage(`{"method":"elicitation/create"}`)}, RequestState: "s"}, nil
		}, store.ApprovalFailed, "asked for more input"},
		{"faults", func(*mcp.ToolCall) (*mcp.ToolResult, error) { return nil, errors.New("guest trapped: secret detail") },
			store.ApprovalFailed, "failed on the server"},
		{"refused", func(*mcp.ToolCall) (*mcp.ToolResult, error) {
			return nil, mcp.InvalidParams("Unknown tool: acme_purge")
		},
			store.ApprovalFailed, "refused the call: Unknown tool: acme_purge"},
		{"error result", func(*mcp.ToolCall) (*mcp.ToolResult, error) {
			return &mcp.ToolResult{IsError: true, Content: []mcp.Content{mcp.Text(`{"status":409}`)}}, nil
		}, store.ApprovalApproved, `{\"status\":409}`},
	}
	for _, tt := range tests {
		h.next.set(func(n *fakeNext) { n.answer = tt.answer })
		link := h.link(callReq{caps: capsNone, tool: "acme_purge", args: `{}`})
		a, err := h.conf.Decide(t.Context(), alice, "org_a", link.ApprovalID, true)
		if err != nil || a.Status != tt.wantStatus || !strings.Contains(string(a.Outcome), tt.wantText) || strings.Contains(string(a.Outcome), "secret") {
			t.Errorf("%s: %s (%s), %v; want %s with %q", tt.name, a.Status, a.Outcome, err, tt.wantStatus, tt.wantText)
		}
	}
}

// testApprovalLookup: unknown, malformed and foreign ids are not found.
func testApprovalLookup(t *testing.T, h *harness) {
	link := h.link(callReq{caps: capsNone})
	for _, tt := range []struct{ org, id string }{
		{"org_b", link.ApprovalID},
		{"org_a", store.NewID(store.PrefixApproval)},
		{"org_a", "apr_x"},
		{"org_a", "../" + link.ApprovalID},
	} {
		if _, err := h.conf.Approval(t.Context(), tt.org, tt.id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Approval(%s, %s): %v, want store.ErrNotFound", tt.org, tt.id, err)
		}
	}
}

func testToolTitleAndExplain(t *testing.T, h *harness) {
	if got := h.conf.ToolTitle(t.Context(), alice, "kadu_tasks_run"); got != "Run a task" {
		t.Errorf("ToolTitle = %q", got)
	}
	if got := h.conf.ToolTitle(t.Context(), alice, "acme_no_hints"); got != "acme_no_hints" {
		t.Errorf("ToolTitle without a title = %q", got)
	}
	if got := h.conf.ToolTitle(t.Context(), alice, "nope"); got != "nope" {
		t.Errorf("ToolTitle of an unknown tool = %q", got)
	}
	link := h.link(callReq{caps: capsNone})
	a, _ := h.conf.Approval(t.Context(), "org_a", link.ApprovalID)
	if got, want := h.conf.Explain(t.Context(), a, "pt-BR"),
		"Executar a tarefa *Conciliação diária* com a entrada (amount: 1, period: 2026-03) e 2 arquivos de entrada; pode custar até R$ 5,00."; got != want {
		t.Errorf("Explain pt =\n%s\nwant\n%s", got, want)
	}
}
