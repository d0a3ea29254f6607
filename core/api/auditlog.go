package api

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/kobana/kadu/core/audit"
	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/store"
)

// Recording the writes of /api/v1 in the audit trail (docs/audit.md#what-is-recorded).
//
// Every POST, PUT, PATCH and DELETE of an organisation that Kadu knows
// leaves one event: the caller, the client, the surface (rest, or mcp when
// a tool call dispatched the route in-process), the route, the digest of
// the body, the outcome and the status. A write that changes something is
// recorded in the transaction of the change: the record rides in the
// handler's context (store.WithAudit) and the first transaction that
// commits on it appends it, so a change without its event, or an event
// of a change rolled back, cannot be. A write that changes nothing — a
// refusal, a failure, an idempotent replay, a no-op — is appended alone
// once answered.

// routeActions are the routes whose event is not a plain rest.write: the
// action names what an auditor looks for.
var routeActions = map[string]string{
	http.MethodPost + " " + BasePath + "/webhooks/{id}/rotate_secret": store.AuditWebhookSecretRotate,
}

// writeAudit is the event of one write request, from the moment its
// organisation is known to its answer.
type writeAudit struct {
	rec     store.AuditRecord
	pending *store.PendingAudit // the record the handler's transaction takes; nil until the handler runs
	// stored is the first problem code of a refusal that idempotent
	// answered and stored itself, so serve sees no error: the event's
	// detail still names the refusal.
	stored string
	// replayed is set when idempotent answered a stored reply, success or
	// refusal: the handler did not run.
	replayed bool
}

// beginWrite starts the event of a write of rt by p: everything known
// before the body is read.
func beginWrite(ctx context.Context, ec echo.Context, rt route, p *auth.Principal) *writeAudit {
	action, ok := routeActions[rt.pattern]
	if !ok {
		action = store.AuditRESTWrite
	}
	rec := audit.NewRecord(ctx, p, action)
	rec.Route = rt.pattern
	rec.ResourceID = ec.Param("id")
	return &writeAudit{rec: rec}
}

// body records the digest of the write's arguments: the body without its
// idempotency key, secrets removed (audit.ArgsDigest).
func (w *writeAudit) body(o *object) {
	if w == nil || o == nil {
		return
	}
	raw, err := json.Marshal(o.m)
	if err != nil {
		return
	}
	w.rec.ArgsDigest = audit.ArgsDigest(raw)
}

// runHandler runs rt's handler for c. For a write, the record of its
// success rides in the handler's context only — not in the idempotency
// claim's nor in the provisioning's, which are other transactions — so
// that it is appended by the transaction of the change itself.
func (a *API) runHandler(c *call, rt route) (*reply, error) {
	if c.audit == nil {
		return rt.h(c)
	}
	rec := c.audit.rec
	rec.Outcome, rec.Status = store.OutcomeSucceeded, rt.okStatus
	req := c.echo.Request()
	ctx, pending := store.WithAudit(req.Context(), rec)
	c.audit.pending = pending
	c.echo.SetRequest(req.WithContext(ctx))
	defer c.echo.SetRequest(req)
	return rt.h(c)
}

// answering tells the event of c the status the handler is about to
// answer, before the transaction that appends it commits: for the routes
// whose success has more than one status (a cancel answers 200 or 202).
func (c *call) answering(status int) {
	if c.audit != nil && c.audit.pending != nil {
		c.audit.pending.Record.Status = status
	}
}

// recordWrite runs serve's work for a write (fn) and then appends the
// event that its transaction did not: a refusal, a failure, a replay, a
// success that changed nothing. A panic is recorded as the 500 it becomes.
func (a *API) recordWrite(c *call, fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			a.appendWrite(c, http.StatusInternalServerError, "panic")
			panic(r)
		}
		status, detail := statusOf(err)
		if err == nil {
			status, detail = c.echo.Response().Status, c.audit.stored
		}
		a.appendWrite(c, status, detail)
	}()
	return fn()
}

// appendWrite appends c's event alone, unless the handler's transaction
// has already appended it.
func (a *API) appendWrite(c *call, status int, detail string) {
	w := c.audit
	if w.pending.Appended() {
		return
	}
	rec := w.rec
	rec.Status, rec.Detail = status, detail
	rec.Outcome = store.OutcomeSucceeded
	if status >= http.StatusBadRequest {
		rec.Outcome = store.OutcomeFailed
	}
	if w.replayed {
		rec.Detail = "idempotent replay" // the handler did not run: the answer was stored
	}
	// The request's own context, without the pending record (the handler's
	// ran with it and is restored), and not cancelled with the client: the
	// request was answered, its event is due.
	ctx := context.WithoutCancel(c.echo.Request().Context())
	if _, err := a.db.AppendAudit(ctx, rec); err != nil {
		a.log.ErrorContext(ctx, "api: recording the audit event of a write",
			slog.String("request_id", rec.RequestID), slog.String("org_id", rec.OrgID),
			slog.String("route", rec.Route), slog.Int("status", status), slog.Any("error", err))
	}
}

// statusOf is the status ErrorHandler answers err with, and the first
// problem's code as the event's detail; 0 and "" for nil.
func statusOf(err error) (int, string) {
	if err == nil {
		return 0, ""
	}
	var ae *Error
	var he *echo.HTTPError
	switch {
	case errors.As(err, &ae):
		if len(ae.Problems) > 0 {
			return ae.Status, ae.Problems[0].Code
		}
		return ae.Status, ""
	case errors.As(err, &he):
		e := fromEcho(he)
		return e.Status, e.Problems[0].Code
	case store.Unavailable(err):
		return http.StatusServiceUnavailable, "unavailable"
	}
	return http.StatusInternalServerError, "internal_error"
}
