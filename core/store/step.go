package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Step is one entry of an execution's step log (GET
// /executions/{id}/steps). Summary and Data are untrusted.
type Step struct {
	ID          string
	OrgID       string
	ExecutionID string
	Position    int // 1, 2, 3… in the order steps were appended
	Name        string
	Kind        string // the playbook step kind, e.g. "parse_statement"
	Status      string // StepRunning, StepSucceeded, …
	Summary     string
	CostCents   int64
	StartedAt   time.Time
	FinishedAt  *time.Time
	Data        json.RawMessage // nil if none
}

// Step statuses the runners use. The store does not restrict them.
const (
	StepRunning      = "running"
	StepWaitingInput = "waiting_input"
	StepSucceeded    = "succeeded"
	StepFailed       = "failed"
	StepSkipped      = "skipped"
)

const stepColumns = `id, org_id, execution_id, position, name, kind, status, summary, cost_cents,
	started_at, finished_at, data`

func scanStep(s scanner) (Step, error) {
	var st Step
	err := s.Scan(&st.ID, &st.OrgID, &st.ExecutionID, &st.Position, &st.Name, &st.Kind, &st.Status,
		&st.Summary, &st.CostCents, timeCol{&st.StartedAt}, nullTimeCol{&st.FinishedAt}, rawJSONCol{&st.Data})
	return st, err
}

// AppendStep adds s to the end of the step log of the execution
// s.ExecutionID of orgID and returns it as stored. The store sets ID, OrgID
// and Position, and StartedAt if it is zero. Steps are appended by the one
// worker running the execution; two concurrent appends to one execution may
// fail with ErrConflict.
func (o *ops) AppendStep(ctx context.Context, orgID string, s Step) (Step, error) {
	if err := checkOrg(orgID); err != nil {
		return Step{}, err
	}
	data, err := rawJSONArg("data", s.Data)
	if err != nil {
		return Step{}, err
	}
	s.ID = NewID(PrefixStep)
	s.OrgID = orgID
	if s.StartedAt.IsZero() {
		s.StartedAt = o.clock()
	}
	s.StartedAt = s.StartedAt.UTC().Truncate(time.Microsecond)
	if s.FinishedAt != nil {
		f := s.FinishedAt.UTC().Truncate(time.Microsecond)
		s.FinishedAt = &f
	}
	err = o.inTx(ctx, func(q querier) error {
		if _, err := getExecution(ctx, q, orgID, s.ExecutionID); err != nil {
			return err
		}
		err := q.QueryRowContext(ctx, `SELECT COALESCE(MAX(position), 0) + 1 FROM steps WHERE execution_id = $1`,
			s.ExecutionID).Scan(&s.Position)
		if err != nil {
			return fmt.Errorf("appending step: %w", err)
		}
		_, err = q.ExecContext(ctx, `INSERT INTO steps (`+stepColumns+`)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
			s.ID, orgID, s.ExecutionID, s.Position, s.Name, s.Kind, s.Status, s.Summary, s.CostCents,
			o.d.timeArg(s.StartedAt), o.d.nullTimeArg(s.FinishedAt), data)
		if err != nil {
			if o.d.isUniqueViolation(err) {
				return fmt.Errorf("step %d of execution %s: %w", s.Position, s.ExecutionID, ErrConflict)
			}
			return fmt.Errorf("appending step: %w", err)
		}
		return nil
	})
	if err != nil {
		return Step{}, err
	}
	return s, nil
}

// UpdateStep applies mutate to the step id of orgID and stores its Status,
// Summary, CostCents, FinishedAt and Data (changes to other fields are
// ignored). A step of a deleted execution is ErrNotFound.
func (o *ops) UpdateStep(ctx context.Context, orgID, id string, mutate func(*Step)) (Step, error) {
	if err := checkOrg(orgID); err != nil {
		return Step{}, err
	}
	var out Step
	err := o.inTx(ctx, func(q querier) error {
		cur, err := scanStep(q.QueryRowContext(ctx, `SELECT `+stepColumns+` FROM steps
			WHERE org_id = $1 AND id = $2
			AND execution_id IN (SELECT id FROM executions WHERE org_id = $1 AND deleted_at IS NULL)`, orgID, id))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("step %s: %w", id, ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("getting step %s: %w", id, err)
		}
		next := cur
		mutate(&next)
		out = cur
		out.Status, out.Summary, out.CostCents, out.Data = next.Status, next.Summary, next.CostCents, next.Data
		if next.FinishedAt != nil {
			f := next.FinishedAt.UTC().Truncate(time.Microsecond)
			out.FinishedAt = &f
		} else {
			out.FinishedAt = nil
		}
		data, err := rawJSONArg("data", out.Data)
		if err != nil {
			return err
		}
		_, err = q.ExecContext(ctx, `UPDATE steps SET status = $3, summary = $4, cost_cents = $5,
			finished_at = $6, data = $7 WHERE org_id = $1 AND id = $2`,
			orgID, id, out.Status, out.Summary, out.CostCents, o.d.nullTimeArg(out.FinishedAt), data)
		if err != nil {
			return fmt.Errorf("updating step %s: %w", id, err)
		}
		return nil
	})
	return out, err
}

// StepListParams selects one page of a step log, oldest first.
type StepListParams struct {
	Limit int // as ListParams.Limit
	// After is the Position of the last step of the previous page (0 for the
	// first page).
	After int
}

// ListSteps returns a page of the step log of the execution executionID of
// orgID, in order. An execution that is not visible to orgID is ErrNotFound
// (not an empty page).
func (o *ops) ListSteps(ctx context.Context, orgID, executionID string, p StepListParams) (Page[Step], error) {
	if err := checkOrg(orgID); err != nil {
		return Page[Step]{}, err
	}
	if _, err := getExecution(ctx, o.read, orgID, executionID); err != nil {
		return Page[Step]{}, err
	}
	limit := clampLimit(p.Limit)
	query := `SELECT ` + stepColumns + ` FROM steps
		WHERE org_id = $1 AND execution_id = $2 AND position > $3 ORDER BY position LIMIT $4`
	return listPage(ctx, o.read, query, args{orgID, executionID, p.After, limit + 1}, limit, scanStep)
}
