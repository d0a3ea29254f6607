package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/kobana/kadu/core/store"
)

// Answer schemas of a pause whose runner gave none (core/agent/PLAYBOOKS.md).
var (
	defaultQuestionSchema = json.RawMessage(`{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"]}`)
	defaultApprovalSchema = json.RawMessage(`{"type":"object","properties":{"approved":{"type":"boolean"},"comment":{"type":"string"}},"required":["approved"]}`)
)

// pendingSchema is the schema an answer to pi must satisfy.
func pendingSchema(pi *store.PendingInput) json.RawMessage {
	switch {
	case len(pi.InputSchema) > 0:
		return pi.InputSchema
	case pi.Kind == store.PendingApproval:
		return defaultApprovalSchema
	}
	return defaultQuestionSchema
}

func (a *API) listExecutions(c *call) (*reply, error) {
	q := c.echo.QueryParams()
	var f store.ExecutionFilter
	var v validation
	if s := q.Get("task_id"); s != "" {
		if !store.ValidID(store.PrefixTask, s) {
			v.add("task_id", fmt.Sprintf("task_id is %q, not a task id (tsk_ followed by 32 hex digits).", s), "Use an id from kadu_tasks_list, or leave task_id out.")
		}
		f.TaskID = s
	}
	if s := q.Get("status"); s != "" {
		f.Status = store.Status(s)
		if !f.Status.Valid() {
			names := make([]string, 0, 8)
			for _, st := range store.Statuses() {
				names = append(names, string(st))
			}
			v.add("status", fmt.Sprintf("status is %q, not an execution status.", s), "Use one of: "+strings.Join(names, ", ")+".")
		}
	}
	f.CreatedAfter = timeParam(&v, q.Get("created_after"), "created_after")
	f.CreatedBefore = timeParam(&v, q.Get("created_before"), "created_before")
	if !f.CreatedAfter.IsZero() && !f.CreatedBefore.IsZero() && !f.CreatedAfter.Before(f.CreatedBefore) {
		v.add("created_before", "created_before must be later than created_after.", "Swap the two, or widen the range.")
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	filter := fmt.Sprintf("executions\x00%s\x00%s\x00%s\x00%s\x00%s", c.org.id, f.TaskID, f.Status,
		tsOrEmpty(f.CreatedAfter), tsOrEmpty(f.CreatedBefore))
	p, err := a.parsePage(q, filter)
	if err != nil {
		return nil, err
	}
	pg, err := a.db.ListExecutions(c.ctx(), c.org.id, f, store.ListParams{Limit: p.limit, Before: p.after})
	if err != nil {
		return nil, err
	}
	items := make([]executionJSON, 0, len(pg.Items))
	last := ""
	for _, e := range pg.Items {
		items = append(items, renderExecution(e, c.org.plan.MaxCostPerExecutionCents))
		last = e.ID
	}
	return ok(makeList(a, p, items, pg.More, last))
}

// timeParam parses an RFC 3339 query parameter; "" is the zero time.
func timeParam(v *validation, s, name string) time.Time {
	if s == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		v.add(name, fmt.Sprintf("%s is %q, not an RFC 3339 time.", name, s), "Use a time such as 2026-03-01T00:00:00Z.")
		return time.Time{}
	}
	return t.UTC()
}

func tsOrEmpty(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format(time.RFC3339Nano)
}

func (a *API) getExecution(c *call) (*reply, error) {
	e, err := a.execution(c)
	if err != nil {
		return nil, err
	}
	return ok(renderExecution(e, c.org.plan.MaxCostPerExecutionCents))
}

// execution loads the execution named by the path: 404 for a malformed
// id, another organisation's execution or a deleted one alike.
func (a *API) execution(c *call) (store.Execution, error) {
	id := c.param("id")
	if !store.ValidID(store.PrefixExecution, id) {
		return store.Execution{}, errNotFound("Execution " + id)
	}
	e, err := a.db.GetExecution(c.ctx(), c.org.id, id)
	return e, storeErr(err, "Execution "+id)
}

