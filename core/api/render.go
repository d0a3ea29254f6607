package api

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/kobana/kadu/core/store"
)

// Wire forms of the resources (docs/reference/rest.md#wire-forms): snake_case, RFC 3339 UTC times
// with microseconds (the store's precision, so that a created_at can be
// given back as a created_after filter), money in integer centavos, absent
// objects as null, empty lists as [].

// timeLayout renders times; every time is UTC, so the zone is "Z".
const timeLayout = "2006-01-02T15:04:05.000000Z07:00"

func ts(t time.Time) string { return t.UTC().Format(timeLayout) }

func tsPtr(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := ts(*t)
	return &s
}

func strPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// rawOrNull keeps JSON as stored; nil renders as null.
func rawOrNull(r json.RawMessage) json.RawMessage {
	if len(r) == 0 {
		return json.RawMessage("null")
	}
	return r
}

type taskJSON struct {
	ID             string            `json:"id"`
	Name           string            `json:"name"`
	Description    string            `json:"description"`
	Instructions   string            `json:"instructions"`
	InputSchema    json.RawMessage   `json:"input_schema"`
	Playbook       json.RawMessage   `json:"playbook"`
	LaunchPolicy   launchPolicyJSON  `json:"launch_policy"`
	Destinations   []destinationJSON `json:"destinations"`
	MaxCostCents   int64             `json:"max_cost_cents"`
	TimeoutSeconds int               `json:"timeout_seconds"`
	Version        int               `json:"version"`
	CreatedAt      string            `json:"created_at"`
	UpdatedAt      string            `json:"updated_at"`
}

type launchPolicyJSON struct {
	Roles   []string `json:"roles"`
	UserIDs []string `json:"user_ids"`
}

type destinationJSON struct {
	Type      string `json:"type"`
	WebhookID string `json:"webhook_id"`
}

func renderTask(t store.Task) taskJSON {
	out := taskJSON{
		ID:             t.ID,
		Name:           t.Name,
		Description:    t.Description,
		Instructions:   t.Instructions,
		InputSchema:    rawOrNull(t.InputSchema),
		Playbook:       rawOrNull(t.Playbook),
		LaunchPolicy:   launchPolicyJSON{Roles: nonNil(t.LaunchPolicy.Roles), UserIDs: nonNil(t.LaunchPolicy.UserIDs)},
		Destinations:   make([]destinationJSON, 0, len(t.Destinations)),
		MaxCostCents:   t.MaxCostCents,
		TimeoutSeconds: t.TimeoutSeconds,
		Version:        t.Version,
		CreatedAt:      ts(t.CreatedAt),
		UpdatedAt:      ts(t.UpdatedAt),
	}
	for _, d := range t.Destinations {
		out.Destinations = append(out.Destinations, destinationJSON(d))
	}
	return out
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

type executionJSON struct {
	ID                  string          `json:"id"`
	TaskID              string          `json:"task_id"`
	TaskVersion         int             `json:"task_version"`
	Status              store.Status    `json:"status"`
	LaunchedBy          string          `json:"launched_by"`
	Input               json.RawMessage `json:"input"`
	InputFileIDs        []string        `json:"input_file_ids"`
	PreviousExecutionID *string         `json:"previous_execution_id"`
	Output              *outputJSON     `json:"output"`
	PendingInput        *pendingJSON    `json:"pending_input"`
	Failure             *store.Failure  `json:"failure"`
	Cost                costJSON        `json:"cost"`
	CreatedAt           string          `json:"created_at"`
	StartedAt           *string         `json:"started_at"`
	FinishedAt          *string         `json:"finished_at"`
	UpdatedAt           string          `json:"updated_at"`
}

type outputJSON struct {
	Summary string          `json:"summary"`
	Data    json.RawMessage `json:"data"`
	FileIDs []string        `json:"file_ids"`
}

type pendingJSON struct {
	Kind        string          `json:"kind"`
	Prompt      string          `json:"prompt"`
	InputSchema json.RawMessage `json:"input_schema"`
	StepID      *string         `json:"step_id"`
	ExpiresAt   string          `json:"expires_at"`
}

type costJSON struct {
	AmountCents  int64  `json:"amount_cents"`
	MaxCostCents int64  `json:"max_cost_cents"`
	Currency     string `json:"currency"`
}

// ExecutionJSON is e as GET /executions/{id} answers it, compact: the
// object of an execution event (core/jobs). planMaxCostCents is the
// organisation's plan's per-execution maximum, shown as max_cost_cents when
// the execution has no cap of its own.
func ExecutionJSON(e store.Execution, planMaxCostCents int64) json.RawMessage {
	return bytes.TrimSuffix(encode(renderExecution(e, planMaxCostCents)), []byte("\n"))
}

// renderExecution renders e; planMax is the plan's per-execution maximum,
// shown as max_cost_cents when the execution has no cap of its own.
func renderExecution(e store.Execution, planMax int64) executionJSON {
	out := executionJSON{
		ID:                  e.ID,
		TaskID:              e.TaskID,
		TaskVersion:         e.TaskVersion,
		Status:              e.Status,
		LaunchedBy:          e.LaunchedBy,
		Input:               e.Input,
		InputFileIDs:        nonNil(e.InputFileIDs),
		PreviousExecutionID: strPtr(e.PreviousExecutionID),
		Failure:             e.Failure,
		Cost:                costJSON{AmountCents: e.Cost.AmountCents, MaxCostCents: e.Cost.MaxCostCents, Currency: store.Currency},
		CreatedAt:           ts(e.CreatedAt),
		StartedAt:           tsPtr(e.StartedAt),
		FinishedAt:          tsPtr(e.FinishedAt),
		UpdatedAt:           ts(e.UpdatedAt),
	}
	if len(out.Input) == 0 {
		out.Input = json.RawMessage("{}")
	}
	if out.Cost.MaxCostCents == 0 {
		out.Cost.MaxCostCents = planMax
	}
	if o := e.Output; o != nil {
		out.Output = &outputJSON{Summary: o.Summary, Data: rawOrNull(o.Data), FileIDs: nonNil(o.FileIDs)}
	}
	if pi := e.PendingInput; pi != nil {
		out.PendingInput = &pendingJSON{
			Kind:        pi.Kind,
			Prompt:      pi.Prompt,
			InputSchema: pendingSchema(pi),
			StepID:      strPtr(pi.StepID),
			ExpiresAt:   ts(pi.ExpiresAt),
		}
	}
	return out
}

type stepJSON struct {
	ID          string          `json:"id"`
	ExecutionID string          `json:"execution_id"`
	Position    int             `json:"position"`
	Name        string          `json:"name"`
	Kind        string          `json:"kind"`
	Status      string          `json:"status"`
	Summary     string          `json:"summary"`
	CostCents   int64           `json:"cost_cents"`
	StartedAt   string          `json:"started_at"`
	FinishedAt  *string         `json:"finished_at"`
	Data        json.RawMessage `json:"data"`
}

func renderStep(s store.Step) stepJSON {
	return stepJSON{
		ID:          s.ID,
		ExecutionID: s.ExecutionID,
		Position:    s.Position,
		Name:        s.Name,
		Kind:        s.Kind,
		Status:      s.Status,
		Summary:     s.Summary,
		CostCents:   s.CostCents,
		StartedAt:   ts(s.StartedAt),
		FinishedAt:  tsPtr(s.FinishedAt),
		Data:        rawOrNull(s.Data),
	}
}

// deletedJSON answers a soft delete.
type deletedJSON struct {
	ID      string `json:"id"`
	Deleted bool   `json:"deleted"`
}
