package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
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
		e.Scopes = slices.Clone(e.Scopes[:min(len(e.Scopes), auditMaxScopes)])
	}
	boundAuditStrings(&e.AuditRecord)
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

// auditHash returns hex(sha256(e.PrevHash ‖ canonical JSON of e)), the
// definition of docs/audit.md#the-hash.
func auditHash(e AuditEvent) string {
	h := sha256.New()
	h.Write([]byte(e.PrevHash))
	h.Write(canonicalAuditEvent(e))
	return hex.EncodeToString(h.Sum(nil))
}

// canonicalAuditEvent returns the RFC 8785 form of what an event's hash
// covers besides the previous hash: every stored member but the two
// hashes. It writes that form directly (members in their sorted order,
// integers, strings escaped as RFC 8785 §3.2.2.2 says), because going
// through canonjson.Transform costs a hundred times more and verification
// hashes every event; the fuzz test FuzzCanonicalAuditEvent holds it equal
// to canonjson.Transform of the same object.
func canonicalAuditEvent(e AuditEvent) []byte {
	b := make([]byte, 0, 512)
	str := func(key, v string) {
		b = append(b, '"')
		b = append(b, key...)
		b = append(b, `":`...)
		b = appendCanonString(b, v)
		b = append(b, ',')
	}
	num := func(key string, v int64) {
		b = append(b, '"')
		b = append(b, key...)
		b = append(b, `":`...)
		b = strconv.AppendInt(b, v, 10)
		b = append(b, ',')
	}
	b = append(b, '{')
	str("action", e.Action)
	str("args_digest", e.ArgsDigest)
	str("client_id", e.ClientID)
	str("client_name", e.ClientName)
	str("detail", e.Detail)
	str("id", e.ID)
	str("issuer", e.Issuer)
	str("occurred_at", e.OccurredAt.UTC().Format(auditTimeFormat))
	str("org_id", e.OrgID)
	str("outcome", e.Outcome)
	str("request_id", e.RequestID)
	str("resource_id", e.ResourceID)
	str("role", e.Role)
	str("route", e.Route)
	b = append(b, `"scopes":[`...)
	for i, s := range e.Scopes {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendCanonString(b, s)
	}
	b = append(b, "],"...)
	num("seq", e.Seq)
	num("status", int64(e.Status))
	str("subject", e.Subject)
	str("surface", e.Surface)
	str("tool", e.Tool)
	b = append(b, `"trace_id":`...)
	b = appendCanonString(b, e.TraceID)
	return append(b, '}')
}

// appendCanonString appends s as an RFC 8785 string: only quote, backslash
// and control characters escaped, with the short forms where they exist;
// invalid UTF-8 becomes U+FFFD, as encoding/json makes it.
func appendCanonString(b []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	for _, r := range s {
		switch r {
		case '"':
			b = append(b, `\"`...)
		case '\\':
			b = append(b, `\\`...)
		case '\b':
			b = append(b, `\b`...)
		case '\f':
			b = append(b, `\f`...)
		case '\n':
			b = append(b, `\n`...)
		case '\r':
			b = append(b, `\r`...)
		case '\t':
			b = append(b, `\t`...)
		default:
			if r < 0x20 {
				b = append(b, `\u00`...)
				b = append(b, hexDigits[r>>4], hexDigits[r&0xf])
			} else {
				b = utf8.AppendRune(b, r)
			}
		}
	}
	return append(b, '"')
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
	rec := p.Record
	if c := p.created.Load(); c != nil && rec.ResourceID == "" {
		rec.ResourceID = *c
	}
	if _, err := appendAudit(ctx, q, d, clock, rec); err != nil {
		p.release()
		return nil, err
	}
	return p, nil
}

// noteCreated gives the record ctx carries, if any, the id of the object its
// transaction creates, unless the record names an object already: a create
// route's path names none, and without it the event could not say which task,
// webhook or file was made. The first create wins. runTx forgets the note
// when its transaction does not commit (forgetCreated), so an event never
// names an object that was rolled back.
func noteCreated(ctx context.Context, id string) {
	if p := pendingFrom(ctx); p != nil {
		p.created.CompareAndSwap(nil, &id)
	}
}

// forgetCreated drops the note of a transaction that did not commit.
func forgetCreated(ctx context.Context) {
	if p := pendingFrom(ctx); p != nil {
		p.created.Store(nil)
	}
}

// Bounds of what an event keeps of a value. Several members come from the
// client (its reported name, a path's id, a refusal's reason quoting input):
// unbounded, one request could write a megabyte into every event it causes.
const (
	auditMaxString = 1024
	auditMaxScopes = 64
)

// boundAuditStrings makes every string of rec one that both databases store
// as given and that is at most auditMaxString bytes: PostgreSQL's text
// refuses NUL and invalid UTF-8, which would fail the write the event
// belongs to. Invalid bytes and NUL become U+FFFD; a longer value is cut at
// a character boundary and ends with "…".
func boundAuditStrings(rec *AuditRecord) {
	for _, p := range []*string{&rec.Action, &rec.Surface, &rec.Issuer, &rec.Subject, &rec.Role,
		&rec.ClientID, &rec.ClientName, &rec.Tool, &rec.Route, &rec.ResourceID, &rec.ArgsDigest, &rec.Outcome,
		&rec.Detail, &rec.RequestID, &rec.TraceID} {
		*p = boundAuditString(*p)
	}
	for i := range rec.Scopes {
		rec.Scopes[i] = boundAuditString(rec.Scopes[i])
	}
}

func boundAuditString(s string) string {
	if len(s) <= auditMaxString && utf8.ValidString(s) && !strings.ContainsRune(s, 0) {
		return s
	}
	s = strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
	if len(s) <= auditMaxString {
		return s
	}
	const ellipsis = "…"
	cut := auditMaxString - len(ellipsis)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + ellipsis
}
