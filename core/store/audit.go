package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"
)

// The audit trail (docs/audit.md): an append-only record of what was done,
// by whom, through which client. Each organisation's events form one hash
// chain (Seq 1, 2, 3… with each event carrying the hash of the one before);
// installation-wide events (bundles, configuration) form the chain of
// InstallationChain. An event is written in the same transaction as the
// change it records: the caller attaches it to the context (WithAudit) and
// the first transaction that commits on that context appends it; an event
// that records no change (a refusal, a decline) is appended alone
// (AppendAudit).

// PrefixAudit prefixes audit event ids.
const PrefixAudit = "aud_"

// InstallationChain is the OrgID of events that belong to no organisation:
// bundle loads, swaps, refusals and quarantines, configuration reloads. No
// organisation id can be empty, so the chain cannot collide with one.
const InstallationChain = ""

// Audit actions: what an event records.
const (
	AuditRESTWrite           = "rest.write"            // a write route of /api/v1, through any surface
	AuditToolCall            = "tool.call"             // a destructive tool call (its route write is recorded too)
	AuditConfirmAccepted     = "confirmation.accepted" // in-chat confirmation accepted
	AuditConfirmDeclined     = "confirmation.declined" // in-chat confirmation declined or cancelled
	AuditApprovalIssued      = "approval.issued"       // approval link issued
	AuditApprovalApproved    = "approval.approved"
	AuditApprovalCancelled   = "approval.cancelled"
	AuditApprovalExpired     = "approval.expired"
	AuditApprovalSignIn      = "approval_page.sign_in" // sign-in to the approval page
	AuditWebhookSecretRotate = "webhook.secret_rotated"
	AuditBundleLoaded        = "bundle.loaded"
	AuditBundleSwapped       = "bundle.swapped"
	AuditBundleRefused       = "bundle.refused"
	AuditBundleQuarantined   = "bundle.quarantined"
	AuditConfigReloaded      = "config.reloaded"
)

// Audit surfaces: where the action came in.
const (
	SurfaceMCP      = "mcp"
	SurfaceREST     = "rest"
	SurfaceApproval = "approval_page"
	SurfaceSystem   = "system" // the server itself: jobs, reloads, the bundle watcher
)

// Audit outcomes.
const (
	OutcomeSucceeded = "succeeded"
	OutcomeFailed    = "failed"   // refused or failed: Status and Detail say why
	OutcomeDeclined  = "declined" // a person said no, or let it expire
)

// AuditRecord is what a caller records; the store adds the id, the time
// (when zero), the sequence number and the hashes.
type AuditRecord struct {
	OrgID      string // InstallationChain for installation-wide events
	Action     string // Audit… constants
	Surface    string // Surface… constants
	Issuer     string // principal's "iss"; empty for the system
	Subject    string // principal's "sub"
	Role       string
	Scopes     []string
	ClientID   string // OAuth client id
	ClientName string // the client's reported name (MCP clientInfo.name), if any
	Tool       string // MCP tool name, if any
	Route      string // "METHOD /api/v1/pattern", if any
	ResourceID string // the object acted on, if known (tsk_…, apr_…, bundle name)
	ArgsDigest string // canonjson.Digest of the arguments, secrets removed; "" when none
	Outcome    string // Outcome… constants
	Status     int    // HTTP status or 0
	Detail     string // short human text: reason for a refusal, bundle version, …
	RequestID  string
	TraceID    string
	OccurredAt time.Time // zero: the store's clock
}

// AuditEvent is one stored event of a chain.
type AuditEvent struct {
	AuditRecord
	ID       string
	Seq      int64
	PrevHash string // hex sha256 of the previous event of the chain; the checkpoint's, or "" for the first
	Hash     string // hex sha256 over PrevHash and the canonical JSON of the event (docs/audit.md#the-hash)
}

// AuditFilter narrows ListAudit. Zero fields match everything.
type AuditFilter struct {
	Since   time.Time // inclusive
	Until   time.Time // exclusive
	Subject string    // principal's subject
	Tool    string
	Route   string
	Action  string
	Outcome string
}

