package page

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/kobana/kadu/core/audit"
	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/store"
)

// AuditLog appends events to the audit trail (docs/audit.md); *store.DB
// satisfies it.
type AuditLog interface {
	AppendAudit(ctx context.Context, rec store.AuditRecord) (store.AuditEvent, error)
}

// Bounds on the failed sign-ins recorded in the installation's chain
// (docs/audit.md#confirmations-and-approvals). A failed sign-in proves no
// organisation, so anyone who can reach /approve/callback could otherwise
// grow that chain, one write each, as fast as they can send requests. Each
// replica records a burst of failedSignInBurst, then one every
// failedSignInEvery; the failures it skips are counted in the Detail of the
// next one it records, and logged.
const (
	failedSignInBurst = 20
	failedSignInEvery = 10 * time.Second
)

// signInThrottle is a token bucket over failed sign-in events. It is safe
// for concurrent use.
type signInThrottle struct {
	mu      sync.Mutex // guards the fields below
	tokens  float64
	last    time.Time
	skipped int64 // failures not recorded since the last one that was
}

// take reports whether a failed sign-in at now may be recorded and, if so,
// how many were skipped before it.
func (t *signInThrottle) take(now time.Time) (ok bool, skipped int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.last.IsZero():
		t.tokens, t.last = failedSignInBurst, now
	case now.After(t.last): // a clock stepping back refills nothing
		t.tokens = min(failedSignInBurst, t.tokens+now.Sub(t.last).Seconds()/failedSignInEvery.Seconds())
		t.last = now
	}
	if t.tokens < 1 {
		t.skipped++
		return false, 0
	}
	t.tokens--
	skipped, t.skipped = t.skipped, 0
	return true, skipped
}

// auditSignIn records a successful sign-in of pr to approval id in pr's
// organisation's chain. It fails when the event cannot be written: a
// sign-in the trail does not hold does not happen.
func (p *Page) auditSignIn(c echo.Context, pr *auth.Principal, id string) error {
	if p.opts.Audit == nil {
		return nil
	}
	ctx := p.auditContext(c)
	if _, err := p.opts.Audit.AppendAudit(ctx, audit.SignIn(ctx, pr, approvalRef(id), store.OutcomeSucceeded, "")); err != nil {
		return fmt.Errorf("recording the sign-in: %w", err)
	}
	return nil
}

// auditSignInFailed records a failed sign-in to approval id in the
// installation's chain (no organisation was proven), within the throttle.
// A failure to record is logged: the person is refused either way.
func (p *Page) auditSignInFailed(c echo.Context, id string, status int, detail string) {
	if p.opts.Audit == nil {
		return
	}
	ok, skipped := p.failed.take(p.now())
	if !ok {
		return
	}
	if skipped > 0 {
		p.log.Warn("approval page: failed sign-ins not recorded one by one in the audit trail (rate limit)", "skipped", skipped)
		detail = fmt.Sprintf("%s (and %d failed sign-ins before it not recorded one by one: rate limit)", detail, skipped)
	}
	ctx := p.auditContext(c)
	rec := audit.SignIn(ctx, nil, approvalRef(id), store.OutcomeFailed, detail)
	rec.Status = status
	if _, err := p.opts.Audit.AppendAudit(ctx, rec); err != nil {
		p.log.Error("approval page: recording a failed sign-in in the audit trail", slog.Any("error", err))
	}
}

// auditContext is the request's context carrying the page's audit Call:
// the approval page surface and the request's id.
func (p *Page) auditContext(c echo.Context) context.Context {
	return audit.WithCall(c.Request().Context(), audit.Call{Surface: store.SurfaceApproval, RequestID: requestID(c)})
}

// requestID returns the request's id (X-Request-Id of the response),
// giving it one if nothing in front of the page did, so that a person can
// quote it and an auditor find its event.
func requestID(c echo.Context) string {
	h := c.Response().Header()
	if id := h.Get(echo.HeaderXRequestID); id != "" {
		return id
	}
	var b [12]byte
	_, _ = rand.Read(b[:])
	id := "req_" + hex.EncodeToString(b[:])
	h.Set(echo.HeaderXRequestID, id)
	return id
}

// approvalRef is id when it is an approval id, else "": what a sign-in
// cookie names is only trusted as far as its form.
func approvalRef(id string) string {
	if store.ValidID(store.PrefixApproval, id) {
		return id
	}
	return ""
}
