package jobs

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/kobana/kadu/core/agent"
	"github.com/kobana/kadu/core/store"
	"github.com/kobana/kadu/core/webhook"
)

// recordingMetrics keeps what the queue reports.
type recordingMetrics struct {
	mu   sync.Mutex
	jobs map[string]int // "default/execute ok"
}

func (m *recordingMetrics) JobWorked(queue, kind string, wait, _ time.Duration, failed bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := queue + "/" + kind + map[bool]string{true: " error", false: " ok"}[failed]
	m.jobs[k]++
}

func (m *recordingMetrics) WebhookAttempt(string, time.Duration) {}
func (m *recordingMetrics) WebhookDelivered(bool, time.Duration) {}

func (m *recordingMetrics) count(k string, of map[string]int) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return of[k]
}

// TestMetricsOfARun: a run reports its job, and Depth counts the jobs waiting in the shared table, on both databases.
func TestMetricsOfARun(t *testing.T) {
	forEachDB(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		db := open(t)
		m := &recordingMetrics{jobs: map[string]int{}}
		q, err := New(context.Background(), Options{
			Store: db, Runner: agent.NewBuiltinRunner(nil), Plans: testPlans, DefaultPlan: "developer",
			OutputDir: t.TempDir(), PollInterval: 100 * time.Millisecond, Metrics: m,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		})
		if err != nil {
			t.Fatal(err)
		}
		// Not started yet: the execution's job waits in the table.
		exe := launch(t, db, q, "org_a", "developer", playbook(stepParse, stepSummarize))
		counts, err := q.Depth(t.Context())
		if err != nil {
			t.Fatalf("Depth: %v", err)
		}
		var available int64
		for _, c := range counts {
			if c.Queue == "default" && c.State == "available" {
				available = c.Jobs
			}
		}
		if available != 1 {
			t.Errorf("Depth = %+v, want 1 available job in queue default", counts)
		}
		if err := q.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = q.Stop(ctx)
		})
		waitStatus(t, db, "org_a", exe.ID, store.StatusSucceeded)
		deadline := time.Now().Add(20 * time.Second)
		for m.count("default/execute ok", m.jobs) == 0 {
			if time.Now().After(deadline) {
				t.Fatalf("the execute job was never reported worked: %v", m.jobs)
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}

// TestStatusChangesAreCountedWhereverMade: the store tells of every status
// change, the workers' and those made outside them (the API's cancel of a
// queued execution), once each.
func TestStatusChangesAreCountedWhereverMade(t *testing.T) {
	var mu sync.Mutex
	moves := map[string]int{}
	db := openStore(t, store.Options{Driver: store.DriverSQLite, DSN: filepath.Join(t.TempDir(), "kadu.db"),
		OnTransition: func(from, to store.Status) {
			mu.Lock()
			defer mu.Unlock()
			moves[string(from)+"→"+string(to)]++
		}})
	q, err := New(context.Background(), Options{
		Store: db, Runner: agent.NewBuiltinRunner(nil), Plans: testPlans, DefaultPlan: "developer",
		OutputDir: t.TempDir(), PollInterval: 100 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	cancelled := launch(t, db, q, "org_a", "developer", playbook(stepParse, stepSummarize))
	if _, err := db.Transition(t.Context(), "org_a", cancelled.ID, []store.Status{store.StatusQueued}, store.StatusCancelled, nil); err != nil {
		t.Fatalf("cancelling the queued execution: %v", err)
	}
	exe := launch(t, db, q, "org_a", "developer", playbook(stepParse, stepSummarize))
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = q.Stop(ctx)
	})
	waitStatus(t, db, "org_a", exe.ID, store.StatusSucceeded)
	mu.Lock()
	defer mu.Unlock()
	for _, k := range []string{"queued→cancelled", "queued→running", "running→succeeded"} {
		if moves[k] != 1 {
			t.Errorf("status change %s told %d times, want 1 (all: %v)", k, moves[k], moves)
		}
	}
}

func TestAttemptOutcome(t *testing.T) {
	for _, tt := range []struct {
		res  webhook.Result
		want string
	}{
		{webhook.Result{StatusCode: 204}, "success"},
		{webhook.Result{StatusCode: 410}, "http_4xx"},
		{webhook.Result{StatusCode: 503}, "http_5xx"},
		{webhook.Result{StatusCode: 302}, "http_3xx"},
		{webhook.Result{Err: errors.New("dial tcp: connection refused")}, "network_error"},
		{webhook.Result{}, "network_error"},
	} {
		if got := attemptOutcome(tt.res); got != tt.want {
			t.Errorf("attemptOutcome(%+v) = %q, want %q", tt.res, got, tt.want)
		}
	}
}
