package plugin

import (
	"maps"
	"sync"
	"testing"
	"time"
)

// countingMetrics records what the registry reports.
type countingMetrics struct {
	mu     sync.Mutex
	counts map[string]int // "fault faulty trap", "call echo tools/call", …
}

func (m *countingMetrics) add(k string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.counts == nil {
		m.counts = map[string]int{}
	}
	m.counts[k]++
}

func (m *countingMetrics) get(k string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.counts[k]
}

func (m *countingMetrics) BundleInstantiated(b string, _ time.Duration, failed bool) {
	m.add("instantiate " + b + map[bool]string{true: " error", false: " ok"}[failed])
}
func (m *countingMetrics) BundleCall(b, op string, _ time.Duration) { m.add("call " + b + " " + op) }
func (m *countingMetrics) BundleFault(b, kind string)               { m.add("fault " + b + " " + kind) }
func (m *countingMetrics) BundleQuarantined(b string)               { m.add("quarantine " + b) }
func (m *countingMetrics) BundleReload(failed bool) {
	m.add("reload" + map[bool]string{true: " error", false: " ok"}[failed])
}

// TestMetricsReported: loads, calls, faults by kind and the quarantine they
// lead to reach Options.Metrics under the bundle's configured name.
func TestMetricsReported(t *testing.T) {
	m := &countingMetrics{}
	e := newEnv(t, func(o *Options) {
		o.Metrics = m
		o.Quarantine = QuarantinePolicy{Faults: 2, Window: time.Minute, Cooldown: 30 * time.Second}
	}, faultyBundle(t, 0))
	if _, err := e.call(t, "org_a", "ok", `{}`); err != nil {
		t.Fatalf("ok: %v", err)
	}
	for range 2 {
		if _, err := e.call(t, "org_a", "panic", `{}`); err == nil {
			t.Fatal("panic call succeeded")
		}
	}
	want := map[string]int{
		"reload ok":              1,
		"call faulty describe":   1,
		"call faulty tools/call": 3,
		"fault faulty trap":      2,
		"quarantine faulty":      1,
		"instantiate faulty ok":  m.get("instantiate faulty ok"),
	}
	if n := want["instantiate faulty ok"]; n < 2 { // the describe instance, then the org's (again after each fault)
		t.Errorf("%d instantiations reported, want at least 2", n)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !maps.Equal(m.counts, want) {
		t.Errorf("reported %v, want %v", m.counts, want)
	}
}
