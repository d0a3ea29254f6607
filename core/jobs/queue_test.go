package jobs

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kobana/kadu/core/agent"
	"github.com/kobana/kadu/core/config"
	"github.com/kobana/kadu/core/store"
	"github.com/kobana/kadu/core/store/pgtest"
)

// forEachDB runs test on a fresh SQLite store and a fresh database of a
// throwaway PostgreSQL cluster.
func forEachDB(t *testing.T, test func(t *testing.T, open func(t *testing.T) *store.DB)) {
	t.Run("sqlite", func(t *testing.T) {
		test(t, func(t *testing.T) *store.DB {
			return openStore(t, store.Options{Driver: store.DriverSQLite, DSN: filepath.Join(t.TempDir(), "kadu.db")})
		})
	})
	t.Run("postgres", func(t *testing.T) {
		cluster := pgtest.Shared(t)
		var once sync.Once
		var dsn string
		test(t, func(t *testing.T) *store.DB {
			// Several queues of one test share one database, as replicas do.
			once.Do(func() { dsn = cluster.NewDatabase(t) })
			return openStore(t, store.Options{Driver: store.DriverPostgres, DSN: dsn, MaxConns: 8})
		})
	})
}

func openStore(t *testing.T, opts store.Options) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

var testPlans = map[string]config.Plan{
	"developer": {ConcurrentExecutions: 2, ExecutionsPerMonth: 1000, MaxFileSizeBytes: 1 << 20, Retention: time.Hour,
		RequestsPerMinute: 600, CostCapCents: 10_000, MaxCostPerExecutionCents: 2_000},
	"tiny": {ConcurrentExecutions: 1, ExecutionsPerMonth: 1000, MaxFileSizeBytes: 1 << 20, Retention: time.Hour,
		RequestsPerMinute: 600, CostCapCents: 6, MaxCostPerExecutionCents: 6},
}