func (a *API) listSteps(c *call) (*reply, error) {
	id := c.param("id")
	if !store.ValidID(store.PrefixExecution, id) {
		return nil, errNotFound("Execution " + id)
	}
	p, err := a.parsePage(c.echo.QueryParams(), "steps\x00"+c.org.id+"\x00"+id)
	if err != nil {
		return nil, err
	}
	after := 0
	if p.after != "" {
		if after, err = strconv.Atoi(p.after); err != nil {
			return nil, fmt.Errorf("step cursor %q: %w", p.after, err) // signed by us: cannot happen
		}
	}
	pg, err := a.db.ListSteps(c.ctx(), c.org.id, id, store.StepListParams{Limit: p.limit, After: after})
	if err != nil {
		return nil, storeErr(err, "Execution "+id)
	}
	items := make([]stepJSON, 0, len(pg.Items))
	last := ""
	for _, s := range pg.Items {
		items = append(items, renderStep(s))
		last = strconv.Itoa(s.Position)
	}
	return ok(makeList(a, p, items, pg.More, last))
}

// continueExecution answers a waiting_input execution: the answer is
// checked against pending_input.input_schema, then the execution goes back
// to queued and its resume job is enqueued, in one transaction; 202.
func (a *API) continueExecution(c *call) (*reply, error) {
	e, err := a.execution(c)
	if err != nil {
		return nil, err
	}
	if err := mayControl(c.p, e); err != nil {
		return nil, err
	}
	o := c.body
	o.allow("answer")
	if err := o.err(); err != nil {
		return nil, err
	}
	if err := waitingNow(e, a.now()); err != nil {
		return nil, err
	}
	answer, hasAnswer := o.raw("answer")
	if !hasAnswer {
		return nil, paramProblem(http.StatusUnprocessableEntity, "validation_error", "answer",
			"answer is required.", "Send the answer as an object matching pending_input.input_schema.")
	}
	pi := e.PendingInput
	schema, err := compileSchema(pendingSchema(pi))
	if err != nil {
		return nil, fmt.Errorf("execution %s: pending input_schema: %w", e.ID, err)
	}
	if answer[0] != '{' {
		return nil, paramProblem(http.StatusUnprocessableEntity, "validation_error", "answer",
			"answer must be a JSON object.", "Send the answer as an object matching pending_input.input_schema.")
	}
	if err := validateAgainst(schema, answer, "answer", "Make the answer match pending_input.input_schema."); err != nil {
		return nil, err
	}
	ctx := c.ctx()
	var out store.Execution
	err = a.db.InTx(ctx, func(tx *store.Tx) error {
		var err error
		out, err = tx.Transition(ctx, c.org.id, e.ID, []store.Status{store.StatusWaitingInput}, store.StatusQueued, nil)
		if err != nil {
			return err
		}
		return a.queue.EnqueueResume(ctx, tx, c.org.id, e.ID, Resume{StepID: pi.StepID, Answer: answer})
	})
	if errors.Is(err, store.ErrConflict) {
		return nil, errInvalidState("Execution "+e.ID+" is no longer waiting for input (it was answered, cancelled or expired meanwhile).",
			"Get the execution to see its status.")
	}
	if err != nil {
		return nil, storeErr(err, "Execution "+e.ID)
	}
	return &reply{status: http.StatusAccepted, body: renderExecution(out, c.org.plan.MaxCostPerExecutionCents), location: location(out.ID)}, nil
}

// waitingNow refuses to continue an execution that is not waiting_input, or
// whose pending input has expired (the worker has not marked it yet).
func waitingNow(e store.Execution, now time.Time) error {
	if e.Status != store.StatusWaitingInput || e.PendingInput == nil {
		return errInvalidState(fmt.Sprintf("Execution %s is %s; only a waiting_input execution can be continued.", e.ID, e.Status),
			"Get the execution: continue applies only while its status is waiting_input.")
	}
	if !now.Before(e.PendingInput.ExpiresAt) {
		return errInvalidState(fmt.Sprintf("The question of execution %s expired at %s.", e.ID, ts(e.PendingInput.ExpiresAt)),
			"Run the task again to start over.")
	}
	return nil
}

