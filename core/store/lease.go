package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Run leases: the replica that runs an execution holds its lease, so that
// another replica, or the same one after a restart, can tell a run nobody
// is running any more from a live one without asking River.
//
// A lease is three columns of the execution: the owner (an id the replica
// picks at start), when the owner last renewed it (Heartbeat), and the
// deadline of the current run (the task's timeout_seconds). The store clears
// them whenever the execution leaves running and cancelling. The owner is
// NULL for a run StartExecution has just started, until ClaimRun (LostRuns
// then measures its staleness from the start), and "" for a run handed back
// by a stopping replica (ReleaseRun), which waits for its job's retry.

// ClaimRun gives owner the lease of the running or cancelling execution id
// until the run ends or deadline passes, and returns the execution's
// status: cancelling means it was cancelled before the run began (the
// claimer ends it rather than running it). It succeeds only when no replica
// holds the lease: the run was just started by StartExecution, or handed
// back by ReleaseRun. Otherwise, or when the execution is neither running
// nor cancelling, it returns ErrConflict.
func (o *ops) ClaimRun(ctx context.Context, orgID, id, owner string, deadline time.Time) (Status, error) {
	if err := checkOrg(orgID); err != nil {
		return "", err
	}
	if owner == "" {
		return "", errors.New("store: ClaimRun: empty owner")
	}
	var s Status
	err := o.writeOne(ctx, func(q querier) error {
		return q.QueryRowContext(ctx, `UPDATE executions SET run_owner = $3, heartbeat_at = $4, run_deadline = $5
			WHERE org_id = $1 AND id = $2 AND status IN ('running', 'cancelling') AND (run_owner IS NULL OR run_owner = '')
				AND deleted_at IS NULL
			RETURNING status`,
			orgID, id, owner, o.d.timeArg(o.clock()), o.d.timeArg(deadline)).Scan(&s)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("execution %s is not a run free to claim: %w", id, ErrConflict)
	}
	if err != nil {
		return "", fmt.Errorf("claiming execution %s: %w", id, err)
	}
	return s, nil
}

// Heartbeat renews owner's lease of execution id and returns its status
// (running or cancelling). It returns ErrConflict when owner no longer
// holds the lease: the execution ended, or a sweeper gave it up as lost
// (the owner must then stop running it).
func (o *ops) Heartbeat(ctx context.Context, orgID, id, owner string) (Status, error) {
	if err := checkOrg(orgID); err != nil {
		return "", err
	}
	var s Status
	err := o.writeOne(ctx, func(q querier) error {
		return q.QueryRowContext(ctx, `UPDATE executions SET heartbeat_at = $4
			WHERE org_id = $1 AND id = $2 AND run_owner = $3 AND status IN ('running', 'cancelling') AND deleted_at IS NULL
			RETURNING status`, orgID, id, owner, o.d.timeArg(o.clock())).Scan(&s)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("execution %s: the lease is no longer %s's: %w", id, owner, ErrConflict)
	}
	if err != nil {
		return "", fmt.Errorf("renewing the lease of execution %s: %w", id, err)
	}
	return s, nil
}

// ReleaseRun hands owner's lease of execution id back, for a replica that
// stops before the run ends: the retried job, on any replica, claims it
// again (ClaimRun). However long that takes (a single node may be down for
// a while), LostRuns does not report a handed-back run as stale: only its
// deadline, which the release keeps, or a cancel, ends it without a
// retry. ErrConflict when owner does not hold the lease.
func (o *ops) ReleaseRun(ctx context.Context, orgID, id, owner string) error {
	if err := checkOrg(orgID); err != nil {
		return err
	}
	res, err := o.write.ExecContext(ctx, `UPDATE executions SET run_owner = '', heartbeat_at = $4
		WHERE org_id = $1 AND id = $2 AND run_owner = $3 AND status IN ('running', 'cancelling') AND deleted_at IS NULL`,
		orgID, id, owner, o.d.timeArg(o.clock()))
	return leaseRow(res, err, id, "is not leased by "+owner)
}

func leaseRow(res sql.Result, err error, id, why string) error {
	if err != nil {
		return fmt.Errorf("writing the lease of execution %s: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("writing the lease of execution %s: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("execution %s %s: %w", id, why, ErrConflict)
	}
	return nil
}

// LostRun is a running or cancelling execution that no live replica runs.
type LostRun struct {
	OrgID  string
	ID     string
	Status Status // running or cancelling
	// Overdue: the run's deadline passed (it is running past the task's
	// timeout_seconds); otherwise its lease went stale.
	Overdue bool
	// Owner is the replica that held the lease; "" if none does (a run
	// handed back, or started and never claimed).
	Owner string
}

// LostRuns returns up to limit executions, across organisations, that are
// running or cancelling with a lease last renewed before staleBefore (a run
// never claimed counts from its last status change; a running one handed
// back by ReleaseRun is never stale), and running ones whose deadline is
// before overdueBefore. The caller moves each on with Transition; of
// concurrent callers, one succeeds per execution.
func (o *ops) LostRuns(ctx context.Context, staleBefore, overdueBefore time.Time, limit int) ([]LostRun, error) {
	if limit <= 0 {
		limit = 100
	}
	stale, overdue := o.d.timeArg(staleBefore), o.d.timeArg(overdueBefore)
	rows, err := o.write.QueryContext(ctx, `SELECT org_id, id, status, run_owner,
			CASE WHEN status = 'running' AND run_deadline < $2 THEN 1 ELSE 0 END
		FROM executions
		WHERE status IN ('running', 'cancelling') AND deleted_at IS NULL
			AND ((COALESCE(heartbeat_at, updated_at) < $1 AND (status = 'cancelling' OR run_owner IS NULL OR run_owner <> ''))
				OR (status = 'running' AND run_deadline < $2))
		ORDER BY updated_at LIMIT $3`, stale, overdue, limit)
	if err != nil {
		return nil, fmt.Errorf("finding lost runs: %w", err)
	}
	defer rows.Close()
	lost := []LostRun{}
	for rows.Next() {
		var l LostRun
		var owner sql.NullString
		var overdueFlag int
		if err := rows.Scan(&l.OrgID, &l.ID, &l.Status, &owner, &overdueFlag); err != nil {
			return nil, fmt.Errorf("finding lost runs: %w", err)
		}
		l.Owner, l.Overdue = owner.String, overdueFlag == 1
		lost = append(lost, l)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("finding lost runs: %w", err)
	}
	return lost, nil
}
