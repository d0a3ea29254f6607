package page

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kobana/kadu/core/store"
)

// auditRecorder is the audit trail in memory; err, when set, refuses every
// append.
type auditRecorder struct {
	mu   sync.Mutex
	recs []store.AuditRecord
	err  error
}

func (r *auditRecorder) AppendAudit(_ context.Context, rec store.AuditRecord) (store.AuditEvent, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return store.AuditEvent{}, r.err
	}
	r.recs = append(r.recs, rec)
	return store.AuditEvent{AuditRecord: rec}, nil
}

// take returns the records appended since the last call.
func (r *auditRecorder) take() []store.AuditRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.recs
	r.recs = nil
	return out
}

func newAuditedEnv(t *testing.T) (*env, *auditRecorder) {
	rec := &auditRecorder{}
	return newEnv(t, func(o *Options) { o.Audit = rec }), rec
}

// TestSignInAuditEvents: a successful sign-in is recorded in the
// organisation it proves, with who signed in and for which approval; each
// failed one in the installation's chain, with no one, its status and why.
func TestSignInAuditEvents(t *testing.T) {
	env, rec := newAuditedEnv(t)
	a := env.pending("alice", "org_acme")
	failures := []struct {
		name       string
		query      func(state string) string
		wantStatus int
		wantDetail string
	}{
		{"state mismatch", func(string) string { return "code=x&state=forged" }, http.StatusBadRequest, "no sign-in of this browser"},
		{"declined at the issuer", func(s string) string { return "error=access_denied&state=" + s }, http.StatusForbidden, "access_denied"},
		{"issuer error", func(s string) string { return "error=server_error&state=" + s }, http.StatusBadRequest, "server_error"},
		{"another issuer answered", func(s string) string { return "code=x&iss=https%3A%2F%2Fevil.example&state=" + s }, http.StatusBadRequest, "another issuer"},
		{"bad code", func(s string) string { return "code=not-a-code&state=" + s }, http.StatusBadGateway, "code exchange"},
		{"no code", func(s string) string { return "state=" + s }, http.StatusBadRequest, "no authorization code"},
	}
	for _, tt := range failures {
		t.Run(tt.name, func(t *testing.T) {
			b := env.browser(t)
			authz, _ := url.Parse(b.get(approvePath + a.ID).loc)
			rec.take()
			r := b.get("/approve/callback?" + tt.query(authz.Query().Get("state")))
			got := rec.take()
			if len(got) != 1 {
				t.Fatalf("%d events, want 1: %+v", len(got), got)
			}
			e := got[0]
			if e.Action != store.AuditApprovalSignIn || e.Outcome != store.OutcomeFailed || e.OrgID != store.InstallationChain ||
				e.Subject != "" || e.Surface != store.SurfaceApproval || e.Status != tt.wantStatus ||
				!strings.Contains(e.Detail, tt.wantDetail) || e.RequestID == "" || e.RequestID != r.header.Get("X-Request-Id") {
				t.Errorf("event %+v; want a failed sign-in with status %d and %q (X-Request-Id %q)", e, tt.wantStatus, tt.wantDetail, r.header.Get("X-Request-Id"))
			}
			if tt.name != "state mismatch" && e.ResourceID != a.ID {
				t.Errorf("resource %q, want the approval %s the sign-in was for", e.ResourceID, a.ID)
			}
		})
	}

	b := env.browser(t)
	if r := b.open(a.ID, "alice", "org_acme"); r.status != http.StatusOK || !strings.Contains(r.body, `name="form"`) {
		t.Fatalf("sign-in: %d\n%s", r.status, r.body)
	}
	got := rec.take()
	if len(got) != 1 {
		t.Fatalf("%d events after a sign-in, want 1: %+v", len(got), got)
	}
	if e := got[0]; e.Action != store.AuditApprovalSignIn || e.Outcome != store.OutcomeSucceeded || e.OrgID != "org_acme" ||
		e.Subject != "alice" || e.Issuer != env.issuer || e.Surface != store.SurfaceApproval || e.ResourceID != a.ID || e.RequestID == "" {
		t.Errorf("sign-in event %+v", e)
	}
	// Pages seen while signed in are no sign-ins.
	b.get(approvePath + a.ID)
	if got := rec.take(); len(got) != 0 {
		t.Errorf("reading the page while signed in recorded %+v", got)
	}
}

// TestSignInRefusedWhenNotRecorded: a sign-in the audit trail cannot hold
// does not happen: no session, the person is told something went wrong.
func TestSignInRefusedWhenNotRecorded(t *testing.T) {
	env, rec := newAuditedEnv(t)
	rec.err = errors.New("disk full")
	a := env.pending("alice", "org_acme")
	b := env.browser(t)
	r := b.open(a.ID, "alice", "org_acme")
	if r.status != http.StatusInternalServerError || strings.Contains(r.body, `name="form"`) {
		t.Fatalf("sign-in with the trail unavailable: %d\n%s", r.status, r.body)
	}
	if r := b.get(approvePath + a.ID); r.status != http.StatusSeeOther || !strings.Contains(r.loc, "/oauth/authorize") {
		t.Errorf("after the refused sign-in the page is %d → %s; want a new sign-in", r.status, r.loc)
	}
}

// TestFailedSignInsAreBounded: forged callbacks, as fast as one can send
// them, add at most failedSignInBurst events at once, then one every
// failedSignInEvery; the next one recorded says how many were skipped.
func TestFailedSignInsAreBounded(t *testing.T) {
	env, rec := newAuditedEnv(t)
	const forged = 3 * failedSignInBurst
	for range forged {
		if r := env.browser(t).get("/approve/callback?code=x&state=y"); r.status != http.StatusBadRequest {
			t.Fatalf("forged callback: %d, want 400", r.status)
		}
	}
	if got := rec.take(); len(got) != failedSignInBurst {
		t.Fatalf("%d forged callbacks recorded %d events, want the burst of %d", forged, len(got), failedSignInBurst)
	}
	env.clock.Advance(failedSignInEvery)
	env.browser(t).get("/approve/callback?code=x&state=y")
	env.browser(t).get("/approve/callback?code=x&state=y")
	got := rec.take()
	if len(got) != 1 || !strings.Contains(got[0].Detail, "40 failed sign-ins before it not recorded") {
		t.Fatalf("after %s: %+v; want one event counting the 40 skipped", failedSignInEvery, got)
	}
}

func TestSignInThrottle(t *testing.T) {
	var th signInThrottle
	now := time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)
	for i := range failedSignInBurst {
		if ok, _ := th.take(now); !ok {
			t.Fatalf("take %d of the burst refused", i)
		}
	}
	if ok, _ := th.take(now); ok {
		t.Fatal("take past the burst allowed")
	}
	if ok, skipped := th.take(now.Add(failedSignInEvery / 2)); ok || skipped != 0 {
		t.Fatalf("half an interval later: %t %d, want refused", ok, skipped)
	}
	if ok, skipped := th.take(now.Add(failedSignInEvery)); !ok || skipped != 2 {
		t.Fatalf("an interval later: %t, skipped %d; want allowed, 2 skipped", ok, skipped)
	}
	// A clock that steps back refills nothing, and stepping forward again
	// refills only from the latest time seen.
	if ok, _ := th.take(now); ok {
		t.Fatal("a step back in time refilled the bucket")
	}
	if ok, _ := th.take(now.Add(failedSignInEvery * 3 / 2)); ok {
		t.Fatal("half an interval after the latest take refilled a whole token")
	}
}
