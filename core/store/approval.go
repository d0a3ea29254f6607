package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Approval is a destructive tool call waiting for the person who made it to
// open its approval link and choose Continue or Cancel (docs/reference/confirmation.md), and, once
// decided, what became of it. It is not a wire type: core/api and the
// approval page render it. Values returned by the store belong to the
// caller.
type Approval struct {
	ID        string
	OrgID     string
	Tool      string          // the tool's name, e.g. "kadu_tasks_run"
	ToolTitle string          // the tool's title when the call was made
	Arguments json.RawMessage // the call's arguments, a JSON object
	// Principal is who made the call. The call runs as this principal when
	// the person continues: it is never a token.
	Principal ApprovalPrincipal
	// ClientID is the OAuth client the token was issued to ("" if none).
	ClientID string
	// ClientName is clientInfo.name as the client reported it, when an
	// era-2026 request carried it ("" otherwise). Nothing vouches for it.
	ClientName string
	Status     ApprovalStatus
	// Outcome is the CallToolResult JSON of the call (for approved) or the
	// result explaining why it could not run (for failed); nil otherwise,
	// and while an approved call is still running.
	Outcome   json.RawMessage
	CreatedAt time.Time
	ExpiresAt time.Time
	DecidedAt *time.Time // when the person chose; nil while pending or expired
	UpdatedAt time.Time
}

// ApprovalPrincipal is the identity an approval runs as: the verified
// claims of the token that made the call, without the token.
type ApprovalPrincipal struct {
	Issuer   string   `json:"iss"`
	Subject  string   `json:"sub"`
	OrgID    string   `json:"org_id"`
	Role     string   `json:"role"`
	Scopes   []string `json:"scopes"`
	ClientID string   `json:"client_id,omitempty"`
}

// ApprovalStatus is where an approval is in its life:
//
//	pending ──Continue──► approved ──(the call could not run)──► failed
//	   ├──────Cancel────► cancelled
//	   └──expires_at────► expired
//
// Only pending changes by a person's choice, and only once.
type ApprovalStatus string

// Approval statuses.
const (
	// ApprovalPending: waiting for the person; nothing has run. A pending
	// approval past its ExpiresAt is expired (StatusAt), whether or not
	// PurgeConfirmations has written it yet.
	ApprovalPending ApprovalStatus = "pending"
	// ApprovalApproved: the person chose Continue and the call ran; its
	// result, error results included, is the Outcome. Outcome is nil while
	// the call is still running.
	ApprovalApproved ApprovalStatus = "approved"
	// ApprovalCancelled: the person chose Cancel; nothing ran.
	ApprovalCancelled ApprovalStatus = "cancelled"
	// ApprovalExpired: nobody decided before ExpiresAt; nothing ran.
	ApprovalExpired ApprovalStatus = "expired"
	// ApprovalFailed: the person chose Continue but the call could not run
	// to an answer (the tool is gone or no longer allowed, asked for input
	// an approval cannot give, or faulted); the Outcome says why.
	ApprovalFailed ApprovalStatus = "failed"
)

// ApprovalStatuses returns every approval status.
func ApprovalStatuses() []ApprovalStatus {
	return []ApprovalStatus{ApprovalPending, ApprovalApproved, ApprovalCancelled, ApprovalExpired, ApprovalFailed}
}

// Valid reports whether s is one of ApprovalStatuses.
func (s ApprovalStatus) Valid() bool { return slices.Contains(ApprovalStatuses(), s) }

// StatusAt is a's status as seen at now: a pending approval whose ExpiresAt
// has passed reads as expired.
func (a Approval) StatusAt(now time.Time) ApprovalStatus {
	if a.Status == ApprovalPending && !now.Before(a.ExpiresAt) {
		return ApprovalExpired
	}
	return a.Status
}

// ApprovalRetention is how long an approval is kept after it expired, so
// that kadu_approvals_get can still report its outcome. PurgeConfirmations
// removes older ones.
const ApprovalRetention = 7 * 24 * time.Hour

const approvalColumns = `id, org_id, tool, tool_title, arguments, principal, client_id, client_name,
	status, outcome, created_at, expires_at, decided_at, updated_at`