// cancelExecution cancels: queued and waiting_input executions become
// cancelled at once (200); a running one becomes cancelling and its worker
// is told to stop (202; cancelled follows within seconds); cancelling
// again is 202 as well. A terminal execution is 409 invalid_state.
func (a *API) cancelExecution(c *call) (*reply, error) {
	e, err := a.execution(c)
	if err != nil {
		return nil, err
	}
	if err := mayControl(c.p, e); err != nil {
		return nil, err
	}
	o := c.body
	o.allow()
	if err := o.err(); err != nil {
		return nil, err
	}
	ctx := c.ctx()
	// The status may change between our read and the compare-and-set (a
	// worker starts it, or it finishes): read again and retry.
	for range 3 {
		var to store.Status
		status := http.StatusOK
		switch e.Status {
		case store.StatusQueued, store.StatusWaitingInput:
			to = store.StatusCancelled
		case store.StatusRunning:
			to, status = store.StatusCancelling, http.StatusAccepted
		case store.StatusCancelling:
			a.stopWorker(ctx, c.org.id, e.ID)
			return &reply{status: http.StatusAccepted, body: renderExecution(e, c.org.plan.MaxCostPerExecutionCents), location: location(e.ID)}, nil
		default:
			return nil, errInvalidState(fmt.Sprintf("Execution %s is %s, which is final: there is nothing to cancel.", e.ID, e.Status),
				"Nothing to do; delete it if it is no longer needed.")
		}
		// Straight to cancelled is an event (execution.cancelled), emitted in
		// the same transaction; cancelling is not: the worker emits
		// cancelled when it stops.
		var out store.Execution
		c.answering(status) // the audit event is appended in this transaction
		err := a.db.InTx(ctx, func(tx *store.Tx) error {
			var err error
			if out, err = tx.Transition(ctx, c.org.id, e.ID, []store.Status{e.Status}, to, nil); err != nil || to != store.StatusCancelled {
				return err
			}
			return a.queue.Emit(ctx, tx, c.org.id, store.EventExecutionCancelled, ExecutionJSON(out, c.org.plan.MaxCostPerExecutionCents))
		})
		if errors.Is(err, store.ErrConflict) {
			if e, err = a.execution(c); err != nil {
				return nil, err
			}
			continue
		}
		if err != nil {
			return nil, storeErr(err, "Execution "+e.ID)
		}
		rep := &reply{status: status, body: renderExecution(out, c.org.plan.MaxCostPerExecutionCents)}
		if to == store.StatusCancelling {
			a.stopWorker(ctx, c.org.id, e.ID)
			rep.location = location(e.ID)
		}
		return rep, nil
	}
	return nil, errInvalidState("Execution "+e.ID+" keeps changing status.", "Get the execution and retry if it is still running.")
}

// stopWorker asks the queue to stop a cancelling execution's worker; a
// failure is logged (the worker also notices the status).
func (a *API) stopWorker(ctx context.Context, orgID, id string) {
	if err := a.queue.CancelRunning(context.WithoutCancel(ctx), orgID, id); err != nil {
		a.log.WarnContext(ctx, "api: asking the worker to stop", slog.String("execution_id", id), slog.Any("error", err))
	}
}

func (a *API) deleteExecution(c *call) (*reply, error) {
	id := c.param("id")
	if !store.ValidID(store.PrefixExecution, id) {
		return nil, errNotFound("Execution " + id)
	}
	o := c.body
	o.allow()
	if err := o.err(); err != nil {
		return nil, err
	}
	err := a.db.SoftDeleteExecution(c.ctx(), c.org.id, id)
	if errors.Is(err, store.ErrConflict) {
		return nil, errInvalidState("Execution "+id+" is not finished; only succeeded, failed, cancelled or expired executions can be deleted.",
			"Cancel it first (kadu_executions_cancel), wait until its status is final, then delete it.")
	}
	if err != nil {
		return nil, storeErr(err, "Execution "+id)
	}
	return ok(deletedJSON{ID: id, Deleted: true})
}
