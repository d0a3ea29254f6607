package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kobana/kadu/core/store"
)

// approvalTests cover the approvals and confirm states of docs/reference/confirmation.md.
var approvalTests = []suiteTest{
	{"ApprovalCreateGet", testApprovalCreateGet},
	{"ApprovalDecide", testApprovalDecide},
	{"ApprovalDecideConcurrent", testApprovalDecideConcurrent},
	{"ApprovalFinish", testApprovalFinish},
	{"ConfirmStateClaim", testConfirmStateClaim},
	{"ConfirmStateClaimConcurrent", testConfirmStateClaimConcurrent},
	{"ConfirmStateOutcome", testConfirmStateOutcome},
	{"ConfirmStateOutcomeConcurrent", testConfirmStateOutcomeConcurrent},
	{"ApprovalFinishConcurrent", testApprovalFinishConcurrent},
	{"PurgeConfirmations", testPurgeConfirmations},
	{"ExpireApprovalsAudited", testExpireApprovalsAudited},
}

// newApproval creates a pending approval of orgID that expires at
// now+ttl.
func newApproval(t *testing.T, db *store.DB, orgID string, now time.Time, ttl time.Duration) store.Approval {
	t.Helper()
	a, err := db.CreateApproval(t.Context(), orgID, store.Approval{
		Tool:      "kadu_tasks_run",
		ToolTitle: "Run a task",
		Arguments: json.RawMessage(`{"id":"tsk_1","input":{"period":"2026-03"}}`),
		Principal: store.ApprovalPrincipal{Issuer: "https://issuer.test", Subject: "user-1", OrgID: orgID,
			Role: "member", Scopes: []string{"kadu.run"}, ClientID: "client-1"},
		ClientID:   "client-1",
		ClientName: "Claude",
		ExpiresAt:  now.Add(ttl),
	}, now)
	wantOK(t, "CreateApproval", err)
	return a
}

func testApprovalCreateGet(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org, other := newOrg(t, db), newOrg(t, db)
	now := time.Now().UTC().Truncate(time.Microsecond)
	a := newApproval(t, db, org, now, 15*time.Minute)
	if !store.ValidID(store.PrefixApproval, a.ID) || a.Status != store.ApprovalPending || a.OrgID != org ||
		!a.CreatedAt.Equal(now) || !a.ExpiresAt.Equal(now.Add(15*time.Minute)) || a.DecidedAt != nil || a.Outcome != nil {
		t.Errorf("created %+v", a)
	}
	got, err := db.GetApproval(ctx, org, a.ID)
	wantOK(t, "GetApproval", err)
	sameJSON(t, "approval read back", got, a)
	var args map[string]any
	if err := json.Unmarshal(got.Arguments, &args); err != nil || args["id"] != "tsk_1" {
		t.Errorf("arguments = %s (%v)", got.Arguments, err)
	}

	// Existence never leaks across organisations.
	_, err = db.GetApproval(ctx, other, a.ID)
	wantErr(t, "GetApproval from another organisation", err, store.ErrNotFound)
	_, err = db.GetApproval(ctx, org, store.NewID(store.PrefixApproval))
	wantErr(t, "GetApproval of an unknown id", err, store.ErrNotFound)

	// A pending approval past its expiry reads as expired.
	if s := got.StatusAt(now.Add(15*time.Minute - time.Microsecond)); s != store.ApprovalPending {
		t.Errorf("StatusAt just before expiry = %s, want pending", s)
	}
	if s := got.StatusAt(now.Add(15 * time.Minute)); s != store.ApprovalExpired {
		t.Errorf("StatusAt expiry = %s, want expired", s)
	}

	_, err = db.CreateApproval(ctx, org, store.Approval{Tool: "x", Arguments: json.RawMessage(`{`)}, now)
	if err == nil {
		t.Error("CreateApproval accepted arguments that are not JSON")
	}
}

