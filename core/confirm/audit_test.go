package confirm

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/kobana/kadu/core/audit"
	"github.com/kobana/kadu/core/store"
)

// TestConfirmationAuditTrail: every step of a destructive call's
// confirmation path leaves exactly one event in the organisation's audit
// chain (docs/audit.md#confirmations-and-approvals), with the requester,
// the client, the tool, the digest of the arguments and the confirmation's
// id; a replay, a refused decision or a second sweep leaves none.
func TestConfirmationAuditTrail(t *testing.T) {
	forEachBackend(t, map[string]func(*testing.T, *harness){
		"InChatAccepted":    testAuditInChatAccepted,
		"InChatDeclined":    testAuditInChatDeclined,
		"ApprovalApproved":  testAuditApprovalApproved,
		"ApprovalCancelled": testAuditApprovalCancelled,
		"ApprovalExpired":   testAuditApprovalExpired,
	})
}

// events returns org_a's audit events, oldest first.
func (h *harness) events() []store.AuditEvent {
	h.t.Helper()
	out, err := listChain(h.t.Context(), h.db, "org_a")
	if err != nil {
		h.t.Fatalf("ListAudit: %v", err)
	}
	return out
}

// wantEvents fails unless org_a's chain holds exactly events of actions,
// in that order, and returns them.
func (h *harness) wantEvents(what string, actions ...string) []store.AuditEvent {
	h.t.Helper()
	got := h.events()
	ok := len(got) == len(actions)
	for i := 0; ok && i < len(got); i++ {
		ok = got[i].Action == actions[i]
	}
	if !ok {
		names := make([]string, len(got))
		for i, e := range got {
			names[i] = e.Action
		}
		h.t.Fatalf("%s: events %v, want %v", what, names, actions)
	}
	return got
}

// wantCall checks the fields every confirmation event carries: alice, her
// client, the tool and the digest of the harness's arguments.
func (h *harness) wantCall(e store.AuditEvent, surface, outcome, resource string) {
	h.t.Helper()
	want := store.AuditRecord{OrgID: "org_a", Issuer: alice.Issuer, Subject: "alice", Role: string(alice.Role),
		ClientID: "client-a", ClientName: "Claude Desktop", Tool: "kadu_tasks_run", ResourceID: resource,
		ArgsDigest: audit.ArgsDigest(json.RawMessage(h.runArgs())), Outcome: outcome, Surface: surface}
	got := e.AuditRecord
	if got.OrgID != want.OrgID || got.Issuer != want.Issuer || got.Subject != want.Subject || got.Role != want.Role ||
		len(got.Scopes) != 1 || got.Scopes[0] != alice.Scopes[0] || got.ClientID != want.ClientID ||
		got.ClientName != want.ClientName || got.Tool != want.Tool || got.ResourceID != want.ResourceID ||
		got.ArgsDigest != want.ArgsDigest || got.ArgsDigest == "" || got.Outcome != want.Outcome || got.Surface != want.Surface {
		h.t.Errorf("%s event:\n got %+v\nwant %+v", e.Action, got, want)
	}
}

func (h *harness) nonceOf(state string) string {
	h.t.Helper()
	claims, err := h.conf.keys.open(state)
	if err != nil {
		h.t.Fatalf("opening the requestState: %v", err)
	}
	return claims.Nonce
}

func testAuditInChatAccepted(t *testing.T, h *harness) {
	h.wantEvents("before any call")
	state := h.ask(callReq{})
	h.wantEvents("asking records nothing: nothing was decided")
	h.call(callReq{state: state, responses: accept}).result(t)
	e := h.wantEvents("after accept", store.AuditConfirmAccepted)
	h.wantCall(e[0], store.SurfaceMCP, store.OutcomeSucceeded, h.nonceOf(state))
	if e[0].RequestID == "" {
		t.Errorf("accepted event has no request id")
	}
	h.call(callReq{state: state, responses: accept}).result(t) // a replay answers the stored outcome
	h.wantEvents("after a replayed accept", store.AuditConfirmAccepted)
	h.ranOnce("after accept and its replay")
}

