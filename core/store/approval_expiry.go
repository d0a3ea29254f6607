package store

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"
)

// ExpireApprovals marks the pending approvals past their expiry at now as
// expired, across organisations, and appends one approval.expired event to
// each one's chain (docs/audit.md#confirmations-and-approvals), in one
// transaction; it returns the approvals it expired. record builds each
// event (core/audit's Approval, with the caller's trace); nil builds it
// from the approval alone. An approval expires once: of concurrent sweeps,
// each row goes to one.
func (o *ops) ExpireApprovals(ctx context.Context, now time.Time, record func(Approval) AuditRecord) ([]Approval, error) {
	var out []Approval
	err := o.inTx(ctx, func(q querier) error {
		var err error
		out, err = o.within(q).expireApprovals(ctx, now, record)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// expireApprovals is ExpireApprovals inside the transaction o is bound to.
func (o *ops) expireApprovals(ctx context.Context, now time.Time, record func(Approval) AuditRecord) ([]Approval, error) {
	t := o.d.timeArg(now)
	rows, err := o.write.QueryContext(ctx, `UPDATE approvals SET status = $1, updated_at = $2
		WHERE status = $3 AND expires_at <= $2 RETURNING `+approvalColumns,
		string(ApprovalExpired), t, string(ApprovalPending))
	if err != nil {
		return nil, fmt.Errorf("expiring approvals: %w", err)
	}
	var out []Approval
	for rows.Next() {
		a, err := scanApproval(rows)
		if err != nil {
			_ = rows.Close()
			return nil, fmt.Errorf("expiring approvals: %w", err)
		}
		out = append(out, a)
	}
	// The rows are read to the end before any event is appended: a
	// transaction runs one statement at a time.
	if err := rows.Close(); err != nil {
		return nil, fmt.Errorf("expiring approvals: %w", err)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("expiring approvals: %w", err)
	}
	// RETURNING has no order: events go in a stable one (organisation, then
	// creation), which also takes the chains in the same order in every
	// sweep.
	slices.SortFunc(out, func(a, b Approval) int {
		return cmp.Or(cmp.Compare(a.OrgID, b.OrgID), a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	if record == nil {
		record = expiredRecord
	}
	for _, a := range out {
		rec := record(a)
		rec.OrgID, rec.Action = a.OrgID, AuditApprovalExpired // whatever record says, it is this approval's expiry
		if _, err := o.AppendAudit(ctx, rec); err != nil {
			return nil, fmt.Errorf("recording the expiry of approval %s: %w", a.ID, err)
		}
	}
	return out, nil
}

// expiredRecord is the approval.expired event of a built from what the
// approval stores: its requester, client, tool and id.
func expiredRecord(a Approval) AuditRecord {
	return AuditRecord{
		OrgID: a.OrgID, Action: AuditApprovalExpired, Surface: SurfaceSystem,
		Issuer: a.Principal.Issuer, Subject: a.Principal.Subject, Role: a.Principal.Role,
		Scopes: slices.Clone(a.Principal.Scopes), ClientID: a.ClientID, ClientName: a.ClientName,
		Tool: a.Tool, ResourceID: a.ID, Outcome: OutcomeDeclined,
	}
}

// within returns a copy of o whose every statement, and every
// transaction it would open, runs in q: the current transaction.
func (o *ops) within(q querier) *ops {
	c := *o
	c.read, c.write = q, q
	c.inTx = func(_ context.Context, fn func(q querier) error) error { return fn(q) }
	return &c
}