func testApprovalDecide(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org, other := newOrg(t, db), newOrg(t, db)
	now := time.Now().UTC().Truncate(time.Microsecond)

	a := newApproval(t, db, org, now, time.Minute)
	_, err := db.DecideApproval(ctx, other, a.ID, store.ApprovalApproved, now)
	wantErr(t, "DecideApproval from another organisation", err, store.ErrNotFound)
	got, err := db.DecideApproval(ctx, org, a.ID, store.ApprovalApproved, now.Add(time.Second))
	wantOK(t, "DecideApproval", err)
	if got.Status != store.ApprovalApproved || got.DecidedAt == nil || !got.DecidedAt.Equal(now.Add(time.Second)) {
		t.Errorf("approved = %+v", got)
	}
	// Single use: a second choice, either way, changes nothing.
	for _, to := range []store.ApprovalStatus{store.ApprovalApproved, store.ApprovalCancelled} {
		got, err := db.DecideApproval(ctx, org, a.ID, to, now.Add(2*time.Second))
		wantErr(t, "deciding twice", err, store.ErrConflict)
		if got.Status != store.ApprovalApproved {
			t.Errorf("after deciding twice: status %s", got.Status)
		}
	}

	c := newApproval(t, db, org, now, time.Minute)
	got, err = db.DecideApproval(ctx, org, c.ID, store.ApprovalCancelled, now)
	wantOK(t, "cancel", err)
	if got.Status != store.ApprovalCancelled || got.Outcome != nil {
		t.Errorf("cancelled = %+v", got)
	}

	// Expired: nothing can be decided any more.
	e := newApproval(t, db, org, now, time.Minute)
	got, err = db.DecideApproval(ctx, org, e.ID, store.ApprovalApproved, now.Add(time.Minute))
	wantErr(t, "deciding an expired approval", err, store.ErrConflict)
	if got.StatusAt(now.Add(time.Minute)) != store.ApprovalExpired || got.DecidedAt != nil {
		t.Errorf("expired approval after a late decision: %+v", got)
	}

	_, err = db.DecideApproval(ctx, org, store.NewID(store.PrefixApproval), store.ApprovalApproved, now)
	wantErr(t, "deciding an unknown approval", err, store.ErrNotFound)
	if _, err := db.DecideApproval(ctx, org, newApproval(t, db, org, now, time.Minute).ID, store.ApprovalFailed, now); err == nil {
		t.Error("DecideApproval accepted failed as a decision")
	}
}

// testApprovalDecideConcurrent: two Continue clicks at once run the call
// once, because exactly one decision wins.
func testApprovalDecideConcurrent(t *testing.T, db *store.DB) {
	org := newOrg(t, db)
	now := time.Now().UTC()
	a := newApproval(t, db, org, now, time.Minute)
	var won, conflicted atomic.Int32
	concurrently(8, func(i int) {
		to := store.ApprovalApproved
		if i%2 == 1 {
			to = store.ApprovalCancelled
		}
		_, err := db.DecideApproval(t.Context(), org, a.ID, to, now)
		switch {
		case err == nil:
			won.Add(1)
		case errors.Is(err, store.ErrConflict):
			conflicted.Add(1)
		default:
			t.Errorf("DecideApproval: %v", err)
		}
	})
	if won.Load() != 1 || conflicted.Load() != 7 {
		t.Errorf("%d decisions won, %d conflicted; want 1 and 7", won.Load(), conflicted.Load())
	}
}

func testApprovalFinish(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org := newOrg(t, db)
	now := time.Now().UTC().Truncate(time.Microsecond)
	outcome := json.RawMessage(`{"content":[{"type":"text","text":"{\"id\":\"exe_1\"}"}]}`)

	pending := newApproval(t, db, org, now, time.Minute)
	_, err := db.FinishApproval(ctx, org, pending.ID, store.ApprovalApproved, outcome, now)
	wantErr(t, "finishing a pending approval", err, store.ErrConflict)

	a := newApproval(t, db, org, now, time.Minute)
	_, err = db.DecideApproval(ctx, org, a.ID, store.ApprovalApproved, now)
	wantOK(t, "DecideApproval", err)
	got, err := db.FinishApproval(ctx, org, a.ID, store.ApprovalApproved, outcome, now.Add(time.Second))
	wantOK(t, "FinishApproval", err)
	if got.Status != store.ApprovalApproved || !got.UpdatedAt.Equal(now.Add(time.Second)) {
		t.Errorf("finished = %+v", got)
	}
	var o map[string]any
	if err := json.Unmarshal(got.Outcome, &o); err != nil || o["content"] == nil {
		t.Errorf("outcome = %s (%v)", got.Outcome, err)
	}
	_, err = db.FinishApproval(ctx, org, a.ID, store.ApprovalFailed, outcome, now)
	wantErr(t, "finishing twice", err, store.ErrConflict)

	f := newApproval(t, db, org, now, time.Minute)
	_, err = db.DecideApproval(ctx, org, f.ID, store.ApprovalApproved, now)
	wantOK(t, "DecideApproval", err)
	got, err = db.FinishApproval(ctx, org, f.ID, store.ApprovalFailed, json.RawMessage(`{"content":[],"isError":true}`), now)
	wantOK(t, "FinishApproval failed", err)
	if got.Status != store.ApprovalFailed {
		t.Errorf("status = %s, want failed", got.Status)
	}
	_, err = db.FinishApproval(ctx, org, store.NewID(store.PrefixApproval), store.ApprovalApproved, outcome, now)
	wantErr(t, "finishing an unknown approval", err, store.ErrNotFound)
}