// AuditBreak is the first broken link VerifyAudit found in a chain.
type AuditBreak struct {
	OrgID  string
	Seq    int64  // the event where the chain breaks
	ID     string // its id, when the row exists
	Reason string // "hash does not match the event's contents (edited)", "missing (deleted)", …
}

func (b *AuditBreak) Error() string {
	return "audit chain of " + b.OrgID + " broken at seq " + strconv.FormatInt(b.Seq, 10) + ": " + b.Reason
}

// AuditCheckpoint stands for the purged head of a chain: the last purged
// event's seq and hash, signed (Ed25519, a key derived from the secret keys)
// so that verification can start from it.
type AuditCheckpoint struct {
	OrgID     string
	Seq       int64
	Hash      string
	PublicKey []byte
	Signature []byte
	CreatedAt time.Time
}

// ErrAuditNotImplemented was returned until the audit store landed; no
// method returns it any more. Kept so that code written against the
// contract still compiles.
var ErrAuditNotImplemented = errors.New("store: audit trail not implemented yet")

type auditKey struct{}

// PendingAudit is a record waiting for the transaction of the change it
// records. Appended reports whether a committed transaction took it.
type PendingAudit struct {
	Record AuditRecord
	// state is pendingOpen, pendingClaimed (a transaction appends it) or
	// pendingAppended (audit_append.go).
	state atomic.Int32
	// created is the id of the object the recording transaction creates
	// (noteCreated), nil until a create names one.
	created atomic.Pointer[string]
}

// Appended reports whether a committed transaction has appended the record.
func (p *PendingAudit) Appended() bool { return p != nil && p.state.Load() == pendingAppended }

// WithAudit returns ctx carrying rec: the first transaction that commits on
// the returned context (DB.InTx, or any write method of DB) appends rec to
// its chain within itself. If none does, the caller appends it itself
// (AppendAudit) after checking p.Appended().
func WithAudit(ctx context.Context, rec AuditRecord) (context.Context, *PendingAudit) {
	p := &PendingAudit{Record: rec}
	return context.WithValue(ctx, auditKey{}, p), p
}

const auditColumns = `id, org_id, seq, occurred_at, action, surface, issuer, subject, role, scopes,
	client_id, client_name, tool, route, resource_id, args_digest, outcome, status, detail, request_id, trace_id,
	prev_hash, hash`

func scanAudit(s scanner) (AuditEvent, error) {
	var e AuditEvent
	err := s.Scan(&e.ID, &e.OrgID, &e.Seq, timeCol{&e.OccurredAt}, &e.Action, &e.Surface, &e.Issuer, &e.Subject,
		&e.Role, jsonCol[[]string]{&e.Scopes}, &e.ClientID, &e.ClientName, &e.Tool, &e.Route, &e.ResourceID,
		&e.ArgsDigest, &e.Outcome, &e.Status, &e.Detail, &e.RequestID, &e.TraceID, &e.PrevHash, &e.Hash)
	if len(e.Scopes) == 0 {
		e.Scopes = nil
	}
	return e, err
}

// auditConds returns the WHERE conditions of f for orgID's chain.
func (o *ops) auditConds(a *args, orgID string, f AuditFilter) []string {
	conds := []string{"org_id = " + a.add(orgID)}
	if !f.Since.IsZero() {
		conds = append(conds, "occurred_at >= "+a.add(o.d.timeArg(f.Since)))
	}
	if !f.Until.IsZero() {
		conds = append(conds, "occurred_at < "+a.add(o.d.timeArg(f.Until)))
	}
	for _, c := range []struct{ col, v string }{
		{"subject", f.Subject}, {"tool", f.Tool}, {"route", f.Route}, {"action", f.Action}, {"outcome", f.Outcome},
	} {
		if c.v != "" {
			conds = append(conds, c.col+" = "+a.add(c.v))
		}
	}
	return conds
}

