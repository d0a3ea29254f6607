package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/kobana/kadu/core/agent"
	"github.com/kobana/kadu/core/plans"
	"github.com/kobana/kadu/core/store"
)

// executeArgs is the job that runs one execution.
type executeArgs struct {
	OrgID       string        `json:"org_id"`
	ExecutionID string        `json:"execution_id"`
	Resume      *ResumeAnswer `json:"resume,omitempty"` // set when continuing a waiting_input execution
	// Supersedes is the id of the job a dead replica fetched but never
	// started, when the sweeper enqueued the execution again (stranded.go).
	Supersedes int64 `json:"supersedes,omitempty"`
}

func (executeArgs) Kind() string { return "execute" }

type executeWorker struct {
	river.WorkerDefaults[executeArgs]
	q *Queue
}

// Timeout is above any task's timeout_seconds plus the grace the worker
// gives a runner: the run's own deadline always ends it first. River's
// rescuer retries the job of a dead replica after it.
func (w *executeWorker) Timeout(*river.Job[executeArgs]) time.Duration {
	return maxTaskTimeout + w.q.opts.TimeoutGrace + w.q.opts.RescueAfter
}

var (
	// errCancelled marks a run stopped because its execution was cancelled.
	errCancelled = errors.New("execution cancelled")
	// errLeaseLost marks a run stopped because this replica no longer holds
	// its lease: a sweeper settled the execution (sweep.go).
	errLeaseLost = errors.New("the run's lease was lost")
)

// Work runs one execution from its current state. It is safe to retry: a
// terminal or waiting execution is left alone, a cancelling one is
// finished off, and a running one runs again if its replica handed it back
// when stopping (one that died is settled by the sweeper instead).
func (w *executeWorker) Work(ctx context.Context, job *river.Job[executeArgs]) error {
	q, org, id := w.q, job.Args.OrgID, job.Args.ExecutionID
	st := q.opts.Store
	exe, err := st.GetExecution(ctx, org, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil // deleted meanwhile
	}
	if err != nil {
		return err
	}
	switch exe.Status {
	case store.StatusQueued:
		if q.opts.beforeStart != nil {
			if err := q.opts.beforeStart(ctx, job); err != nil {
				return err
			}
		}
		plan, err := q.plan(ctx, org)
		if err != nil {
			return err
		}
		exe, err = q.start(ctx, org, id, plan.ConcurrentExecutions)
		switch {
		case errors.Is(err, store.ErrActiveLimit):
			return river.JobSnooze(2 * time.Second) // stays queued (docs/reference/rest.md#conventions)
		case errors.Is(err, store.ErrConflict):
			return nil // cancelled or started elsewhere meanwhile
		case err != nil:
			return err
		}
		q.cancelSuperseded(ctx, job.Args)
	case store.StatusRunning:
		// Handed back by a stopping replica: run again (run claims it).
	case store.StatusCancelling:
		_, err := q.transition(ctx, org, id, []store.Status{store.StatusCancelling}, store.StatusCancelled, nil)
		return ignoreConflict(err)
	default:
		return nil
	}
	return w.run(ctx, exe, job.Args.Resume)
}