func testConfirmStateClaim(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org, other := newOrg(t, db), newOrg(t, db)
	now := time.Now().UTC().Truncate(time.Microsecond)
	exp := now.Add(5 * time.Minute)

	cs, claimed, err := db.ClaimConfirmState(ctx, org, "nonce-1", store.ConfirmAccepted, exp, now)
	wantOK(t, "ClaimConfirmState", err)
	if !claimed || cs.Status != store.ConfirmAccepted || !cs.ExpiresAt.Equal(exp) || cs.Outcome != nil {
		t.Errorf("first claim = %+v, %v", cs, claimed)
	}
	// A second answer to the same state, even a different one, finds the
	// first.
	cs, claimed, err = db.ClaimConfirmState(ctx, org, "nonce-1", store.ConfirmDeclined, exp, now)
	wantOK(t, "ClaimConfirmState again", err)
	if claimed || cs.Status != store.ConfirmAccepted {
		t.Errorf("second claim = %+v, %v; want the accepted record, not claimed", cs, claimed)
	}
	_, _, err = db.ClaimConfirmState(ctx, other, "nonce-1", store.ConfirmAccepted, exp, now)
	wantErr(t, "claiming another organisation's nonce", err, store.ErrConflict)
	_, err = db.GetConfirmState(ctx, other, "nonce-1")
	wantErr(t, "reading another organisation's nonce", err, store.ErrNotFound)

	cs, claimed, err = db.ClaimConfirmState(ctx, org, "nonce-2", store.ConfirmDeclined, exp, now)
	wantOK(t, "decline", err)
	if !claimed || cs.Status != store.ConfirmDeclined {
		t.Errorf("decline = %+v, %v", cs, claimed)
	}
	got, err := db.GetConfirmState(ctx, org, "nonce-2")
	wantOK(t, "GetConfirmState", err)
	sameJSON(t, "declined state read back", got, cs)
	_, err = db.GetConfirmState(ctx, org, "nonce-never")
	wantErr(t, "an unanswered nonce", err, store.ErrNotFound)
}

// testConfirmStateClaimConcurrent: concurrent accepts of one state, on any
// replica, claim it once.
func testConfirmStateClaimConcurrent(t *testing.T, db *store.DB) {
	org := newOrg(t, db)
	now := time.Now().UTC()
	var claims atomic.Int32
	concurrently(8, func(int) {
		_, claimed, err := db.ClaimConfirmState(t.Context(), org, "shared", store.ConfirmAccepted, now.Add(time.Minute), now)
		if err != nil {
			t.Errorf("ClaimConfirmState: %v", err)
		}
		if claimed {
			claims.Add(1)
		}
	})
	if claims.Load() != 1 {
		t.Errorf("%d claims won, want 1", claims.Load())
	}
}

// testConfirmStateOutcomeConcurrent: the run of a confirmed call and the
// retries that declare it interrupted (core/confirm/interrupted.go) record
// an outcome at once, on any replica: exactly one is kept, and everyone
// reads that one.
func testConfirmStateOutcomeConcurrent(t *testing.T, db *store.DB) {
	org := newOrg(t, db)
	now := time.Now().UTC()
	_, _, err := db.ClaimConfirmState(t.Context(), org, "raced", store.ConfirmAccepted, now.Add(time.Minute), now)
	wantOK(t, "ClaimConfirmState", err)
	var wins atomic.Int32
	var winner atomic.Value
	concurrently(8, func(i int) {
		out := json.RawMessage(fmt.Sprintf(`{"result":{"content":[{"type":"text","text":"writer %d"}]}}`, i))
		switch err := db.RecordConfirmOutcome(t.Context(), org, "raced", out); {
		case err == nil:
			wins.Add(1)
			winner.Store(string(out))
		case !errors.Is(err, store.ErrConflict):
			t.Errorf("RecordConfirmOutcome: %v; want nil or ErrConflict", err)
		}
	})
	if wins.Load() != 1 {
		t.Fatalf("%d outcomes recorded, want 1", wins.Load())
	}
	got, err := db.GetConfirmState(t.Context(), org, "raced")
	wantOK(t, "GetConfirmState", err)
	var a, b any
	if json.Unmarshal(got.Outcome, &a) != nil || json.Unmarshal([]byte(winner.Load().(string)), &b) != nil ||
		fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("stored outcome %s, want the winner's %s", got.Outcome, winner.Load())
	}
}

