package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Transition moves the execution id of orgID to status to, if its current
// status is in from and the state machine allows the move, and returns the
// execution as stored. It is a compare-and-set on the status: of concurrent
// transitions out of one status, exactly one succeeds; the others, and any
// transition from a status not in from or not allowed to reach to, get
// ErrConflict (core/api answers 409 invalid_state).
//
// mutate, if not nil, edits the execution before it is written (it sees the
// current row; it must not keep the pointer). It may change Output,
// PendingInput, Failure and RunnerState; the store ignores changes to
// anything else and sets the rest itself: Status = to; UpdatedAt = now;
// StartedAt = now on the first entry to running; FinishedAt = now on
// entering a terminal status; PendingInput is cleared when leaving
// waiting_input and is required (with ExpiresAt) when entering it. Cost
// changes only through AddCost, so a transition never loses a concurrent
// AddCost.
func (o *ops) Transition(ctx context.Context, orgID, id string, from []Status, to Status, mutate func(*Execution)) (Execution, error) {
	if err := checkOrg(orgID); err != nil {
		return Execution{}, err
	}
	var out Execution
	err := o.inTx(ctx, func(q querier) error {
		var err error
		out, err = o.transition(ctx, q, orgID, id, from, to, mutate)
		return err
	})
	return out, err
}

// StartExecution moves the queued execution id of orgID to running if the
// organisation has fewer than maxActive active (running or cancelling)
// executions, and returns ErrActiveLimit otherwise (the execution stays
// queued; retry later). maxActive <= 0 means no limit. Concurrent starts
// in one organisation are serialised, so the limit holds exactly. The
// organisation must have been provisioned (EnsureOrg). mutate is as for
// Transition.
func (o *ops) StartExecution(ctx context.Context, orgID, id string, maxActive int, mutate func(*Execution)) (Execution, error) {
	if err := checkOrg(orgID); err != nil {
		return Execution{}, err
	}
	var out Execution
	err := o.inTx(ctx, func(q querier) error {
		if maxActive > 0 {
			// A no-op update takes the organisation's row lock on PostgreSQL
			// until the transaction ends; SQLite has one writer anyway.
			res, err := q.ExecContext(ctx, `UPDATE orgs SET plan = plan WHERE id = $1`, orgID)
			if err := oneRow(res, err, "organisation", orgID); err != nil {
				return err
			}
			n, err := countActive(ctx, q, orgID)
			if err != nil {
				return err
			}
			if n >= maxActive {
				return fmt.Errorf("organisation %s has %d active executions: %w", orgID, n, ErrActiveLimit)
			}
		}
		var err error
		out, err = o.transition(ctx, q, orgID, id, []Status{StatusQueued}, StatusRunning, mutate)
		return err
	})
	return out, err
}

func (o *ops) transition(ctx context.Context, q querier, orgID, id string, from []Status, to Status, mutate func(*Execution)) (Execution, error) {
	cur, err := getExecution(ctx, q, orgID, id)
	if err != nil {
		return Execution{}, err
	}
	if !slices.Contains(from, cur.Status) || !CanTransition(cur.Status, to) {
		return Execution{}, fmt.Errorf("execution %s is %s, cannot become %s: %w", id, cur.Status, to, ErrConflict)
	}
	next := cur
	next.InputFileIDs = slices.Clone(cur.InputFileIDs)
	if mutate != nil {
		mutate(&next)
	}
	next = o.settle(cur, next, to)
	if to == StatusWaitingInput && (next.PendingInput == nil || next.PendingInput.ExpiresAt.IsZero()) {
		return Execution{}, fmt.Errorf("store: execution %s: waiting_input needs PendingInput with ExpiresAt", id)
	}
	output, err := jsonArg(next.Output)
	if err != nil {
		return Execution{}, err
	}
	pending, err := jsonArg(next.PendingInput)
	if err != nil {
		return Execution{}, err
	}
	var expires any
	if next.PendingInput != nil {
		expires = o.d.timeArg(next.PendingInput.ExpiresAt)
	}
	failure, err := jsonArg(next.Failure)
	if err != nil {
		return Execution{}, err
	}
	state, err := rawJSONArg("runner_state", next.RunnerState)
	if err != nil {
		return Execution{}, err
	}
	// The run's lease (lease.go) lives only while running or cancelling.
	lease := ""
	if to != StatusRunning && to != StatusCancelling {
		lease = ", run_owner = NULL, heartbeat_at = NULL, run_deadline = NULL"
	}
	// RETURNING the cost: an AddCost may have committed since we read.
	err = q.QueryRowContext(ctx, `UPDATE executions SET status = $3, output = $4, pending_input = $5,
		pending_expires_at = $6, failure = $7, runner_state = $8, started_at = $9, finished_at = $10, updated_at = $11`+lease+`
		WHERE org_id = $1 AND id = $2 AND status = $12 AND deleted_at IS NULL
		RETURNING cost_cents`,
		orgID, id, string(to), output, pending, expires, failure, state,
		o.d.nullTimeArg(next.StartedAt), o.d.nullTimeArg(next.FinishedAt), o.d.timeArg(next.UpdatedAt),
		string(cur.Status)).Scan(&next.Cost.AmountCents)
	if errors.Is(err, sql.ErrNoRows) { // the status changed since we read it
		return Execution{}, fmt.Errorf("execution %s changed status concurrently: %w", id, ErrConflict)
	}
	if err != nil {
		return Execution{}, fmt.Errorf("updating execution %s: %w", id, err)
	}
	if o.moved != nil {
		o.moved(cur.Status, to)
	}
	return next, nil
}

// settle returns next with the fields the store owns restored from cur and
// the status bookkeeping of a move to to applied.
func (o *ops) settle(cur, next Execution, to Status) Execution {
	now := o.clock()
	out := cur
	out.Output, out.PendingInput, out.Failure, out.RunnerState = next.Output, next.PendingInput, next.Failure, next.RunnerState
	out.Status = to
	out.UpdatedAt = now
	if to == StatusRunning && out.StartedAt == nil {
		out.StartedAt = &now
	}
	if to.Terminal() {
		out.FinishedAt = &now
	}
	if to != StatusWaitingInput {
		out.PendingInput = nil
	}
	if out.PendingInput != nil {
		p := *out.PendingInput
		p.ExpiresAt = p.ExpiresAt.UTC().Truncate(time.Microsecond)
		out.PendingInput = &p
	}
	return out
}

// ExpireWaiting moves every waiting_input execution whose
// PendingInput.ExpiresAt is at or before now to expired, in every
// organisation, and returns them as stored. The worker calls it
// periodically; concurrent calls never expire an execution twice.
func (o *ops) ExpireWaiting(ctx context.Context, now time.Time) ([]Execution, error) {
	t := o.d.timeArg(now)
	var expired []Execution
	err := o.writeOne(ctx, func(q querier) error {
		rows, err := q.QueryContext(ctx, `UPDATE executions SET status = 'expired', pending_input = NULL,
			pending_expires_at = NULL, finished_at = $1, updated_at = $1
			WHERE status = 'waiting_input' AND pending_expires_at <= $1 AND deleted_at IS NULL
			RETURNING `+executionColumns, t)
		if err != nil {
			return err
		}
		defer rows.Close()
		expired = []Execution{}
		for rows.Next() {
			e, err := scanExecution(rows)
			if err != nil {
				return err
			}
			expired = append(expired, e)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("expiring executions: %w", err)
	}
	if o.moved != nil {
		for range expired {
			o.moved(StatusWaitingInput, StatusExpired)
		}
	}
	return expired, nil
}