// ListAudit returns a page of orgID's events matching f, newest first
// (cursor: Before = the last item's id). Events are ordered by their place
// in the chain (seq), which ids minted on several replicas may not follow;
// a Before that is no event of orgID's gives an empty page.
func (o *ops) ListAudit(ctx context.Context, orgID string, f AuditFilter, p ListParams) (Page[AuditEvent], error) {
	var a args
	conds := o.auditConds(&a, orgID, f)
	if p.Before != "" {
		conds = append(conds, "seq < (SELECT b.seq FROM audit_events b WHERE b.org_id = "+a.add(orgID)+
			" AND b.id = "+a.add(p.Before)+")")
	}
	limit := clampLimit(p.Limit)
	query := `SELECT ` + auditColumns + ` FROM audit_events` + where(conds) + ` ORDER BY seq DESC LIMIT ` + a.add(limit+1)
	page, err := listPage(ctx, o.read, query, a, limit, scanAudit)
	if err != nil {
		return Page[AuditEvent]{}, fmt.Errorf("audit events of %q: %w", orgID, err)
	}
	return page, nil
}

// GetAudit returns orgID's event id; another chain's event is ErrNotFound.
func (o *ops) GetAudit(ctx context.Context, orgID, id string) (AuditEvent, error) {
	e, err := scanAudit(o.read.QueryRowContext(ctx, `SELECT `+auditColumns+` FROM audit_events
		WHERE org_id = $1 AND id = $2`, orgID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return AuditEvent{}, fmt.Errorf("audit event %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return AuditEvent{}, fmt.Errorf("getting audit event %s: %w", id, err)
	}
	return e, nil
}

// ExportAudit calls fn with orgID's events from the first that occurred at
// or after since to the head, in chain order (oldest first), streaming: the rows are read while fn runs,
// so fn must not use the store's writer on SQLite (nor the Tx it was
// called on). An error of fn stops the export and is returned as is.
func (o *ops) ExportAudit(ctx context.Context, orgID string, since time.Time, fn func(AuditEvent) error) error {
	// A contiguous run of the chain from the first event at or after since:
	// times need not rise with seq (an event's time is taken before it waits
	// for the chain's head, and replicas' clocks differ), and an export with
	// a hole in it would not check line by line.
	query := `SELECT ` + auditColumns + ` FROM audit_events WHERE org_id = $1 ORDER BY seq`
	a := []any{orgID}
	if !since.IsZero() {
		query = `SELECT ` + auditColumns + ` FROM audit_events WHERE org_id = $1 AND seq >= (
			SELECT MIN(seq) FROM audit_events WHERE org_id = $1 AND occurred_at >= $2) ORDER BY seq`
		a = append(a, o.d.timeArg(since))
	}
	rows, err := o.read.QueryContext(ctx, query, a...)
	if err != nil {
		return fmt.Errorf("exporting the audit chain of %q: %w", orgID, err)
	}
	defer rows.Close()
	for rows.Next() {
		e, err := scanAudit(rows)
		if err != nil {
			return fmt.Errorf("exporting the audit chain of %q: %w", orgID, err)
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("exporting the audit chain of %q: %w", orgID, err)
	}
	return nil
}

// AuditChains returns the organisation ids that have an audit chain,
// InstallationChain ("", first) included when it has events, sorted. A
// chain whose events were all purged is still one (its checkpoint remains).
func (o *ops) AuditChains(ctx context.Context) ([]string, error) {
	// Every place a chain leaves a trace, so that deleting a chain's head
	// row (or its events) cannot take it out of "verify every chain". The
	// events' organisations are read one index probe per organisation (a
	// loose index scan), not by scanning the events.
	rows, err := o.read.QueryContext(ctx, `WITH RECURSIVE ev(org_id) AS (
			SELECT MIN(org_id) FROM audit_events
			UNION ALL
			SELECT (SELECT MIN(a.org_id) FROM audit_events a WHERE a.org_id > ev.org_id) FROM ev WHERE ev.org_id IS NOT NULL)
		SELECT org_id FROM ev WHERE org_id IS NOT NULL
		UNION SELECT org_id FROM audit_heads
		UNION SELECT org_id FROM audit_checkpoints
		ORDER BY 1`)
	if err != nil {
		return nil, fmt.Errorf("listing audit chains: %w", err)
	}
	defer rows.Close()
	chains := []string{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("listing audit chains: %w", err)
		}
		chains = append(chains, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing audit chains: %w", err)
	}
	return chains, nil
}
