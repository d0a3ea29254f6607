package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/kobana/kadu/core/agent"
	"github.com/kobana/kadu/core/store"
)

// executeArgs is the job that runs one execution.
type executeArgs struct {
	OrgID       string        `json:"org_id"`
	ExecutionID string        `json:"execution_id"`
	Resume      *ResumeAnswer `json:"resume,omitempty"` // set when continuing a waiting_input execution
}

func (executeArgs) Kind() string { return "execute" }

type executeWorker struct {
	river.WorkerDefaults[executeArgs]
	q *Queue
}

// errCancelled marks a run stopped because its execution was cancelled.
var errCancelled = errors.New("execution cancelled")

// Work runs one execution from its current state. It is safe to retry: a
// terminal or waiting execution is left alone, a cancelling one is
// finished off, and a running one (its replica died mid-run) runs again.
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
		o, err := st.GetOrg(ctx, org)
		if err != nil {
			return fmt.Errorf("loading organisation: %w", err)
		}
		plan, ok := q.opts.Plans[o.Plan]
		if !ok {
			return q.fail(ctx, exe, []store.Status{store.StatusQueued}, agent.FailureError, fmt.Sprintf("the organisation's plan %q is not configured", o.Plan))
		}
		exe, err = q.start(ctx, org, id, plan.ConcurrentExecutions)
		switch {
		case errors.Is(err, store.ErrActiveLimit):
			return river.JobSnooze(2 * time.Second) // stays queued (SPEC §7.3)
		case errors.Is(err, store.ErrConflict):
			return nil // cancelled or started elsewhere meanwhile
		case err != nil:
			return err
		}
	case store.StatusRunning:
		// A replica died mid-run: run again.
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
	runCtx, cancel := context.WithTimeoutCause(ctx, timeout, context.DeadlineExceeded)
	defer cancel()
	cancelRun, stopWatch := q.watchCancel(runCtx, exe.OrgID, exe.ID)
	defer stopWatch()
	runCtx, cancelCause := context.WithCancelCause(runCtx)
	defer cancelCause(nil)
	go func() {
		select {
		case <-cancelRun:
			cancelCause(errCancelled)
		case <-runCtx.Done():
		}
	}()

	sink := newSink(q, exe, task)
	outcome, runErr := q.opts.Runner.Run(runCtx, job, sink)
	return q.finish(ctx, exe, outcome, runErr, context.Cause(runCtx), sink)
}

// finish records how a run ended.
func (q *Queue) finish(ctx context.Context, exe store.Execution, out *agent.Outcome, runErr, cause error, sink *sink) error {
	org, id := exe.OrgID, exe.ID
	running := []store.Status{store.StatusRunning}
	switch {
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

// watchCancel polls the execution's status and closes the returned
// channel when it reads cancelling: the API that cancelled it may run on
// another replica.
func (q *Queue) watchCancel(ctx context.Context, org, id string) (<-chan struct{}, func()) {
	cancelled := make(chan struct{})
	ctx, stop := context.WithCancel(ctx)
	go func() {
		t := time.NewTicker(q.opts.CancelCheck)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				e, err := q.opts.Store.GetExecution(ctx, org, id)
				if err == nil && e.Status == store.StatusCancelling || errors.Is(err, store.ErrNotFound) {
					close(cancelled)
					return
				}
			}
		}
	}()
	return cancelled, stop
}
