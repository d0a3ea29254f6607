package jobs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/kobana/kadu/core/agent"
	"github.com/kobana/kadu/core/store"
)

// Executions whose replica died.
//
// The replica that runs an execution holds its lease (store.ClaimRun) and
// renews it every quarter of RescueAfter. Every replica sweeps: every
// quarter of RescueAfter it asks the store for runs whose lease was not
// renewed for RescueAfter, or that are past their timeout_seconds, and
// settles them:
//
//   - running, lease stale: failed with replica_lost. The run is not started
//     again: its steps may have had effects (an output file written, a
//     request to the agent service), and its cost was charged; the failure
//     keeps the cost and says to launch it again.
//   - running, past its deadline: failed with timeout, even when the runner
//     ignored the end of its context.
//   - cancelling, lease stale: cancelled.
//
// A run handed back by a replica that stopped normally (Stop; its lease's
// owner is then "") is not stale however long the retry of its job takes,
// for a single node may be down for a while: the retry runs it again, from
// its last pause. Its deadline still holds.
//
// A queued execution whose job a dead replica fetched but never started has
// no lease: the sweeper enqueues it again after RescueAfter (stranded.go).
//
// Settling does not depend on River: a job whose replica died stays running
// in River's table until River's rescuer retries it (after the job's
// timeout), and the retried job then finds its execution settled and does
// nothing.
// On a single SQLite node the sweeper of the restarted process settles what
// the killed one left; with PostgreSQL any live replica does.

// failureReplicaLost is the failure code of a run whose replica stopped
// being heard from.
const failureReplicaLost = "replica_lost"

// jobTimeout bounds a maintenance job; River's rescuer retries the
// maintenance job of a dead replica jobTimeout after it started.
const jobTimeout = 10 * time.Minute

// maxTaskTimeout is the largest timeout_seconds a task may have (core/api):
// an execution job's River timeout is above it, so River never ends a run
// that its own deadline has not.
const maxTaskTimeout = 24 * time.Hour

// sweeper runs Queue.sweep on a ticker from Start to Stop.
type sweeper struct {
	mu     sync.Mutex // guards cancel and done
	cancel context.CancelFunc
	done   chan struct{}
}

func (s *sweeper) start(q *Queue) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancel != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel, s.done = cancel, make(chan struct{})
	go func(done chan struct{}) {
		defer close(done)
		t := time.NewTicker(q.leaseInterval())
		defer t.Stop()
		for {
			if _, err := q.sweep(ctx); err != nil && ctx.Err() == nil {
				q.log.WarnContext(ctx, "looking for executions whose replica died", slog.Any("error", err))
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}(s.done)
}

func (s *sweeper) stop() {
	s.mu.Lock()
	cancel, done := s.cancel, s.done
	s.cancel, s.done = nil, nil
	s.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}

// leaseInterval is how often a lease is renewed and lost runs are looked
// for: a quarter of RescueAfter, so that a live replica renews its lease
// about four times before anyone may take it for lost.
func (q *Queue) leaseInterval() time.Duration {
	return max(q.opts.RescueAfter/4, 10*time.Millisecond)
}

// sweep settles every execution no live replica runs any more, enqueues
// again those a dead replica fetched but never started (stranded.go), and
// returns how many it settled or enqueued. Replicas sweep concurrently: each move is a
// compare-and-set on the status, so each execution is settled once.
func (q *Queue) sweep(ctx context.Context) (int, error) {
	now := time.Now() // the store's clock: leases are stamped with it
	lost, err := q.opts.Store.LostRuns(ctx, now.Add(-q.opts.RescueAfter), now.Add(-q.opts.TimeoutGrace-q.opts.RescueAfter), 100)
	if err != nil {
		return 0, err
	}
	settled := 0
	for _, l := range lost {
		exe := store.Execution{OrgID: l.OrgID, ID: l.ID}
		var err error
		switch {
		case l.Status == store.StatusCancelling:
			_, err = q.transition(ctx, l.OrgID, l.ID, []store.Status{store.StatusCancelling}, store.StatusCancelled, nil)
			err = ignoreConflict(err)
		case l.Overdue:
			err = q.fail(ctx, exe, []store.Status{store.StatusRunning}, agent.FailureTimeout,
				"the execution ran past the task's timeout_seconds")
		default:
			err = q.fail(ctx, exe, []store.Status{store.StatusRunning}, failureReplicaLost, fmt.Sprintf(
				"the server running this execution stopped before it finished (not heard from for %s); "+
					"the cost so far is kept and some steps may have run: launch the task again", q.opts.RescueAfter))
		}
		if err != nil {
			return settled, fmt.Errorf("settling execution %s: %w", l.ID, err)
		}
		settled++
		q.log.WarnContext(ctx, "execution given up: its replica stopped renewing its lease",
			slog.String("execution_id", l.ID), slog.String("org_id", l.OrgID), slog.String("status", string(l.Status)),
			slog.Bool("overdue", l.Overdue), slog.String("replica", l.Owner))
	}
	requeued, err := q.requeueStranded(ctx)
	return settled + requeued, err
}

// replicaName names this replica in run leases: the host name, for people
// reading the row, and random bytes, so that a restarted process never
// takes its predecessor's leases for its own.
func replicaName() string {
	host, _ := os.Hostname()
	b := make([]byte, 6)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	if host == "" {
		host = "replica"
	}
	return host + "-" + hex.EncodeToString(b)
}
