package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Task is a task definition (docs/reference/rest.md#wire-forms). It is not a wire type: core/api
// renders it. Values returned by the store belong to the caller.
type Task struct {
	ID           string
	OrgID        string
	Name         string
	Description  string
	Instructions string
	InputSchema  json.RawMessage // JSON Schema for Execution.Input, as written; nil if none
	Playbook     json.RawMessage // the built-in runner's steps (docs/reference/rest.md#executions), as written; nil if none
	LaunchPolicy LaunchPolicy
	Destinations []Destination // never nil after a read
	// MaxCostCents caps one execution's cost; 0: only the plan's caps apply.
	MaxCostCents int64
	// TimeoutSeconds bounds one execution's running time; 0: the runner's default.
	TimeoutSeconds int
	Version        int // 1 at creation, +1 on every change
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// LaunchPolicy says who may run a task besides admins: anyone with one of
// Roles, or one of UserIDs. Both empty: every member.
type LaunchPolicy struct {
	Roles   []string `json:"roles"`
	UserIDs []string `json:"user_ids"`
}

// Destination is where an execution's result goes.
type Destination struct {
	Type      string `json:"type"` // "webhook"
	WebhookID string `json:"webhook_id"`
}

// TaskPatch is a partial update of a task (PATCH /tasks/{id}): nil fields
// are left as they are.
type TaskPatch struct {
	Name           *string
	Description    *string
	Instructions   *string
	InputSchema    *json.RawMessage
	Playbook       *json.RawMessage
	MaxCostCents   *int64
	TimeoutSeconds *int
}

const taskColumns = `id, org_id, name, description, instructions, input_schema, playbook,
	launch_policy, destinations, max_cost_cents, timeout_seconds, version, created_at, updated_at`

func scanTask(s scanner) (Task, error) {
	var t Task
	err := s.Scan(&t.ID, &t.OrgID, &t.Name, &t.Description, &t.Instructions,
		rawJSONCol{&t.InputSchema}, rawJSONCol{&t.Playbook},
		jsonCol[LaunchPolicy]{&t.LaunchPolicy}, jsonCol[[]Destination]{&t.Destinations},
		&t.MaxCostCents, &t.TimeoutSeconds, &t.Version, timeCol{&t.CreatedAt}, timeCol{&t.UpdatedAt})
	t.normalize()
	return t, err
}

// normalize makes empty lists non-nil, so that they render as [].
func (t *Task) normalize() {
	if t.LaunchPolicy.Roles == nil {
		t.LaunchPolicy.Roles = []string{}
	}
	if t.LaunchPolicy.UserIDs == nil {
		t.LaunchPolicy.UserIDs = []string{}
	}
	if t.Destinations == nil {
		t.Destinations = []Destination{}
	}
}

// searchText is what the q filter of ListTasks matches: lowered in Go, so
// that "AÇÃO" finds "ação" on SQLite too (whose lower() is ASCII only).
func (t *Task) searchText() string {
	return strings.ToLower(t.Name + "\n" + t.Description)
}

// CreateTask stores a new task for orgID from t's descriptive fields. The
// store sets ID, OrgID, Version (1), CreatedAt and UpdatedAt; the rest is
// taken from t as is (core/api validates it). It returns the stored task.
func (o *ops) CreateTask(ctx context.Context, orgID string, t Task) (Task, error) {
	if err := checkOrg(orgID); err != nil {
		return Task{}, err
	}
	now := o.clock()
	t.ID = NewID(PrefixTask)
	t.OrgID = orgID
	t.Version = 1
	t.CreatedAt, t.UpdatedAt = now, now
	t.normalize()
	schema, err := rawJSONArg("input_schema", t.InputSchema)
	if err != nil {
		return Task{}, err
	}
	playbook, err := rawJSONArg("playbook", t.Playbook)
	if err != nil {
		return Task{}, err
	}
	noteCreated(ctx, t.ID) // before the write: its transaction appends the record
	_, err = o.write.ExecContext(ctx, `INSERT INTO tasks (id, org_id, name, description, instructions, search_text,
		input_schema, playbook, launch_policy, destinations, max_cost_cents, timeout_seconds, version,
		created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $14)`,
		t.ID, orgID, t.Name, t.Description, t.Instructions, t.searchText(), schema, playbook,
		mustJSON(t.LaunchPolicy), mustJSON(t.Destinations), t.MaxCostCents, t.TimeoutSeconds, t.Version,
		o.d.timeArg(now))
	if err != nil {
		if o.d.isUniqueViolation(err) {
			return Task{}, fmt.Errorf("creating task %s: %w", t.ID, ErrConflict)
		}
		return Task{}, fmt.Errorf("creating task: %w", err)
	}
	return t, nil
}

// GetTask returns the task id of orgID.
func (o *ops) GetTask(ctx context.Context, orgID, id string) (Task, error) {
	if err := checkOrg(orgID); err != nil {
		return Task{}, err
	}
	t, err := scanTask(o.read.QueryRowContext(ctx,
		`SELECT `+taskColumns+` FROM tasks WHERE org_id = $1 AND id = $2 AND deleted_at IS NULL`, orgID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Task{}, fmt.Errorf("task %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return Task{}, fmt.Errorf("getting task %s: %w", id, err)
	}
	return t, nil
}

// ListTasks returns a page of orgID's tasks, newest first. A non-empty q
// keeps tasks whose name or description contains it, ignoring case (Unicode
// lowercase; accents matter).
func (o *ops) ListTasks(ctx context.Context, orgID, q string, p ListParams) (Page[Task], error) {
	if err := checkOrg(orgID); err != nil {
		return Page[Task]{}, err
	}
	var a args
	conds := []string{"org_id = " + a.add(orgID), "deleted_at IS NULL"}
	if q != "" {
		conds = append(conds, "search_text LIKE "+a.add(likeContains(q))+` ESCAPE '\'`)
	}
	if p.Before != "" {
		conds = append(conds, "id < "+a.add(p.Before))
	}
	limit := clampLimit(p.Limit)
	query := `SELECT ` + taskColumns + ` FROM tasks` + where(conds) + ` ORDER BY id DESC LIMIT ` + a.add(limit+1)
	return listPage(ctx, o.read, query, a, limit, scanTask)
}

// UpdateTask applies patch to the task id of orgID, increments its version
// and returns the result. Concurrent updates are applied one after the
// other; none is lost.
func (o *ops) UpdateTask(ctx context.Context, orgID, id string, patch TaskPatch) (Task, error) {
	return o.mutateTask(ctx, orgID, id, func(t *Task) {
		setIf(&t.Name, patch.Name)
		setIf(&t.Description, patch.Description)
		setIf(&t.Instructions, patch.Instructions)
		setIf(&t.InputSchema, patch.InputSchema)
		setIf(&t.Playbook, patch.Playbook)
		setIf(&t.MaxCostCents, patch.MaxCostCents)
		setIf(&t.TimeoutSeconds, patch.TimeoutSeconds)
	})
}

func setIf[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// SetLaunchPolicy replaces the launch policy of the task id of orgID and
// increments its version.
func (o *ops) SetLaunchPolicy(ctx context.Context, orgID, id string, lp LaunchPolicy) (Task, error) {
	return o.mutateTask(ctx, orgID, id, func(t *Task) { t.LaunchPolicy = lp })
}

// SetDestinations replaces the destinations of the task id of orgID and
// increments its version.
func (o *ops) SetDestinations(ctx context.Context, orgID, id string, dests []Destination) (Task, error) {
	return o.mutateTask(ctx, orgID, id, func(t *Task) { t.Destinations = dests })
}

// mutateTask bumps the version first, which on PostgreSQL locks the row
// until the transaction ends, then applies fn to the fresh row and writes
// the mutable columns back.
func (o *ops) mutateTask(ctx context.Context, orgID, id string, fn func(*Task)) (Task, error) {
	if err := checkOrg(orgID); err != nil {
		return Task{}, err
	}
	var out Task
	err := o.inTx(ctx, func(q querier) error {
		t, err := scanTask(q.QueryRowContext(ctx, `UPDATE tasks SET version = version + 1, updated_at = $3
			WHERE org_id = $1 AND id = $2 AND deleted_at IS NULL RETURNING `+taskColumns,
			orgID, id, o.d.timeArg(o.clock())))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("task %s: %w", id, ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("updating task %s: %w", id, err)
		}
		fn(&t)
		t.normalize()
		schema, err := rawJSONArg("input_schema", t.InputSchema)
		if err != nil {
			return err
		}
		playbook, err := rawJSONArg("playbook", t.Playbook)
		if err != nil {
			return err
		}
		_, err = q.ExecContext(ctx, `UPDATE tasks SET name = $3, description = $4, instructions = $5,
			search_text = $6, input_schema = $7, playbook = $8, launch_policy = $9, destinations = $10,
			max_cost_cents = $11, timeout_seconds = $12
			WHERE org_id = $1 AND id = $2`,
			orgID, id, t.Name, t.Description, t.Instructions, t.searchText(), schema, playbook,
			mustJSON(t.LaunchPolicy), mustJSON(t.Destinations), t.MaxCostCents, t.TimeoutSeconds)
		if err != nil {
			return fmt.Errorf("updating task %s: %w", id, err)
		}
		out = t
		return nil
	})
	return out, err
}

// SoftDeleteTask marks the task id of orgID deleted: from then on it is
// ErrNotFound everywhere and cannot be run; executions already created are
// not affected. PurgeDeleted removes it for good after the retention window.
func (o *ops) SoftDeleteTask(ctx context.Context, orgID, id string) error {
	if err := checkOrg(orgID); err != nil {
		return err
	}
	now := o.d.timeArg(o.clock())
	res, err := o.write.ExecContext(ctx, `UPDATE tasks SET deleted_at = $3, updated_at = $3
		WHERE org_id = $1 AND id = $2 AND deleted_at IS NULL`, orgID, id, now)
	return oneRow(res, err, "task", id)
}
