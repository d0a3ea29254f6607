package jobs

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/kobana/kadu/core/agent"
	"github.com/kobana/kadu/core/store"
)

// startQueueWith is startQueue with options edited by mutate.
func startQueueWith(t *testing.T, db *store.DB, runner agent.Runner, mutate func(*Options)) *Queue {
	t.Helper()
	opts := Options{
		Store: db, Runner: runner, Plans: testPlans, DefaultPlan: "developer", OutputDir: t.TempDir(),
		PollInterval: 100 * time.Millisecond, CancelCheck: 50 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	mutate(&opts)
	q, err := New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := q.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	return q
}

// orphan leaves an execution of org as a replica named "dead" would when it
// is killed mid-run: running, its lease held by "dead" until deadline, with
// cost charged. No job runs it.
func orphan(t *testing.T, db *store.DB, org string, deadline time.Time, cents int64) store.Execution {
	t.Helper()
	ctx := context.Background()
	if _, _, err := db.EnsureOrg(ctx, org, "developer"); err != nil {
		t.Fatal(err)
	}
	task, err := db.CreateTask(ctx, org, store.Task{Name: "orphan", Playbook: playbook(stepParse), TimeoutSeconds: 60})
	if err != nil {
		t.Fatal(err)
	}
	exe, err := db.CreateExecution(ctx, org, store.Execution{TaskID: task.ID, LaunchedBy: "u1"})
	if err != nil {
		t.Fatal(err)
	}
	if exe, err = db.StartExecution(ctx, org, exe.ID, 0, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ClaimRun(ctx, org, exe.ID, "dead", deadline); err != nil {
		t.Fatal(err)
	}
	if _, err := db.AddCost(ctx, org, exe.ID, cents); err != nil {
		t.Fatal(err)
	}
	return exe
}

// TestSweepSettlesRunsOfADeadReplica: executions a dead replica left
// running or cancelling are settled within RescueAfter, their cost kept,
// without running them again; the organisation's next run is not held
// behind them.
func TestSweepSettlesRunsOfADeadReplica(t *testing.T) {
	forEachDB(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		db := open(t)
		ctx := context.Background()
		lost := orphan(t, db, "org_a", time.Now().Add(time.Hour), 7)
		cancelling := orphan(t, db, "org_a", time.Now().Add(time.Hour), 3)
		if _, err := db.Transition(ctx, "org_a", cancelling.ID, []store.Status{store.StatusRunning}, store.StatusCancelling, nil); err != nil {
			t.Fatal(err)
		}
		overdue := orphan(t, db, "org_b", time.Now().Add(-time.Minute), 2)

		runner := &countingRunner{runs: map[string]int{}}
		q := startQueueWith(t, db, runner, func(o *Options) { o.RescueAfter = time.Second })
		// org_a's plan allows 2 at once; both are taken by the dead replica.
		next := launch(t, db, q, "org_a", "developer", playbook(stepParse))

		got := waitStatus(t, db, "org_a", lost.ID, store.StatusFailed)
		if got.Failure == nil || got.Failure.Code != failureReplicaLost || got.Cost.AmountCents != 7 {
			t.Errorf("lost run: failure %+v, cost %d; want replica_lost with the 7 centavos kept", got.Failure, got.Cost.AmountCents)
		}
		if got = waitStatus(t, db, "org_a", cancelling.ID, store.StatusCancelled); got.Cost.AmountCents != 3 {
			t.Errorf("cancelled run: cost %d, want 3 kept", got.Cost.AmountCents)
		}
		got = waitStatus(t, db, "org_b", overdue.ID, store.StatusFailed)
		if got.Failure == nil || got.Failure.Code != agent.FailureTimeout {
			t.Errorf("overdue run: failure %+v, want timeout", got.Failure)
		}
		waitStatus(t, db, "org_a", next.ID, store.StatusSucceeded)
		runner.mu.Lock()
		defer runner.mu.Unlock()
		for _, e := range []store.Execution{lost, cancelling, overdue} {
			if n := runner.runs[e.ID]; n != 0 {
				t.Errorf("execution %s of the dead replica ran %d times here, want 0", e.ID, n)
			}
		}
		if n, err := db.CountActive(ctx, "org_a"); err != nil || n != 0 {
			t.Errorf("org_a active executions = %d, %v; want 0", n, err)
		}
	})
}

// deafRunner never returns by itself and ignores its context.
type deafRunner struct {
	started chan string
	release chan struct{}
}

func (r *deafRunner) Run(ctx context.Context, job *agent.Job, sink agent.Sink) (*agent.Outcome, error) {
	r.started <- job.ExecutionID
	<-r.release
	return &agent.Outcome{Status: agent.StatusSucceeded}, nil
}

// TestTimeoutEndsARunnerThatIgnoresItsContext: timeout_seconds and a
// cancel end a run even when the runner does not return.
func TestTimeoutEndsARunnerThatIgnoresItsContext(t *testing.T) {
	forEachDB(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		db := open(t)
		runner := &deafRunner{started: make(chan string, 10), release: make(chan struct{})}
		t.Cleanup(func() { close(runner.release) })
		q := startQueueWith(t, db, runner, func(o *Options) { o.TimeoutGrace = 200 * time.Millisecond })

		exe := launchTask(t, db, q, "org_a", "developer", store.Task{Name: "slow", Playbook: playbook(stepParse), TimeoutSeconds: 1})
		<-runner.started
		got := waitStatus(t, db, "org_a", exe.ID, store.StatusFailed)
		if got.Failure == nil || got.Failure.Code != agent.FailureTimeout {
			t.Errorf("failure %+v, want timeout", got.Failure)
		}

		exe = launch(t, db, q, "org_a", "developer", playbook(stepParse))
		<-runner.started
		if _, err := db.Transition(context.Background(), "org_a", exe.ID, []store.Status{store.StatusRunning}, store.StatusCancelling, nil); err != nil {
			t.Fatal(err)
		}
		waitStatus(t, db, "org_a", exe.ID, store.StatusCancelled)
	})
}