func testAuditInChatDeclined(t *testing.T, h *harness) {
	declined := h.ask(callReq{})
	h.call(callReq{state: declined, responses: declineIt}).result(t)
	cancelled := h.ask(callReq{})
	h.call(callReq{state: cancelled, responses: cancelIt}).result(t)
	h.call(callReq{state: declined, responses: accept}).wantInvalidState(t, "accept after decline")
	e := h.wantEvents("after a decline, a cancel and a replay", store.AuditConfirmDeclined, store.AuditConfirmDeclined)
	h.wantCall(e[0], store.SurfaceMCP, store.OutcomeDeclined, h.nonceOf(declined))
	h.wantCall(e[1], store.SurfaceMCP, store.OutcomeDeclined, h.nonceOf(cancelled))
	if e[0].Detail != "declined" || e[1].Detail != "cancelled" {
		t.Errorf("details %q, %q; want declined, cancelled", e[0].Detail, e[1].Detail)
	}
	h.nothingRan("after a decline and a cancel")
}

func testAuditApprovalApproved(t *testing.T, h *harness) {
	link := h.link(callReq{caps: capsNone})
	e := h.wantEvents("after the link", store.AuditApprovalIssued)
	h.wantCall(e[0], store.SurfaceMCP, store.OutcomeSucceeded, link.ApprovalID)
	if _, err := h.conf.Decide(t.Context(), bob, "org_a", link.ApprovalID, true); !errors.Is(err, ErrNotRequester) {
		t.Fatalf("Decide by bob: %v, want ErrNotRequester", err)
	}
	if _, err := h.conf.Decide(t.Context(), alice, "org_a", link.ApprovalID, true); err != nil {
		t.Fatalf("Decide: %v", err)
	}
	if _, err := h.conf.Decide(t.Context(), alice, "org_a", link.ApprovalID, true); !errors.Is(err, ErrDecided) {
		t.Fatalf("second Decide: %v, want ErrDecided", err)
	}
	e = h.wantEvents("after a refused, an accepted and a repeated decision", store.AuditApprovalIssued, store.AuditApprovalApproved)
	h.wantCall(e[1], store.SurfaceSystem, store.OutcomeSucceeded, link.ApprovalID) // no surface in ctx: the page sets its own
	h.ranOnce("after Continue")
}

func testAuditApprovalCancelled(t *testing.T, h *harness) {
	link := h.link(callReq{caps: capsNone})
	if _, err := h.conf.Decide(t.Context(), alice, "org_a", link.ApprovalID, false); err != nil {
		t.Fatalf("Cancel: %v", err)
	}
	e := h.wantEvents("after Cancel", store.AuditApprovalIssued, store.AuditApprovalCancelled)
	h.wantCall(e[1], store.SurfaceSystem, store.OutcomeSucceeded, link.ApprovalID)
	h.nothingRan("after Cancel")
}

func testAuditApprovalExpired(t *testing.T, h *harness) {
	link := h.link(callReq{caps: capsNone})
	h.clock.Advance(DefaultApprovalTTL + time.Second)
	if _, err := h.conf.Decide(t.Context(), alice, "org_a", link.ApprovalID, true); !errors.Is(err, ErrExpired) {
		t.Fatalf("Decide after expiry: %v, want ErrExpired", err)
	}
	h.wantEvents("a late decision changes nothing", store.AuditApprovalIssued)
	// The maintenance job's sweep (core/jobs) records the expiry, once.
	for range 2 {
		if _, err := h.db.ExpireApprovals(t.Context(), h.clock.Now(), func(a store.Approval) store.AuditRecord {
			return audit.Approval(t.Context(), a, store.AuditApprovalExpired, store.OutcomeDeclined)
		}); err != nil {
			t.Fatalf("ExpireApprovals: %v", err)
		}
	}
	e := h.wantEvents("after two sweeps", store.AuditApprovalIssued, store.AuditApprovalExpired)
	h.wantCall(e[1], store.SurfaceSystem, store.OutcomeDeclined, link.ApprovalID)
	if a, _ := h.db.GetApproval(t.Context(), "org_a", link.ApprovalID); a.Status != store.ApprovalExpired {
		t.Errorf("stored status %s, want expired", a.Status)
	}
	h.nothingRan("after expiry")
}

// listChain returns orgID's whole audit chain, oldest first.
func listChain(ctx context.Context, db *store.DB, orgID string) ([]store.AuditEvent, error) {
	var out []store.AuditEvent
	p := store.ListParams{Limit: store.MaxListLimit}
	for {
		page, err := db.ListAudit(ctx, orgID, store.AuditFilter{}, p)
		if err != nil {
			return nil, err
		}
		out = append(out, page.Items...)
		if !page.More || len(page.Items) == 0 {
			break
		}
		p.Before = page.Items[len(page.Items)-1].ID
	}
	slices.Reverse(out)
	return out, nil
}
