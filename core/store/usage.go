package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Usage is an organisation's consumption in one UTC calendar month: what the
// plan's monthly cost cap and launch limit are checked against.
type Usage struct {
	Month      time.Time // 00:00 UTC on the first day of the month
	CostCents  int64     // every AddCost in the month, deleted executions included
	Executions int64     // executions created in the month
}

// MonthStart returns 00:00 UTC on the first day of t's UTC month: months
// are UTC calendar months everywhere in the store.
func MonthStart(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
}

func monthKey(t time.Time) string { return t.UTC().Format("2006-01") }

// AddCost adds cents (>= 0) to the cost of the execution id of orgID and to
// the organisation's usage for the current month, atomically, and returns
// the execution's new total. The runner calls it after each step and fails
// the execution when the total crosses a cap.
func (o *ops) AddCost(ctx context.Context, orgID, id string, cents int64) (int64, error) {
	if err := checkOrg(orgID); err != nil {
		return 0, err
	}
	if cents < 0 {
		return 0, fmt.Errorf("store: AddCost: negative amount %d", cents)
	}
	var total int64
	err := o.inTx(ctx, func(q querier) error {
		now := o.clock()
		err := q.QueryRowContext(ctx, `UPDATE executions SET cost_cents = cost_cents + $3, updated_at = $4
			WHERE org_id = $1 AND id = $2 AND deleted_at IS NULL RETURNING cost_cents`,
			orgID, id, cents, o.d.timeArg(now)).Scan(&total)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("execution %s: %w", id, ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("adding cost to execution %s: %w", id, err)
		}
		return o.addUsage(ctx, q, orgID, now, cents, 0)
	})
	return total, err
}

// addUsage adds to the organisation's usage for now's month.
func (o *ops) addUsage(ctx context.Context, q querier, orgID string, now time.Time, cents, executions int64) error {
	_, err := q.ExecContext(ctx, `INSERT INTO usage_months (org_id, month, cost_cents, executions)
		VALUES ($1, $2, $3, $4)
		ON CONFLICT (org_id, month) DO UPDATE SET cost_cents = usage_months.cost_cents + excluded.cost_cents,
			executions = usage_months.executions + excluded.executions`,
		orgID, monthKey(now), cents, executions)
	if err != nil {
		return fmt.Errorf("recording usage of organisation %s: %w", orgID, err)
	}
	return nil
}

// MonthUsage returns orgID's usage in the UTC calendar month containing
// month (zero usage if nothing happened).
func (o *ops) MonthUsage(ctx context.Context, orgID string, month time.Time) (Usage, error) {
	if err := checkOrg(orgID); err != nil {
		return Usage{}, err
	}
	u := Usage{Month: MonthStart(month)}
	err := o.read.QueryRowContext(ctx, `SELECT cost_cents, executions FROM usage_months
		WHERE org_id = $1 AND month = $2`, orgID, monthKey(month)).Scan(&u.CostCents, &u.Executions)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return Usage{}, fmt.Errorf("reading usage of organisation %s: %w", orgID, err)
	}
	return u, nil
}

// CountActive returns how many of orgID's executions are running or
// cancelling: what the plan's concurrency limit counts. StartExecution
// checks the limit atomically; this is for display and metrics.
func (o *ops) CountActive(ctx context.Context, orgID string) (int, error) {
	if err := checkOrg(orgID); err != nil {
		return 0, err
	}
	return countActive(ctx, o.read, orgID)
}

func countActive(ctx context.Context, q querier, orgID string) (int, error) {
	var n int
	err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM executions
		WHERE org_id = $1 AND status IN `+sqlStrings(activeStatuses), orgID).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("counting active executions of organisation %s: %w", orgID, err)
	}
	return n, nil
}
