package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/kobana/kadu/core/canonjson"
)

// Appending to a chain (docs/audit.md#the-hash). The head row of a chain is
// the lock: an append upserts it first (last_seq + 1), which on PostgreSQL
// holds the row until the transaction ends, so concurrent appends from any
// replica take turns and each sees the hash its predecessor committed; on
// SQLite write transactions are serialised anyway.

// pending states of a PendingAudit.
const (
	pendingOpen     int32 = iota // waiting for a transaction
	pendingClaimed               // a transaction is appending it
	pendingAppended              // a committed transaction holds it
)

// pendingFrom returns the record ctx carries and that no transaction has
// claimed yet, or nil.
func pendingFrom(ctx context.Context) *PendingAudit {
	p, _ := ctx.Value(auditKey{}).(*PendingAudit)
	if p == nil || p.state.Load() != pendingOpen {
		return nil
	}
	return p
}

// claim reserves p for one transaction; false if another has it.
func (p *PendingAudit) claim() bool { return p.state.CompareAndSwap(pendingOpen, pendingClaimed) }

// release gives p back after the claiming transaction rolled back.
func (p *PendingAudit) release() { p.state.CompareAndSwap(pendingClaimed, pendingOpen) }

// committed marks p appended, once its transaction has committed.
func (p *PendingAudit) committed() { p.state.Store(pendingAppended) }

// withoutPending hides ctx's pending record from the transactions run on the
// returned context: AppendAudit's own transaction must not take it too.
func withoutPending(ctx context.Context) context.Context {
	if ctx.Value(auditKey{}) == nil {
		return ctx
	}
	return context.WithValue(ctx, auditKey{}, (*PendingAudit)(nil))
}

// AppendAudit appends rec to its chain and returns the stored event. On a Tx
// it runs in that transaction. A record ctx carries (WithAudit) is not
// appended by this call's transaction.
func (o *ops) AppendAudit(ctx context.Context, rec AuditRecord) (AuditEvent, error) {
	ctx = withoutPending(ctx)
	var e AuditEvent
	err := o.inTx(ctx, func(q querier) error {
		var err error
		e, err = appendAudit(ctx, q, o.d, o.clock, rec)
		return err
	})
	return e, err
}

// checkAuditRecord refuses a record the trail could not be read by.
func checkAuditRecord(rec AuditRecord) error {
	switch {
	case rec.Action == "":
		return errors.New("store: audit record without an action")
	case rec.Outcome == "":
		return errors.New("store: audit record without an outcome")
	case rec.Surface == "":
		return errors.New("store: audit record without a surface")
	}
	return nil
}

