package metrics

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestNilMetrics: parts built without an App (tests, kadu migrate) pass a
// nil *Metrics; every method must be a no-op, not a panic.
func TestNilMetrics(t *testing.T) {
	var m *Metrics
	m.MCPRequest("2025", "ping", "", "ok", time.Millisecond)
	m.Confirmation("asked")
	m.Approval("issued")
	m.HTTPRequest("/mcp", "POST", 200, time.Millisecond)
	m.BundleAPICall("/api/v1/tasks", "GET", 200)
	m.BundleInstantiated("tasks", time.Millisecond, false)
	m.BundleCall("tasks", "tools/call", time.Millisecond)
	m.BundleFault("tasks", "trap")
	m.BundleQuarantined("tasks")
	m.BundleReload(true)
	m.ExecutionTransition("queued", "running")
	m.JobWorked("default", "execute", time.Second, time.Second, false)
	m.WebhookAttempt("success", time.Millisecond)
	m.WebhookDelivered(true, time.Second)
	m.RateLimited("ip")
	m.AuthFailure("expired")
	if o := m.StoreObserver(); o != nil {
		t.Errorf("StoreObserver of a nil Metrics = %v, want nil", o)
	}
}

// TestRegistriesAreIndependent: two Apps in one process each have their
// own registry; one registry refuses Kadu's families twice.
func TestRegistriesAreIndependent(t *testing.T) {
	a, b := NewRegistry(), NewRegistry()
	ma, err := New(a)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(b); err != nil {
		t.Fatalf("New on a second registry: %v", err)
	}
	if _, err := New(a); err == nil {
		t.Error("New registered Kadu's families twice on one registry")
	}
	ma.RateLimited("org")
	if got := testutil.ToFloat64(ma.rateLimited.WithLabelValues("org")); got != 1 {
		t.Errorf("rate_limit_refusals_total{bucket=org} = %v, want 1", got)
	}
	fams, err := b.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() == "kadu_rate_limit_refusals_total" && len(f.GetMetric()) > 0 {
			t.Error("a count on one registry shows on the other")
		}
	}
}

func TestStatusClassAndMethod(t *testing.T) {
	for status, want := range map[int]string{200: "2xx", 204: "2xx", 301: "3xx", 404: "4xx", 503: "5xx", 0: Unknown, 99: Unknown, 600: Unknown} {
		if got := StatusClass(status); got != want {
			t.Errorf("StatusClass(%d) = %q, want %q", status, got, want)
		}
	}
	for method, want := range map[string]string{"GET": "GET", "DELETE": "DELETE", "BREW": "other", "get": "other", "": "other"} {
		if got := HTTPMethod(method); got != want {
			t.Errorf("HTTPMethod(%q) = %q, want %q", method, got, want)
		}
	}
}

// TestStoreObserver: every statement is timed by operation; a failure is
// counted, a row not found is not.
func TestStoreObserver(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := New(reg)
	if err != nil {
		t.Fatal(err)
	}
	o := m.StoreObserver()
	for _, e := range []error{nil, errors.New("disk full"), sql.ErrNoRows} {
		_, done := o.Start(context.Background(), "select executions")
		done(e)
	}
	if n := testutil.CollectAndCount(m.storeDuration, "kadu_store_query_duration_seconds"); n != 1 {
		t.Errorf("%d duration series, want 1", n)
	}
	if got := testutil.ToFloat64(m.storeErrors.WithLabelValues("select executions")); got != 1 {
		t.Errorf("store_query_errors_total = %v, want 1 (not found is not an error)", got)
	}
}

// TestQueueCollector: a count that fails or outlasts the timeout shows as
// kadu_queue_scrape_error 1 and no depth, and the scrape still answers.
func TestQueueCollector(t *testing.T) {
	ok := NewQueueCollector(func(context.Context) ([]QueueCount, error) {
		return []QueueCount{{Queue: "default", State: "available", Jobs: 3}}, nil
	}, time.Second, nil)
	want := `
# HELP kadu_queue_jobs River jobs not yet finished, by queue and state (available, scheduled, retryable, running), shared by every replica.
# TYPE kadu_queue_jobs gauge
kadu_queue_jobs{queue="default",state="available"} 3
# HELP kadu_queue_scrape_error 1 when the last count of River jobs failed or timed out (kadu_queue_jobs is then missing), else 0.
# TYPE kadu_queue_scrape_error gauge
kadu_queue_scrape_error 0
`
	if err := testutil.CollectAndCompare(ok, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
	slow := NewQueueCollector(func(ctx context.Context) ([]QueueCount, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}, 10*time.Millisecond, nil)
	want = `
# HELP kadu_queue_scrape_error 1 when the last count of River jobs failed or timed out (kadu_queue_jobs is then missing), else 0.
# TYPE kadu_queue_scrape_error gauge
kadu_queue_scrape_error 1
`
	if err := testutil.CollectAndCompare(slow, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}

// TestBundleCollector: one series per bundle and state, the serving
// version only while an old one drains.
func TestBundleCollector(t *testing.T) {
	c := NewBundleCollector(func() ([]BundleSample, MemorySample) {
		return []BundleSample{
			{Name: "tasks", Idle: 2, Busy: 1, MemoryBytes: 1 << 20, Quarantined: true},
			{Name: "tasks", Idle: 9, Busy: 9}, // a draining version: ignored
		}, MemorySample{BudgetBytes: 512 << 20, UsedBytes: 1 << 20, Evictions: 4, Refusals: 5}
	})
	want := `
# HELP kadu_bundle_instances Live instances of a bundle, by state (idle: pooled and ready; busy: in a call).
# TYPE kadu_bundle_instances gauge
kadu_bundle_instances{bundle="tasks",state="busy"} 1
kadu_bundle_instances{bundle="tasks",state="idle"} 2
# HELP kadu_bundle_quarantined 1 while a bundle's serving version is quarantined after repeated faults, else 0.
# TYPE kadu_bundle_quarantined gauge
kadu_bundle_quarantined{bundle="tasks"} 1
# HELP kadu_bundle_busy_refusals_total Bundle calls answered busy (retry later) because the memory budget or instance cap was full.
# TYPE kadu_bundle_busy_refusals_total counter
kadu_bundle_busy_refusals_total 5
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want),
		"kadu_bundle_instances", "kadu_bundle_quarantined", "kadu_bundle_busy_refusals_total"); err != nil {
		t.Error(err)
	}
	problems, err := testutil.CollectAndLint(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", p.Metric, p.Text)
	}
}

// TestLint runs Prometheus' own naming checks over every family.
func TestLint(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := New(reg); err != nil {
		t.Fatal(err)
	}
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", p.Metric, p.Text)
	}
}