func (w *executeWorker) run(ctx context.Context, exe store.Execution, resume *ResumeAnswer) error {
	q, st := w.q, w.q.opts.Store
	task, err := st.GetTask(ctx, exe.OrgID, exe.TaskID)
	if errors.Is(err, store.ErrNotFound) {
		return q.fail(ctx, exe, []store.Status{store.StatusRunning}, agent.FailureError, "the task was deleted before the execution started")
	}
	if err != nil {
		return err
	}
	rs, err := ParseRunnerState(exe.RunnerState)
	if err != nil {
		return q.fail(ctx, exe, []store.Status{store.StatusRunning}, agent.FailureError, "the saved runner state is unreadable")
	}
	files, problem, err := q.inputFiles(ctx, exe)
	if err != nil {
		return err
	}
	if problem != "" {
		return q.fail(ctx, exe, []store.Status{store.StatusRunning}, agent.FailureInvalidInput, problem)
	}
	job := &agent.Job{
		ExecutionID:  exe.ID,
		TaskID:       exe.TaskID,
		OrgID:        exe.OrgID,
		Instructions: task.Instructions,
		Playbook:     task.Playbook,
		Input:        exe.Input,
		Files:        files,
		State:        rs.Runner,
		MaxCostCents: exe.Cost.MaxCostCents,
	}
	if resume != nil {
		job.Resume = &agent.Resume{StepID: resume.StepID, Answer: resume.Answer}
	}

	timeout := time.Duration(task.TimeoutSeconds) * time.Second
	if timeout <= 0 {
		timeout = time.Hour
	}
	switch status, err := st.ClaimRun(ctx, exe.OrgID, exe.ID, q.owner, time.Now().Add(timeout)); {
	case err == nil && status == store.StatusCancelling:
		// Cancelled before the run began: nothing to stop.
		_, err := q.transition(ctx, exe.OrgID, exe.ID, []store.Status{store.StatusCancelling}, store.StatusCancelled, nil)
		return ignoreConflict(err)
	case errors.Is(err, store.ErrConflict):
		// Another replica holds the run, or it ended meanwhile. If that
		// replica dies, the sweeper settles the execution within
		// RescueAfter; look again then.
		if cur, err := st.GetExecution(ctx, exe.OrgID, exe.ID); err == nil && cur.Status == store.StatusRunning {
			return river.JobSnooze(q.opts.RescueAfter)
		}
		return nil
	case err != nil:
		return err
	}
	runCtx, cancel := context.WithTimeoutCause(ctx, timeout, context.DeadlineExceeded)
	defer cancel()
	runCtx, cancelCause := context.WithCancelCause(runCtx)
	defer cancelCause(nil)
	stopWatch := q.watchRun(runCtx, exe.OrgID, exe.ID, cancelCause)
	defer stopWatch()

	sink := newSink(q, exe, task)
	outcome, runErr := q.runBounded(runCtx, job, sink)
	sink.close()
	err = q.finish(ctx, exe, outcome, runErr, context.Cause(runCtx), sink)
	if ctx.Err() != nil && !errors.Is(context.Cause(runCtx), errLeaseLost) {
		// This replica is stopping: hand the run back for the retried job.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := st.ReleaseRun(rctx, exe.OrgID, exe.ID, q.owner); err != nil && !errors.Is(err, store.ErrConflict) {
			q.log.WarnContext(rctx, "handing back a run", slog.String("execution_id", exe.ID), slog.Any("error", err))
		}
	}
	return err
}

// runBounded runs the runner and returns its outcome, or, when runCtx ends
// and the runner has not returned TimeoutGrace later, an error: a runner
// that ignores its context cannot hold an execution past its
// timeout_seconds or its cancel. The abandoned runner's later reports are
// refused by the closed sink.
func (q *Queue) runBounded(runCtx context.Context, job *agent.Job, sink *sink) (*agent.Outcome, error) {
	type result struct {
		out *agent.Outcome
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := q.opts.Runner.Run(runCtx, job, sink)
		done <- result{out, err}
	}()
	select {
	case r := <-done:
		return r.out, r.err
	case <-runCtx.Done():
	}
	grace := time.NewTimer(q.opts.TimeoutGrace)
	defer grace.Stop()
	select {
	case r := <-done:
		return r.out, r.err
	case <-grace.C:
		q.log.WarnContext(runCtx, "runner did not stop when its run ended; abandoning it",
			slog.String("execution_id", job.ExecutionID), slog.String("org_id", job.OrgID),
			slog.Any("cause", context.Cause(runCtx)))
		return nil, fmt.Errorf("runner still running %s after its run ended: %w", q.opts.TimeoutGrace, context.Cause(runCtx))
	}
}