// startQueue builds and starts a queue on db until the test ends.
func startQueue(t *testing.T, db *store.DB, runner agent.Runner) *Queue {
	t.Helper()
	q, err := New(context.Background(), Options{
		Store: db, Runner: runner, Plans: testPlans, DefaultPlan: "developer", OutputDir: t.TempDir(),
		PollInterval: 100 * time.Millisecond, CancelCheck: 50 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
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

const statementCSV = "Data;Descrição;Valor\n01/03/2026;PIX RECEBIDO ACME LTDA;1.500,00\n02/03/2026;TARIFA PACOTE SERVICOS;-45,90\n05/03/2026;BOLETO PAGO ENEL;-320,10\n"

func playbook(steps ...string) json.RawMessage {
	return json.RawMessage(`{"version":1,"steps":[` + joinSteps(steps) + `]}`)
}

func joinSteps(steps []string) string {
	out := ""
	for i, s := range steps {
		if i > 0 {
			out += ","
		}
		out += s
	}
	return out
}

const (
	stepParse     = `{"id":"statement","type":"parse_statement","params":{"source":{"pointer":"/input/statement_csv"}}}`
	stepCategory  = `{"id":"categories","type":"categorize"}`
	stepSummarize = `{"id":"summary","type":"summarize","params":{"language":"pt-BR"}}`
	stepAsk       = `{"id":"period","type":"ask","params":{"prompt":"Which month?","answer_schema":{"type":"object","properties":{"month":{"type":"string"}},"required":["month"]}}}`
)

// launch creates an execution of a new task with the given playbook and
// enqueues it, in one transaction, as the API does.
func launch(t *testing.T, db *store.DB, q *Queue, org, plan string, pb json.RawMessage) store.Execution {
	t.Helper()
	return launchTask(t, db, q, org, plan, store.Task{Name: "test", Playbook: pb, TimeoutSeconds: 60})
}

func launchTask(t *testing.T, db *store.DB, q *Queue, org, plan string, spec store.Task) store.Execution {
	t.Helper()
	ctx := context.Background()
	if _, _, err := db.EnsureOrg(ctx, org, plan); err != nil {
		t.Fatal(err)
	}
	task, err := db.CreateTask(ctx, org, spec)
	if err != nil {
		t.Fatal(err)
	}
	var exe store.Execution
	err = db.InTx(ctx, func(tx *store.Tx) error {
		var err error
		exe, err = tx.CreateExecution(ctx, org, store.Execution{
			TaskID: task.ID, TaskVersion: task.Version, LaunchedBy: "u1",
			Input: json.RawMessage(fmt.Sprintf(`{"statement_csv":%q}`, statementCSV)),
		})
		if err != nil {
			return err
		}
		return q.EnqueueExecution(ctx, tx, org, exe.ID)
	})
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// waitStatus polls until the execution reaches want (or fails the test).
func waitStatus(t *testing.T, db *store.DB, org, id string, want store.Status) store.Execution {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		e, err := db.GetExecution(context.Background(), org, id)
		if err != nil {
			t.Fatal(err)
		}
		if e.Status == want {
			return e
		}
		if time.Now().After(deadline) {
			t.Fatalf("execution %s is %s, want %s (failure %+v)", id, e.Status, want, e.Failure)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

func TestRunToSucceeded(t *testing.T) {
	forEachDB(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		db := open(t)
		q := startQueue(t, db, agent.NewBuiltinRunner(nil))
		exe := launch(t, db, q, "org_a", "developer", playbook(stepParse, stepCategory, stepSummarize))
		done := waitStatus(t, db, "org_a", exe.ID, store.StatusSucceeded)
		if done.Output == nil || done.Output.Summary == "" {
			t.Fatalf("output = %+v", done.Output)
		}
		if done.Cost.AmountCents != 5+2+2 {
			t.Errorf("cost = %d, want 9 (parse 5 + categorize 2 + summarize 2)", done.Cost.AmountCents)
		}
		steps, err := db.ListSteps(context.Background(), "org_a", exe.ID, store.StepListParams{Limit: 10})
		if err != nil || len(steps.Items) != 3 {
			t.Fatalf("steps = %+v, %v", steps.Items, err)
		}
		for _, s := range steps.Items {
			if s.Status != string(agent.StepSucceeded) || s.FinishedAt == nil {
				t.Errorf("step %s: %s finished %v", s.Name, s.Status, s.FinishedAt)
			}
		}
	})
}

func TestPauseAndContinue(t *testing.T) {
	forEachDB(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		db := open(t)
		q := startQueue(t, db, agent.NewBuiltinRunner(nil))
		exe := launch(t, db, q, "org_a", "developer", playbook(stepAsk, stepParse, stepSummarize))
		waiting := waitStatus(t, db, "org_a", exe.ID, store.StatusWaitingInput)
		if waiting.PendingInput == nil || waiting.PendingInput.Kind != store.PendingQuestion || waiting.PendingInput.ExpiresAt.IsZero() {
			t.Fatalf("pending input = %+v", waiting.PendingInput)
		}
		// What the API's continue does: answer, requeue, enqueue, in one transaction.
		ctx := context.Background()
		err := db.InTx(ctx, func(tx *store.Tx) error {
			_, err := tx.Transition(ctx, "org_a", exe.ID, []store.Status{store.StatusWaitingInput}, store.StatusQueued, nil)
			if err != nil {
				return err
			}
			return q.EnqueueResume(ctx, tx, "org_a", exe.ID, ResumeAnswer{StepID: waiting.PendingInput.StepID, Answer: json.RawMessage(`{"month":"2026-03"}`)})
		})
		if err != nil {
			t.Fatal(err)
		}
		done := waitStatus(t, db, "org_a", exe.ID, store.StatusSucceeded)
		if done.Output == nil || done.Output.Summary == "" {
			t.Fatalf("output after continue = %+v", done.Output)
		}
	})
}

// blockingRunner runs until its context ends, counting runs.
type blockingRunner struct {
	started chan string
	runs    atomic.Int32
}

func (r *blockingRunner) Run(ctx context.Context, job *agent.Job, sink agent.Sink) (*agent.Outcome, error) {
	r.runs.Add(1)
	r.started <- job.ExecutionID
	<-ctx.Done()
	return nil, ctx.Err()
}

func TestCancelRunning(t *testing.T) {
	forEachDB(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		db := open(t)
		runner := &blockingRunner{started: make(chan string, 10)}
		q := startQueue(t, db, runner)
		exe := launch(t, db, q, "org_a", "developer", playbook(stepParse))
		<-runner.started
		begin := time.Now()
		if _, err := db.Transition(context.Background(), "org_a", exe.ID, []store.Status{store.StatusRunning}, store.StatusCancelling, nil); err != nil {
			t.Fatal(err)
		}
		waitStatus(t, db, "org_a", exe.ID, store.StatusCancelled)
		if d := time.Since(begin); d > 3*time.Second {
			t.Errorf("cancellation took %s, want within seconds", d)
		}
	})
}

func TestConcurrencyLimitKeepsQueued(t *testing.T) {
	forEachDB(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		db := open(t)
		runner := &blockingRunner{started: make(chan string, 10)}
		q := startQueue(t, db, runner)
		first := launch(t, db, q, "org_a", "tiny", playbook(stepParse))
		<-runner.started
		second := launch(t, db, q, "org_a", "tiny", playbook(stepParse))
		time.Sleep(500 * time.Millisecond)
		if e, _ := db.GetExecution(context.Background(), "org_a", second.ID); e.Status != store.StatusQueued {
			t.Fatalf("second execution is %s over the plan's concurrency of 1, want queued", e.Status)
		}
		if _, err := db.Transition(context.Background(), "org_a", first.ID, []store.Status{store.StatusRunning}, store.StatusCancelling, nil); err != nil {
			t.Fatal(err)
		}
		waitStatus(t, db, "org_a", second.ID, store.StatusRunning)
		if _, err := db.Transition(context.Background(), "org_a", second.ID, []store.Status{store.StatusRunning}, store.StatusCancelling, nil); err != nil {
			t.Fatal(err)
		}
		waitStatus(t, db, "org_a", second.ID, store.StatusCancelled)
	})
}

func TestCostCaps(t *testing.T) {
	forEachDB(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		db := open(t)
		q := startQueue(t, db, agent.NewBuiltinRunner(nil))
		pb := playbook(stepParse, stepCategory, stepSummarize)

		// The organisation's monthly cap (tiny: 6) is crossed by charging
		// categorize (5 + 2): the run stops there, partial output kept.
		exe := launch(t, db, q, "org_a", "tiny", pb)
		done := waitStatus(t, db, "org_a", exe.ID, store.StatusFailed)
		if done.Failure == nil || done.Failure.Code != agent.FailureCostCap || done.Cost.AmountCents != 7 {
			t.Fatalf("monthly cap: failure %+v, cost %d; want cost_cap_exceeded at 7", done.Failure, done.Cost.AmountCents)
		}

		// The task's max cost (6) is checked before each step: categorize
		// never runs and the execution costs 5.
		exe = launchTask(t, db, q, "org_b", "developer", store.Task{Name: "capped", Playbook: pb, MaxCostCents: 6, TimeoutSeconds: 60})
		done = waitStatus(t, db, "org_b", exe.ID, store.StatusFailed)
		if done.Failure == nil || done.Failure.Code != agent.FailureCostCap || done.Cost.AmountCents != 5 {
			t.Fatalf("execution max: failure %+v, cost %d; want cost_cap_exceeded at 5", done.Failure, done.Cost.AmountCents)
		}
	})
}

// countingRunner succeeds at once and counts runs per execution.
type countingRunner struct {
	mu   sync.Mutex
	runs map[string]int
}

func (r *countingRunner) Run(ctx context.Context, job *agent.Job, sink agent.Sink) (*agent.Outcome, error) {
	r.mu.Lock()
	r.runs[job.ExecutionID]++
	r.mu.Unlock()
	return &agent.Outcome{Status: agent.StatusSucceeded, Output: agent.Output{Summary: "ok"}}, nil
}

// TestTwoReplicasExactlyOnce runs two queues on one database, as two
// replicas do, and checks every execution ran exactly once.
func TestTwoReplicasExactlyOnce(t *testing.T) {
	forEachDB(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		if t.Name() == "TestTwoReplicasExactlyOnce/sqlite" {
			t.Skip("the embedded SQLite setup is a single replica")
		}
		runner := &countingRunner{runs: map[string]int{}}
		dbA, dbB := open(t), open(t)
		qA := startQueue(t, dbA, runner)
		startQueue(t, dbB, runner)
		const n = 30
		ids := make([]string, n)
		for i := range n {
			ids[i] = launch(t, dbA, qA, "org_a", "developer", playbook(stepParse)).ID
		}
		for _, id := range ids {
			waitStatus(t, dbA, "org_a", id, store.StatusSucceeded)
		}
		runner.mu.Lock()
		defer runner.mu.Unlock()
		for _, id := range ids {
			if runner.runs[id] != 1 {
				t.Errorf("execution %s ran %d times, want 1", id, runner.runs[id])
			}
		}
	})
}
