package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/kobana/kadu/core/store"
)

// Execution jobs fetched by a replica that died before starting them.
//
// River marks a job running when a replica fetches it; the execution
// moves from queued to running only when the worker starts it (Work,
// q.start). A replica killed in between leaves the execution queued, with no
// lease for LostRuns to find, and its job running in River's table until
// River's rescuer retries it after the execute worker's Timeout (more than
// a day). The sweeper looks for such jobs: an execute job running for
// longer than RescueAfter whose execution is still queued. A worker takes
// milliseconds from fetch to start (a job held back by the organisation's
// limit is snoozed, not running), so its replica is taken for dead and the
// execution is enqueued again, in a job that supersedes the stranded one
// (executeArgs.Supersedes).
//
// Nothing of a queued execution has run, so running it again is safe. If
// the original worker was only slow, the start is a compare-and-set on the
// status (store.StartExecution) and the claim of the run another
// (store.ClaimRun): one of the two jobs starts and runs the execution, the
// other finds it started and does nothing, or waits for the run's end. The
// job that started it cancels the stranded one (River's JobCancel), so that
// River's rescuer ends that job as cancelled instead of retrying it a day
// later. The superseding job is inserted unique by its arguments, so
// sweepers of several replicas, and later sweeps, enqueue it once.

// strandedBatch bounds the running execute jobs one sweep looks at: the
// running jobs of every replica, a few per worker.
const strandedBatch = 200

// requeueStranded enqueues again the executions whose job a dead replica
// fetched but never started, and returns how many it enqueued.
func (q *Queue) requeueStranded(ctx context.Context) (int, error) {
	horizon := time.Now().Add(-q.opts.RescueAfter) // River stamps attempted_at with the store's clock
	res, err := q.client.JobList(ctx, river.NewJobListParams().
		Kinds(executeArgs{}.Kind()).
		States(rivertype.JobStateRunning).
		OrderBy(river.JobListOrderByTime, river.SortOrderAsc). // attempted_at, for running jobs
		First(strandedBatch))
	if err != nil {
		return 0, fmt.Errorf("listing running execution jobs: %w", err)
	}
	requeued := 0
	for _, job := range res.Jobs {
		if job.AttemptedAt == nil || job.AttemptedAt.After(horizon) {
			break // in attempted_at order: the rest are younger
		}
		if cancelAttempted(job) {
			continue // already superseded
		}
		var args executeArgs
		if err := json.Unmarshal(job.EncodedArgs, &args); err != nil {
			continue // not ours to judge; River's rescuer handles it
		}
		exe, err := q.opts.Store.GetExecution(ctx, args.OrgID, args.ExecutionID)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return requeued, err
		}
		if exe.Status != store.StatusQueued {
			continue // started: the run's lease is LostRuns' business
		}
		args.Supersedes = job.ID
		ins, err := q.client.Insert(ctx, args, &river.InsertOpts{UniqueOpts: river.UniqueOpts{ByArgs: true}})
		if err != nil {
			return requeued, fmt.Errorf("enqueueing execution %s again: %w", exe.ID, err)
		}
		if ins.UniqueSkippedAsDuplicate {
			continue
		}
		requeued++
		q.log.WarnContext(ctx, "execution enqueued again: the replica that fetched its job stopped before starting it",
			slog.String("execution_id", exe.ID), slog.String("org_id", exe.OrgID),
			slog.Int64("stranded_job", job.ID), slog.Any("fetched_by", job.AttemptedBy))
	}
	return requeued, nil
}

// cancelAttempted reports whether JobCancel was called on the running job.
func cancelAttempted(job *rivertype.JobRow) bool {
	var m struct {
		CancelAttemptedAt *time.Time `json:"cancel_attempted_at"`
	}
	return json.Unmarshal(job.Metadata, &m) == nil && m.CancelAttemptedAt != nil
}

// cancelSuperseded cancels the stranded job that job superseded, once job
// has started the execution: the stranded one can no longer start it.
func (q *Queue) cancelSuperseded(ctx context.Context, args executeArgs) {
	if args.Supersedes == 0 {
		return
	}
	if _, err := q.client.JobCancel(ctx, args.Supersedes); err != nil && !errors.Is(err, river.ErrNotFound) {
		q.log.WarnContext(ctx, "cancelling the stranded job of an execution", slog.String("execution_id", args.ExecutionID),
			slog.Int64("job", args.Supersedes), slog.Any("error", err))
	}
}