// testApprovalFinishConcurrent: the same for an approved call.
func testApprovalFinishConcurrent(t *testing.T, db *store.DB) {
	org := newOrg(t, db)
	now := time.Now().UTC()
	a := newApproval(t, db, org, now, time.Minute)
	_, err := db.DecideApproval(t.Context(), org, a.ID, store.ApprovalApproved, now)
	wantOK(t, "DecideApproval", err)
	var wins atomic.Int32
	concurrently(8, func(i int) {
		to := store.ApprovalApproved
		if i%2 == 1 {
			to = store.ApprovalFailed
		}
		out := json.RawMessage(fmt.Sprintf(`{"content":[{"type":"text","text":"writer %d"}]}`, i))
		got, err := db.FinishApproval(t.Context(), org, a.ID, to, out, now)
		switch {
		case err == nil:
			wins.Add(1)
		case !errors.Is(err, store.ErrConflict):
			t.Errorf("FinishApproval: %v; want nil or ErrConflict", err)
		case got.Outcome == nil:
			t.Error("FinishApproval lost the race but returned no outcome: the caller cannot answer the recorded one")
		}
	})
	if wins.Load() != 1 {
		t.Errorf("%d outcomes recorded, want 1", wins.Load())
	}
}

func testConfirmStateOutcome(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org := newOrg(t, db)
	now := time.Now().UTC()
	outcome := json.RawMessage(`{"result":{"content":[{"type":"text","text":"ran"}]}}`)

	_, _, err := db.ClaimConfirmState(ctx, org, "ran", store.ConfirmAccepted, now.Add(time.Minute), now)
	wantOK(t, "ClaimConfirmState", err)
	wantOK(t, "RecordConfirmOutcome", db.RecordConfirmOutcome(ctx, org, "ran", outcome))
	got, err := db.GetConfirmState(ctx, org, "ran")
	wantOK(t, "GetConfirmState", err)
	var o map[string]any
	if err := json.Unmarshal(got.Outcome, &o); err != nil || o["result"] == nil {
		t.Errorf("outcome = %s (%v)", got.Outcome, err)
	}
	wantErr(t, "recording twice", db.RecordConfirmOutcome(ctx, org, "ran", outcome), store.ErrConflict)

	_, _, err = db.ClaimConfirmState(ctx, org, "no", store.ConfirmDeclined, now.Add(time.Minute), now)
	wantOK(t, "ClaimConfirmState declined", err)
	wantErr(t, "recording on a declined state", db.RecordConfirmOutcome(ctx, org, "no", outcome), store.ErrConflict)
	wantErr(t, "recording on an unknown state", db.RecordConfirmOutcome(ctx, org, "unknown", outcome), store.ErrNotFound)
}