// finish records how a run ended.
func (q *Queue) finish(ctx context.Context, exe store.Execution, out *agent.Outcome, runErr, cause error, sink *sink) error {
	org, id := exe.OrgID, exe.ID
	running := []store.Status{store.StatusRunning}
	switch {
	case runErr != nil && errors.Is(cause, errLeaseLost):
		q.log.WarnContext(ctx, "run stopped: another replica settled its execution",
			slog.String("execution_id", id), slog.String("org_id", org))
		return nil
	case runErr != nil && errors.Is(cause, errCancelled):
		_, err := q.transition(ctx, org, id, []store.Status{store.StatusCancelling}, store.StatusCancelled, func(e *store.Execution) {
			e.Output = sink.partialOutput()
		})
		return ignoreConflict(err)
	case runErr != nil && errors.Is(cause, context.DeadlineExceeded) && ctx.Err() == nil:
		return q.fail(ctx, exe, running, agent.FailureTimeout, "the execution ran past the task's timeout_seconds")
	case runErr != nil && ctx.Err() != nil:
		return ctx.Err() // this replica is stopping: the job is retried elsewhere
	case runErr != nil:
		q.log.WarnContext(ctx, "runner error", slog.String("execution_id", id), slog.String("org_id", org), slog.Any("error", runErr))
		return q.fail(ctx, exe, running, agent.FailureError, "the agent could not run this execution; try again later")
	}
	output := &store.Output{Summary: out.Output.Summary, Data: out.Output.Data, FileIDs: out.Output.FileIDs}
	if output.FileIDs == nil {
		output.FileIDs = []string{}
	}
	var err error
	switch out.Status {
	case agent.StatusSucceeded:
		_, err = q.transition(ctx, org, id, running, store.StatusSucceeded, func(e *store.Execution) {
			e.Output, e.RunnerState = output, nil
		})
	case agent.StatusWaitingInput:
		if out.Pending == nil {
			return q.fail(ctx, exe, running, agent.FailureError, "the runner paused without saying what it needs")
		}
		_, err = q.transition(ctx, org, id, running, store.StatusWaitingInput, func(e *store.Execution) {
			e.Output = output
			e.PendingInput = &store.PendingInput{
				Kind: string(out.Pending.Kind), Prompt: out.Pending.Prompt, InputSchema: out.Pending.InputSchema,
				StepID: out.Pending.StepID, ExpiresAt: q.opts.Now().Add(q.opts.WaitingTTL).UTC(),
			}
			e.RunnerState = RunnerState{Runner: out.State}.Encode()
		})
	default:
		f := out.Failure
		if f == nil {
			f = &agent.Failure{Code: agent.FailureError, Message: "the runner failed without a reason"}
		}
		_, err = q.transition(ctx, org, id, running, store.StatusFailed, func(e *store.Execution) {
			e.Output, e.Failure, e.RunnerState = output, &store.Failure{Code: f.Code, Message: f.Message}, nil
		})
	}
	if errors.Is(err, store.ErrConflict) {
		// Cancelled while the runner was finishing: cancellation wins.
		_, err = q.transition(ctx, org, id, []store.Status{store.StatusCancelling}, store.StatusCancelled, func(e *store.Execution) {
			e.Output = output
		})
	}
	return ignoreConflict(err)
}

// fail moves the execution to failed from one of from.
func (q *Queue) fail(ctx context.Context, exe store.Execution, from []store.Status, code, msg string) error {
	_, err := q.transition(ctx, exe.OrgID, exe.ID, from, store.StatusFailed, func(e *store.Execution) {
		e.Failure = &store.Failure{Code: code, Message: msg}
	})
	return ignoreConflict(err)
}

func ignoreConflict(err error) error {
	if errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrNotFound) {
		return nil
	}
	return err
}

// watchRun watches a run until the returned stop is called: every
// CancelCheck it reads the execution's status and ends the run with
// errCancelled when it reads cancelling (the API that cancelled it may run
// on another replica); every leaseInterval it renews the run's lease, and
// ends the run with errLeaseLost when the lease is gone (a sweeper settled
// the execution, believing this replica dead).
func (q *Queue) watchRun(ctx context.Context, org, id string, end context.CancelCauseFunc) (stop func()) {
	ctx, stop = context.WithCancel(ctx)
	go func() {
		check := time.NewTicker(q.opts.CancelCheck)
		defer check.Stop()
		renew := time.NewTicker(q.leaseInterval())
		defer renew.Stop()
		for {
			var status store.Status
			var err error
			select {
			case <-ctx.Done():
				return
			case <-check.C:
				var e store.Execution
				e, err = q.opts.Store.GetExecution(ctx, org, id)
				status = e.Status
			case <-renew.C:
				status, err = q.opts.Store.Heartbeat(ctx, org, id, q.owner)
				if errors.Is(err, store.ErrConflict) {
					end(errLeaseLost)
					return
				}
			}
			switch {
			case errors.Is(err, store.ErrNotFound):
				end(errCancelled) // deleted meanwhile
				return
			case err != nil:
				continue // the store is busy or away: the next tick tries again
			case status == store.StatusCancelling:
				end(errCancelled)
				return
			case status != store.StatusRunning:
				end(errLeaseLost)
				return
			}
		}
	}()
	return stop
}

// plan is the organisation's plan (core/plans): an organisation on a plan
// that is not configured is held to the default plan.
func (q *Queue) plan(ctx context.Context, orgID string) (plans.Plan, error) {
	res, err := q.opts.PlanResolver.For(ctx, orgID)
	if err != nil {
		return plans.Plan{}, err
	}
	return res.Plan, nil
}