func scanApproval(s scanner) (Approval, error) {
	var a Approval
	err := s.Scan(&a.ID, &a.OrgID, &a.Tool, &a.ToolTitle, rawJSONCol{&a.Arguments},
		jsonCol[ApprovalPrincipal]{&a.Principal}, nullStringCol{&a.ClientID}, nullStringCol{&a.ClientName},
		&a.Status, rawJSONCol{&a.Outcome}, timeCol{&a.CreatedAt}, timeCol{&a.ExpiresAt},
		nullTimeCol{&a.DecidedAt}, timeCol{&a.UpdatedAt})
	if a.Principal.Scopes == nil {
		a.Principal.Scopes = []string{}
	}
	return a, err
}

// CreateApproval stores a new pending approval for orgID from a's Tool,
// ToolTitle, Arguments, Principal, ClientID, ClientName and ExpiresAt; the
// store sets ID (apr_), Status, CreatedAt and UpdatedAt (now). It returns
// the stored approval.
func (o *ops) CreateApproval(ctx context.Context, orgID string, a Approval, now time.Time) (Approval, error) {
	if err := checkOrg(orgID); err != nil {
		return Approval{}, err
	}
	if a.Tool == "" {
		return Approval{}, errors.New("store: CreateApproval: empty tool")
	}
	if len(a.Arguments) == 0 {
		a.Arguments = json.RawMessage("{}")
	}
	args, err := rawJSONArg("approval arguments", a.Arguments)
	if err != nil {
		return Approval{}, err
	}
	now = now.UTC().Truncate(time.Microsecond)
	a.ID, a.OrgID, a.Status = NewID(PrefixApproval), orgID, ApprovalPending
	a.Outcome, a.DecidedAt = nil, nil
	a.CreatedAt, a.UpdatedAt = now, now
	a.ExpiresAt = a.ExpiresAt.UTC().Truncate(time.Microsecond)
	if a.Principal.Scopes == nil {
		a.Principal.Scopes = []string{}
	}
	_, err = o.write.ExecContext(ctx, `INSERT INTO approvals (id, org_id, tool, tool_title, arguments, principal,
		client_id, client_name, status, created_at, expires_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $10)`,
		a.ID, orgID, a.Tool, a.ToolTitle, args, mustJSON(a.Principal), nullStringArg(a.ClientID),
		nullStringArg(a.ClientName), string(a.Status), o.d.timeArg(now), o.d.timeArg(a.ExpiresAt))
	if err != nil {
		return Approval{}, fmt.Errorf("creating approval: %w", err)
	}
	return a, nil
}

// GetApproval returns the approval id of orgID as stored: a pending one
// past its expiry is still pending here (see StatusAt).
func (o *ops) GetApproval(ctx context.Context, orgID, id string) (Approval, error) {
	if err := checkOrg(orgID); err != nil {
		return Approval{}, err
	}
	return getApproval(ctx, o.read, orgID, id)
}