// appendAudit appends rec to its chain through q, which must be a
// transaction.
func appendAudit(ctx context.Context, q querier, d dialect, clock func() time.Time, rec AuditRecord) (AuditEvent, error) {
	if err := checkAuditRecord(rec); err != nil {
		return AuditEvent{}, err
	}
	now := clock()
	e := AuditEvent{AuditRecord: rec, ID: NewID(PrefixAudit)}
	if e.OccurredAt.IsZero() {
		e.OccurredAt = now
	}
	e.OccurredAt = e.OccurredAt.UTC().Truncate(time.Microsecond)
	if len(e.Scopes) == 0 {
		e.Scopes = nil
	} else {
		e.Scopes = slices.Clone(e.Scopes)
	}
	err := q.QueryRowContext(ctx, `INSERT INTO audit_heads (org_id, last_seq, last_hash, updated_at)
		VALUES ($1, 1, '', $2)
		ON CONFLICT (org_id) DO UPDATE SET last_seq = audit_heads.last_seq + 1, updated_at = $2
		RETURNING last_seq, last_hash`, rec.OrgID, d.timeArg(now)).Scan(&e.Seq, &e.PrevHash)
	if err != nil {
		return AuditEvent{}, fmt.Errorf("advancing the audit chain of %q: %w", rec.OrgID, err)
	}
	e.Hash = auditHash(e)
	_, err = q.ExecContext(ctx, `INSERT INTO audit_events (`+auditColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23)`,
		e.ID, e.OrgID, e.Seq, d.timeArg(e.OccurredAt), e.Action, e.Surface, e.Issuer, e.Subject, e.Role,
		scopesJSON(e.Scopes), e.ClientID, e.ClientName, e.Tool, e.Route, e.ResourceID, e.ArgsDigest,
		e.Outcome, e.Status, e.Detail, e.RequestID, e.TraceID, e.PrevHash, e.Hash)
	if err != nil {
		return AuditEvent{}, fmt.Errorf("appending audit event %d of %q: %w", e.Seq, rec.OrgID, err)
	}
	_, err = q.ExecContext(ctx, `UPDATE audit_heads SET last_hash = $2 WHERE org_id = $1`, rec.OrgID, e.Hash)
	if err != nil {
		return AuditEvent{}, fmt.Errorf("advancing the audit chain of %q: %w", rec.OrgID, err)
	}
	return e, nil
}

// scopesJSON is the stored form of scopes: a JSON array, [] for none.
func scopesJSON(scopes []string) string {
	if scopes == nil {
		scopes = []string{}
	}
	return mustJSON(scopes)
}

// auditTimeFormat is the event's time as hashed: UTC, microseconds, fixed
// width; both back-ends store exactly that precision.
const auditTimeFormat = "2006-01-02T15:04:05.000000Z"

// hashedEvent is what an event's hash covers, besides the previous hash:
// every stored member but the two hashes.
type hashedEvent struct {
	ID         string   `json:"id"`
	OrgID      string   `json:"org_id"`
	Seq        int64    `json:"seq"`
	OccurredAt string   `json:"occurred_at"`
	Action     string   `json:"action"`
	Surface    string   `json:"surface"`
	Issuer     string   `json:"issuer"`
	Subject    string   `json:"subject"`
	Role       string   `json:"role"`
	Scopes     []string `json:"scopes"`
	ClientID   string   `json:"client_id"`
	ClientName string   `json:"client_name"`
	Tool       string   `json:"tool"`
	Route      string   `json:"route"`
	ResourceID string   `json:"resource_id"`
	ArgsDigest string   `json:"args_digest"`
	Outcome    string   `json:"outcome"`
	Status     int      `json:"status"`
	Detail     string   `json:"detail"`
	RequestID  string   `json:"request_id"`
	TraceID    string   `json:"trace_id"`
}

// auditHash returns hex(sha256(e.PrevHash ‖ canonical JSON of e)), the
// definition of docs/audit.md#the-hash.
func auditHash(e AuditEvent) string {
	scopes := e.Scopes
	if scopes == nil {
		scopes = []string{}
	}
	raw, err := json.Marshal(hashedEvent{
		ID: e.ID, OrgID: e.OrgID, Seq: e.Seq, OccurredAt: e.OccurredAt.UTC().Format(auditTimeFormat),
		Action: e.Action, Surface: e.Surface, Issuer: e.Issuer, Subject: e.Subject, Role: e.Role,
		Scopes: scopes, ClientID: e.ClientID, ClientName: e.ClientName, Tool: e.Tool, Route: e.Route,
		ResourceID: e.ResourceID, ArgsDigest: e.ArgsDigest, Outcome: e.Outcome, Status: e.Status,
		Detail: e.Detail, RequestID: e.RequestID, TraceID: e.TraceID,
	})
	if err != nil {
		panic(fmt.Sprintf("store: encoding an audit event: %v", err)) // strings and integers only
	}
	canon, err := canonjson.Transform(raw)
	if err != nil {
		panic(fmt.Sprintf("store: canonicalising an audit event: %v", err)) // json.Marshal's output is JSON
	}
	h := sha256.New()
	h.Write([]byte(e.PrevHash))
	h.Write(canon)
	return hex.EncodeToString(h.Sum(nil))
}

// auditedWriter is the DB's single-statement writer: a statement whose
// context carries a pending audit record runs in a transaction of its own,
// which appends the record (DB.runTx), so that the record commits with the
// change. A statement that changes no row is rolled back instead and leaves
// the record pending: nothing happened that it could record.
type auditedWriter struct {
	querier
	inTx func(ctx context.Context, fn func(q querier) error) error
}

// errNoChange rolls back the transaction of a statement that changed nothing.
var errNoChange = errors.New("store: the statement changed no row")

func (w auditedWriter) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if pendingFrom(ctx) == nil {
		return w.querier.ExecContext(ctx, query, args...)
	}
	var res sql.Result
	err := w.inTx(ctx, func(q querier) error {
		var err error
		res, err = q.ExecContext(ctx, query, args...)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err == nil && n == 0 {
			return errNoChange
		}
		return nil
	})
	if errors.Is(err, errNoChange) {
		return res, nil
	}
	return res, err
}

// writeOne runs fn, a write of one statement that reads rows back, on the
// writer; in a transaction of its own when ctx carries a pending audit
// record, as auditedWriter does for ExecContext.
func (o *ops) writeOne(ctx context.Context, fn func(q querier) error) error {
	if pendingFrom(ctx) == nil {
		return fn(o.write)
	}
	return o.inTx(ctx, fn)
}

// appendPending appends the record ctx carries, if any is still open, in tx
// (DB.runTx calls it before committing). It returns the claimed record, to
// be marked committed or released by the caller.
func appendPending(ctx context.Context, q querier, d dialect, clock func() time.Time) (*PendingAudit, error) {
	p := pendingFrom(ctx)
	if p == nil || !p.claim() {
		return nil, nil
	}
	if _, err := appendAudit(ctx, q, d, clock, p.Record); err != nil {
		p.release()
		return nil, err
	}
	return p, nil
}