// endingRunner blocks until its context ends and says when it returned.
type endingRunner struct {
	started, ended chan string
}

func (r *endingRunner) Run(ctx context.Context, job *agent.Job, sink agent.Sink) (*agent.Outcome, error) {
	r.started <- job.ExecutionID
	<-ctx.Done()
	r.ended <- job.ExecutionID
	return nil, ctx.Err()
}

// TestLeaseLostStopsTheRun: when a sweeper elsewhere settles an execution
// whose replica is in fact alive (it could not renew its lease in time),
// that replica stops the run and leaves the outcome as settled.
func TestLeaseLostStopsTheRun(t *testing.T) {
	forEachDB(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		db := open(t)
		runner := &endingRunner{started: make(chan string, 10), ended: make(chan string, 10)}
		q := startQueueWith(t, db, runner, func(o *Options) { o.RescueAfter = time.Second })
		exe := launch(t, db, q, "org_a", "developer", playbook(stepParse))
		<-runner.started
		if _, err := db.Transition(context.Background(), "org_a", exe.ID, []store.Status{store.StatusRunning}, store.StatusFailed, func(e *store.Execution) {
			e.Failure = &store.Failure{Code: failureReplicaLost, Message: "settled elsewhere"}
		}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-runner.ended:
		case <-time.After(20 * time.Second):
			t.Fatal("the run went on after its execution was settled elsewhere")
		}
		got := waitStatus(t, db, "org_a", exe.ID, store.StatusFailed)
		if got.Failure == nil || got.Failure.Message != "settled elsewhere" {
			t.Errorf("failure %+v, want the sweeper's", got.Failure)
		}
	})
}

// TestUnknownPlanHoldsTheDefaultCap: an organisation whose plan is not
// configured is held to the default plan, monthly cost cap included.
func TestUnknownPlanHoldsTheDefaultCap(t *testing.T) {
	forEachDB(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		db := open(t)
		q := startQueueWith(t, db, agent.NewBuiltinRunner(nil), func(o *Options) { o.DefaultPlan = "tiny" })
		// tiny's monthly cap is 6: charging categorize (5 + 2) crosses it.
		exe := launch(t, db, q, "org_gold", "gold", playbook(stepParse, stepCategory, stepSummarize))
		got := waitStatus(t, db, "org_gold", exe.ID, store.StatusFailed)
		if got.Failure == nil || got.Failure.Code != agent.FailureCostCap || got.Cost.AmountCents != 7 {
			t.Fatalf("failure %+v, cost %d; want cost_cap_exceeded at 7 (the default plan's cap)", got.Failure, got.Cost.AmountCents)
		}
	})
}

// TestHandedBackRunRunsAgain: a replica that stops normally mid-run hands
// the run back; a replica started after longer than RescueAfter runs it
// again instead of giving it up.
func TestHandedBackRunRunsAgain(t *testing.T) {
	forEachDB(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		db := open(t)
		stopping := &endingRunner{started: make(chan string, 10), ended: make(chan string, 10)}
		q, err := New(context.Background(), Options{
			Store: db, Runner: stopping, Plans: testPlans, DefaultPlan: "developer", OutputDir: t.TempDir(),
			PollInterval: 100 * time.Millisecond, CancelCheck: 50 * time.Millisecond, RescueAfter: time.Second,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := q.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		exe := launch(t, db, q, "org_a", "developer", playbook(stepParse))
		<-stopping.started
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		if err := q.Stop(ctx); err != nil {
			t.Fatalf("Stop: %v", err)
		}
		q.Close()
		time.Sleep(3 * time.Second) // down for longer than RescueAfter

		runner := &countingRunner{runs: map[string]int{}}
		startQueueWith(t, db, runner, func(o *Options) { o.RescueAfter = time.Second })
		waitStatus(t, db, "org_a", exe.ID, store.StatusSucceeded)
		runner.mu.Lock()
		defer runner.mu.Unlock()
		if n := runner.runs[exe.ID]; n != 1 {
			t.Errorf("the handed-back run ran %d times on the new replica, want 1", n)
		}
	})
}