func getApproval(ctx context.Context, q querier, orgID, id string) (Approval, error) {
	a, err := scanApproval(q.QueryRowContext(ctx, `SELECT `+approvalColumns+` FROM approvals
		WHERE org_id = $1 AND id = $2`, orgID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Approval{}, fmt.Errorf("approval %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return Approval{}, fmt.Errorf("reading approval %s: %w", id, err)
	}
	return a, nil
}

// DecideApproval records the person's choice on a pending approval: to is
// ApprovalApproved (Continue: the caller then runs the call and records
// its outcome with FinishApproval) or ApprovalCancelled. It is a
// compare-and-set: of concurrent decisions exactly one succeeds; the others,
// and any decision on an approval that is not pending or has expired at
// now, get ErrConflict. An unknown id is ErrNotFound.
func (o *ops) DecideApproval(ctx context.Context, orgID, id string, to ApprovalStatus, now time.Time) (Approval, error) {
	if err := checkOrg(orgID); err != nil {
		return Approval{}, err
	}
	if to != ApprovalApproved && to != ApprovalCancelled {
		return Approval{}, fmt.Errorf("store: DecideApproval: cannot decide %q", to)
	}
	t := o.d.timeArg(now)
	res, err := o.write.ExecContext(ctx, `UPDATE approvals SET status = $3, decided_at = $4, updated_at = $4
		WHERE org_id = $1 AND id = $2 AND status = $5 AND expires_at > $4`,
		orgID, id, string(to), t, string(ApprovalPending))
	n, err := affected(res, err)
	if err != nil {
		return Approval{}, fmt.Errorf("deciding approval %s: %w", id, err)
	}
	a, err := getApproval(ctx, o.write, orgID, id)
	if err != nil {
		return Approval{}, err
	}
	if n == 0 {
		return a, fmt.Errorf("approval %s is %s: %w", id, a.StatusAt(now), ErrConflict)
	}
	return a, nil
}

// FinishApproval records what became of an approved call: to is
// ApprovalApproved (the call answered; outcome is its CallToolResult JSON)
// or ApprovalFailed (it could not; outcome says why). Only an approved
// approval without an outcome can finish, once: anything else is
// ErrConflict. An unknown id is ErrNotFound.
func (o *ops) FinishApproval(ctx context.Context, orgID, id string, to ApprovalStatus, outcome json.RawMessage, now time.Time) (Approval, error) {
	if err := checkOrg(orgID); err != nil {
		return Approval{}, err
	}
	if to != ApprovalApproved && to != ApprovalFailed {
		return Approval{}, fmt.Errorf("store: FinishApproval: cannot finish as %q", to)
	}
	if outcome == nil {
		return Approval{}, errors.New("store: FinishApproval: no outcome")
	}
	out, err := rawJSONArg("approval outcome", outcome)
	if err != nil {
		return Approval{}, err
	}
	res, err := o.write.ExecContext(ctx, `UPDATE approvals SET status = $3, outcome = $4, updated_at = $5
		WHERE org_id = $1 AND id = $2 AND status = $6 AND outcome IS NULL`,
		orgID, id, string(to), out, o.d.timeArg(now), string(ApprovalApproved))
	n, err := affected(res, err)
	if err != nil {
		return Approval{}, fmt.Errorf("finishing approval %s: %w", id, err)
	}
	a, err := getApproval(ctx, o.write, orgID, id)
	if err != nil {
		return Approval{}, err
	}
	if n == 0 {
		return a, fmt.Errorf("approval %s is %s and already finished or never approved: %w", id, a.Status, ErrConflict)
	}
	return a, nil
}

// PurgedConfirmations counts what PurgeConfirmations changed.
type PurgedConfirmations struct {
	ExpiredApprovals int64 // pending approvals marked expired
	Approvals        int64 // approvals removed
	States           int64 // confirm states removed
}

// PurgeConfirmations is the periodic clean-up of confirmations, across
// organisations: pending approvals past their expiry at now become expired
// (each with its audit event, as ExpireApprovals);
// approvals that expired before now-ApprovalRetention are removed; confirm
// states past their expiry are removed (a requestState past its expiry
// never verifies, so its nonce no longer needs remembering).
func (o *ops) PurgeConfirmations(ctx context.Context, now time.Time) (PurgedConfirmations, error) {
	var p PurgedConfirmations
	t := o.d.timeArg(now)
	err := o.inTx(ctx, func(q querier) error {
		// Each expiry records its approval.expired event (approval_expiry.go).
		expired, err := o.within(q).expireApprovals(ctx, now, nil)
		if err != nil {
			return err
		}
		p.ExpiredApprovals = int64(len(expired))
		res, err := q.ExecContext(ctx, `DELETE FROM approvals WHERE expires_at < $1`,
			o.d.timeArg(now.Add(-ApprovalRetention)))
		if p.Approvals, err = affected(res, err); err != nil {
			return fmt.Errorf("purging approvals: %w", err)
		}
		res, err = q.ExecContext(ctx, `DELETE FROM confirm_states WHERE expires_at < $1`, t)
		if p.States, err = affected(res, err); err != nil {
			return fmt.Errorf("purging confirm states: %w", err)
		}
		return nil
	})
	if err != nil {
		return PurgedConfirmations{}, err
	}
	return p, nil
}
