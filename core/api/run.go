package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/kobana/kadu/core/store"
)

const maxInputFiles = 20

// runTask launches an execution (POST /tasks/{id}/run): launch policy,
// input against the task's input_schema, the plan's monthly limits, then
// the execution and its job in one transaction; 202 with the execution and
// its Location.
func (a *API) runTask(c *call) (*reply, error) {
	t, err := a.task(c)
	if err != nil {
		return nil, err
	}
	if err := mayLaunch(c.p, t.LaunchPolicy); err != nil {
		return nil, err
	}
	o := c.body
	o.allow("input", "input_file_ids")
	input := json.RawMessage("{}")
	if raw, ok := o.raw("input"); ok {
		if raw[0] != '{' {
			o.fail("input", "must be a JSON object.", "Send input as an object matching the task's input_schema.")
		} else {
			var buf bytes.Buffer
			_ = json.Compact(&buf, raw) // valid: the body parsed
			input = buf.Bytes()
		}
	}
	files, filesOK := o.strings("input_file_ids", maxInputFiles, func(s string) string {
		if !store.ValidID(store.PrefixFile, s) {
			return fmt.Sprintf("is %q, not a file id (file_ followed by 32 hex digits).", s)
		}
		return ""
	})
	if filesOK && len(files) > 0 {
		// Ready files of the organisation only (files.go); one deleted
		// before the run starts fails the execution with invalid_input.
		if err := a.checkInputFiles(c.ctx(), o, c.org.id, files); err != nil {
			return nil, err
		}
	}
	if err := o.err(); err != nil {
		return nil, err
	}
	if len(t.InputSchema) > 0 {
		schema, err := compileSchema(t.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("task %s: stored input_schema: %w", t.ID, err)
		}
		if err := validateInput(schema, input); err != nil {
			return nil, err
		}
	}

	ctx := c.ctx()
	var e store.Execution
	err = a.db.InTx(ctx, func(tx *store.Tx) error {
		// Checked inside the transaction: on SQLite (one writer) the limits
		// hold exactly; on PostgreSQL concurrent launches may pass a limit
		// by a few, and the cost cap still stops them mid-run.
		if err := a.checkPlan(ctx, tx, c.org, t); err != nil {
			return err
		}
		var err error
		e, err = tx.CreateExecution(ctx, c.org.id, store.Execution{
			TaskID:       t.ID,
			LaunchedBy:   c.p.Subject,
			Input:        input,
			InputFileIDs: files,
		})
		if err != nil {
			return err
		}
		return a.queue.EnqueueExecution(ctx, tx, c.org.id, e.ID)
	})
	if err != nil {
		return nil, storeErr(err, "Task "+t.ID)
	}
	return &reply{status: http.StatusAccepted, body: renderExecution(e, c.org.plan.MaxCostPerExecutionCents), location: location(e.ID)}, nil
}

// usageReader is what checkPlan reads: a *store.DB or a *store.Tx.
type usageReader interface {
	MonthUsage(ctx context.Context, orgID string, month time.Time) (store.Usage, error)
}

// checkPlan refuses a launch the organisation's plan does not allow this
// month: 402 plan_limit_exceeded past executions_per_month, 402
// cost_cap_exceeded when the month's cost plus what this execution may
// cost would pass the cap.
func (a *API) checkPlan(ctx context.Context, q usageReader, org orgInfo, t store.Task) error {
	now := a.now()
	u, err := q.MonthUsage(ctx, org.id, now)
	if err != nil {
		return err
	}
	resets := ts(monthEnd(now))
	pl := org.plan
	if pl.ExecutionsPerMonth > 0 && u.Executions >= int64(pl.ExecutionsPerMonth) {
		e := problem(http.StatusPaymentRequired, "plan_limit_exceeded", "Plan limit exceeded",
			fmt.Sprintf("Your organisation has launched %d executions this month, the most its plan (%s) allows.", u.Executions, org.planName),
			"Do not retry now: launches are possible again at resets_at, or after an upgrade of the plan.")
		e.Problems[0].Extra = map[string]any{"limit": pl.ExecutionsPerMonth, "used": u.Executions, "resets_at": resets, "plan": org.planName}
		return e
	}
	est := a.launchEstimate(t, pl.MaxCostPerExecutionCents)
	if u.CostCents >= pl.CostCapCents || u.CostCents+est > pl.CostCapCents {
		e := problem(http.StatusPaymentRequired, "cost_cap_exceeded", "Cost cap exceeded",
			fmt.Sprintf("This execution may cost up to %d centavos; with the %d already used this month it could pass the monthly cap of %d.",
				est, u.CostCents, pl.CostCapCents),
			"Do not retry now: the cap resets at resets_at; an admin may lower the task's max_cost_cents or upgrade the plan.")
		e.Problems[0].Extra = map[string]any{"cap_cents": pl.CostCapCents, "used_cents": u.CostCents,
			"estimated_cost_cents": est, "resets_at": resets, "currency": store.Currency}
		return e
	}
	return nil
}

// launchEstimate is the most an execution of t may cost: its max_cost_cents
// (at most the plan's per-execution maximum), or less when its playbook's
// fixed step costs add up to less.
func (a *API) launchEstimate(t store.Task, planMax int64) int64 {
	est := planMax
	if t.MaxCostCents > 0 && t.MaxCostCents < est {
		est = t.MaxCostCents
	}
	if a.validatePlaybook != nil && len(t.Playbook) > 0 {
		if cost, err := a.validatePlaybook(t.Playbook); err == nil && cost < est {
			est = cost
		}
	}
	return est
}

// monthEnd is when the UTC month of t ends: when monthly usage resets.
func monthEnd(t time.Time) time.Time {
	return store.MonthStart(t).AddDate(0, 1, 0)
}