func testPurgeConfirmations(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org := newOrg(t, db)
	now := time.Now().UTC().Truncate(time.Microsecond)

	live := newApproval(t, db, org, now, time.Minute)
	lapsed := newApproval(t, db, org, now.Add(-time.Hour), time.Minute)
	ancient := newApproval(t, db, org, now.Add(-store.ApprovalRetention-time.Hour), time.Minute)
	decided := newApproval(t, db, org, now, time.Minute)
	_, err := db.DecideApproval(ctx, org, decided.ID, store.ApprovalCancelled, now)
	wantOK(t, "DecideApproval", err)
	_, _, err = db.ClaimConfirmState(ctx, org, "old", store.ConfirmAccepted, now.Add(-time.Second), now.Add(-time.Minute))
	wantOK(t, "ClaimConfirmState old", err)
	_, _, err = db.ClaimConfirmState(ctx, org, "fresh", store.ConfirmAccepted, now.Add(time.Minute), now)
	wantOK(t, "ClaimConfirmState fresh", err)

	p, err := db.PurgeConfirmations(ctx, now)
	wantOK(t, "PurgeConfirmations", err)
	if p != (store.PurgedConfirmations{ExpiredApprovals: 2, Approvals: 1, States: 1}) {
		t.Errorf("purged %+v, want 2 expired (lapsed, ancient), 1 approval (ancient), 1 state (old)", p)
	}
	for id, want := range map[string]store.ApprovalStatus{live.ID: store.ApprovalPending,
		lapsed.ID: store.ApprovalExpired, decided.ID: store.ApprovalCancelled} {
		got, err := db.GetApproval(ctx, org, id)
		wantOK(t, "GetApproval after purge", err)
		if got.Status != want {
			t.Errorf("approval %s is %s, want %s", id, got.Status, want)
		}
	}
	_, err = db.GetApproval(ctx, org, ancient.ID)
	wantErr(t, "the ancient approval", err, store.ErrNotFound)
	_, err = db.GetConfirmState(ctx, org, "old")
	wantErr(t, "the expired state", err, store.ErrNotFound)
	_, err = db.GetConfirmState(ctx, org, "fresh")
	wantOK(t, "the fresh state", err)
}

// testExpireApprovalsAudited: each expiry appends one approval.expired
// event to its organisation's chain, in the transaction that marks it; a
// second sweep, and PurgeConfirmations after it, find nothing to expire.
func testExpireApprovalsAudited(t *testing.T, db *store.DB) {
	ctx := t.Context()
	now := time.Now().UTC().Truncate(time.Microsecond)
	orgA, orgB := newOrg(t, db), newOrg(t, db)
	a := newApproval(t, db, orgA, now.Add(-time.Hour), time.Minute)
	b := newApproval(t, db, orgB, now.Add(-time.Hour), time.Minute)
	live := newApproval(t, db, orgA, now, time.Minute)
	var built []string
	expired, err := db.ExpireApprovals(ctx, now, func(ap store.Approval) store.AuditRecord {
		built = append(built, ap.ID)
		return store.AuditRecord{OrgID: "someone else", Action: "not this", Surface: store.SurfaceSystem,
			Subject: ap.Principal.Subject, Tool: ap.Tool, ResourceID: ap.ID, Outcome: store.OutcomeDeclined, TraceID: "trace-1"}
	})
	wantOK(t, "ExpireApprovals", err)
	if len(expired) != 2 || len(built) != 2 {
		t.Fatalf("expired %d, built %d records; want 2 (a, b)", len(expired), len(built))
	}
	for org, id := range map[string]string{orgA: a.ID, orgB: b.ID} {
		page, err := db.ListAudit(ctx, org, store.AuditFilter{}, store.ListParams{})
		wantOK(t, "ListAudit", err)
		if len(page.Items) != 1 {
			t.Fatalf("%s: %d events, want 1", org, len(page.Items))
		}
		e := page.Items[0]
		if e.OrgID != org || e.Action != store.AuditApprovalExpired || e.ResourceID != id || e.Subject != "user-1" ||
			e.TraceID != "trace-1" || e.Outcome != store.OutcomeDeclined {
			t.Errorf("%s: event %+v; want approval.expired of %s in its own chain", org, e.AuditRecord, id)
		}
	}
	again, err := db.ExpireApprovals(ctx, now, nil)
	wantOK(t, "ExpireApprovals again", err)
	p, err := db.PurgeConfirmations(ctx, now)
	wantOK(t, "PurgeConfirmations", err)
	if len(again) != 0 || p.ExpiredApprovals != 0 {
		t.Errorf("second sweep expired %d, purge %d; want none", len(again), p.ExpiredApprovals)
	}
	// Past the live one's expiry, PurgeConfirmations records it from the
	// approval alone.
	p, err = db.PurgeConfirmations(ctx, now.Add(2*time.Minute))
	wantOK(t, "PurgeConfirmations later", err)
	page, err := db.ListAudit(ctx, orgA, store.AuditFilter{Action: store.AuditApprovalExpired}, store.ListParams{})
	wantOK(t, "ListAudit", err)
	if p.ExpiredApprovals != 1 || len(page.Items) != 2 || page.Items[0].ResourceID != live.ID ||
		page.Items[0].Subject != "user-1" || page.Items[0].ClientName != "Claude" || page.Items[0].Surface != store.SurfaceSystem {
		t.Errorf("purge expired %d; events %+v; want the live one recorded from the approval", p.ExpiredApprovals, page.Items)
	}
}
