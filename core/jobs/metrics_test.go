package jobs

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/kobana/kadu/core/agent"
	"github.com/kobana/kadu/core/store"
	"github.com/kobana/kadu/core/webhook"
)

// recordingMetrics keeps what the queue reports.
type recordingMetrics struct {
	mu          sync.Mutex
	transitions map[string]int // "queued→running"
	jobs        map[string]int // "default/execute ok"
}

func (m *recordingMetrics) ExecutionTransition(from, to string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.transitions[from+"→"+to]++
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

// TestMetricsOfARun: a run reports its status changes and its job, and
// Depth counts the jobs waiting in the shared table, on both databases.
func TestMetricsOfARun(t *testing.T) {
	forEachDB(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		db := open(t)
		m := &recordingMetrics{transitions: map[string]int{}, jobs: map[string]int{}}
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
		for _, k := range []string{"queued→running", "running→succeeded"} {
			if n := m.count(k, m.transitions); n != 1 {
				t.Errorf("transition %s reported %d times, want 1 (all: %v)", k, n, m.transitions)
			}
		}
	})
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
