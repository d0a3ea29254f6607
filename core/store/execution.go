package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Execution is one run of a task (docs/reference/rest.md#wire-forms). It is not a wire type:
// core/api renders it. Output, step summaries and RunnerState hold untrusted
// data. Values returned by the store belong to the caller.
type Execution struct {
	ID                  string
	OrgID               string
	TaskID              string
	TaskVersion         int // the task's version when it was launched
	Status              Status
	LaunchedBy          string          // the user id of the launcher
	Input               json.RawMessage // as given at launch; nil if none
	InputFileIDs        []string        // never nil after a read
	PreviousExecutionID string          // "" if none
	Output              *Output         // nil until the runner writes one
	PendingInput        *PendingInput   // set exactly while Status is waiting_input
	Failure             *Failure        // set when failed
	Cost                Cost
	RunnerState         json.RawMessage // the runner's own state, to resume after waiting_input or a restart
	CreatedAt           time.Time
	StartedAt           *time.Time // first time it entered running
	FinishedAt          *time.Time // when it became terminal
	UpdatedAt           time.Time
}

// Output is an execution's result. Untrusted data.
type Output struct {
	Summary string          `json:"summary"`
	Data    json.RawMessage `json:"data,omitempty"`
	FileIDs []string        `json:"file_ids"`
}

// PendingInput is what a waiting_input execution is waiting for.
type PendingInput struct {
	Kind        string          `json:"kind"` // PendingQuestion or PendingApproval
	Prompt      string          `json:"prompt"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
	StepID      string          `json:"step_id,omitempty"`
	ExpiresAt   time.Time       `json:"expires_at"` // ExpireWaiting expires the execution after it
}

// PendingInput kinds.
const (
	PendingQuestion = "question"
	PendingApproval = "approval"
)

// Failure says why an execution failed.
type Failure struct {
	Code    string `json:"code"` // e.g. "cost_cap_exceeded", "timeout", "runner_error"
	Message string `json:"message"`
}

// Cost is what an execution has cost so far, in centavos.
type Cost struct {
	AmountCents  int64
	MaxCostCents int64  // the task's MaxCostCents at launch; 0: no per-execution cap
	Currency     string // always "BRL"
}

// Currency of every amount in the store.
const Currency = "BRL"

const executionColumns = `id, org_id, task_id, task_version, status, launched_by, input, input_file_ids,
	previous_execution_id, output, pending_input, failure, cost_cents, max_cost_cents, runner_state,
	created_at, started_at, finished_at, updated_at`

func scanExecution(s scanner) (Execution, error) {
	var e Execution
	err := s.Scan(&e.ID, &e.OrgID, &e.TaskID, &e.TaskVersion, &e.Status, &e.LaunchedBy,
		rawJSONCol{&e.Input}, jsonCol[[]string]{&e.InputFileIDs}, nullStringCol{&e.PreviousExecutionID},
		nullJSONCol[Output]{&e.Output}, nullJSONCol[PendingInput]{&e.PendingInput}, nullJSONCol[Failure]{&e.Failure},
		&e.Cost.AmountCents, &e.Cost.MaxCostCents, rawJSONCol{&e.RunnerState},
		timeCol{&e.CreatedAt}, nullTimeCol{&e.StartedAt}, nullTimeCol{&e.FinishedAt}, timeCol{&e.UpdatedAt})
	e.Cost.Currency = Currency
	if e.InputFileIDs == nil {
		e.InputFileIDs = []string{}
	}
	return e, err
}

// CreateExecution stores a new queued execution of e.TaskID for orgID, with
// e's LaunchedBy, Input, InputFileIDs and PreviousExecutionID; the store sets
// everything else, taking TaskVersion and Cost.MaxCostCents from the task. It
// counts the launch in this month's usage.
//
// The task must exist in orgID and not be deleted, and so must the previous
// execution if one is named (ErrNotFound otherwise). Call it on a Tx to
// insert the execution's job in the same transaction.
func (o *ops) CreateExecution(ctx context.Context, orgID string, e Execution) (Execution, error) {
	if err := checkOrg(orgID); err != nil {
		return Execution{}, err
	}
	input, err := rawJSONArg("input", e.Input)
	if err != nil {
		return Execution{}, err
	}
	if e.InputFileIDs == nil {
		e.InputFileIDs = []string{}
	}
	now := o.clock()
	out := Execution{
		ID:                  NewID(PrefixExecution),
		OrgID:               orgID,
		TaskID:              e.TaskID,
		Status:              StatusQueued,
		LaunchedBy:          e.LaunchedBy,
		Input:               e.Input,
		InputFileIDs:        e.InputFileIDs,
		PreviousExecutionID: e.PreviousExecutionID,
		Cost:                Cost{Currency: Currency},
		CreatedAt:           now,
		UpdatedAt:           now,
	}
	err = o.inTx(ctx, func(q querier) error {
		err := q.QueryRowContext(ctx, `SELECT version, max_cost_cents FROM tasks
			WHERE org_id = $1 AND id = $2 AND deleted_at IS NULL`, orgID, e.TaskID).
			Scan(&out.TaskVersion, &out.Cost.MaxCostCents)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("task %s: %w", e.TaskID, ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("creating execution: reading task %s: %w", e.TaskID, err)
		}
		if e.PreviousExecutionID != "" {
			var one int
			err := q.QueryRowContext(ctx, `SELECT 1 FROM executions
				WHERE org_id = $1 AND id = $2 AND deleted_at IS NULL`, orgID, e.PreviousExecutionID).Scan(&one)
			if errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("previous execution %s: %w", e.PreviousExecutionID, ErrNotFound)
			}
			if err != nil {
				return fmt.Errorf("creating execution: reading execution %s: %w", e.PreviousExecutionID, err)
			}
		}
		_, err = q.ExecContext(ctx, `INSERT INTO executions (id, org_id, task_id, task_version, status,
			launched_by, input, input_file_ids, previous_execution_id, cost_cents, max_cost_cents,
			created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 0, $10, $11, $11)`,
			out.ID, orgID, out.TaskID, out.TaskVersion, out.Status, out.LaunchedBy, input,
			mustJSON(out.InputFileIDs), nullStringArg(out.PreviousExecutionID), out.Cost.MaxCostCents,
			o.d.timeArg(now))
		if err != nil {
			return fmt.Errorf("creating execution: %w", err)
		}
		return o.addUsage(ctx, q, orgID, now, 0, 1)
	})
	if err != nil {
		return Execution{}, err
	}
	return out, nil
}

// GetExecution returns the execution id of orgID.
func (o *ops) GetExecution(ctx context.Context, orgID, id string) (Execution, error) {
	if err := checkOrg(orgID); err != nil {
		return Execution{}, err
	}
	return getExecution(ctx, o.read, orgID, id)
}

func getExecution(ctx context.Context, q querier, orgID, id string) (Execution, error) {
	e, err := scanExecution(q.QueryRowContext(ctx, `SELECT `+executionColumns+` FROM executions
		WHERE org_id = $1 AND id = $2 AND deleted_at IS NULL`, orgID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Execution{}, fmt.Errorf("execution %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return Execution{}, fmt.Errorf("getting execution %s: %w", id, err)
	}
	return e, nil
}

// ExecutionFilter narrows ListExecutions; zero fields do not filter.
type ExecutionFilter struct {
	TaskID        string
	Status        Status
	CreatedAfter  time.Time // exclusive
	CreatedBefore time.Time // exclusive
}

// ListExecutions returns a page of orgID's executions matching f, newest
// first.
func (o *ops) ListExecutions(ctx context.Context, orgID string, f ExecutionFilter, p ListParams) (Page[Execution], error) {
	if err := checkOrg(orgID); err != nil {
		return Page[Execution]{}, err
	}
	var a args
	conds := []string{"org_id = " + a.add(orgID), "deleted_at IS NULL"}
	if f.TaskID != "" {
		conds = append(conds, "task_id = "+a.add(f.TaskID))
	}
	if f.Status != "" {
		conds = append(conds, "status = "+a.add(string(f.Status)))
	}
	if !f.CreatedAfter.IsZero() {
		conds = append(conds, "created_at > "+a.add(o.d.timeArg(f.CreatedAfter)))
	}
	if !f.CreatedBefore.IsZero() {
		conds = append(conds, "created_at < "+a.add(o.d.timeArg(f.CreatedBefore)))
	}
	if p.Before != "" {
		conds = append(conds, "id < "+a.add(p.Before))
	}
	limit := clampLimit(p.Limit)
	query := `SELECT ` + executionColumns + ` FROM executions` + where(conds) + ` ORDER BY id DESC LIMIT ` + a.add(limit+1)
	return listPage(ctx, o.read, query, a, limit, scanExecution)
}

// SoftDeleteExecution marks the terminal execution id of orgID deleted; it
// and its steps are ErrNotFound from then on. A non-terminal execution is
// ErrConflict.
func (o *ops) SoftDeleteExecution(ctx context.Context, orgID, id string) error {
	if err := checkOrg(orgID); err != nil {
		return err
	}
	return o.inTx(ctx, func(q querier) error {
		res, err := q.ExecContext(ctx, `UPDATE executions SET deleted_at = $3, updated_at = $3
			WHERE org_id = $1 AND id = $2 AND deleted_at IS NULL AND status IN `+sqlStrings(terminalStatuses),
			orgID, id, o.d.timeArg(o.clock()))
		err = oneRow(res, err, "execution", id)
		if !errors.Is(err, ErrNotFound) {
			return err
		}
		e, err := getExecution(ctx, q, orgID, id)
		if err != nil {
			return err
		}
		return fmt.Errorf("execution %s is %s, not terminal: %w", id, e.Status, ErrConflict)
	})
}
