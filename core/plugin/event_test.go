package plugin

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// eventLog collects the events of OnEvent.
type eventLog struct {
	mu sync.Mutex
	ev []Event
}

func (l *eventLog) add(_ context.Context, e Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ev = append(l.ev, e)
}

func (l *eventLog) take() []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.ev
	l.ev = nil
	return out
}

// TestEventsOfLoadSwapRefuseQuarantine follows one bundle through the
// moments the audit trail records: each is told once, naming the bundle,
// with the version or the reason.
func TestEventsOfLoadSwapRefuseQuarantine(t *testing.T) {
	log := &eventLog{}
	e := newEnv(t, func(o *Options) {
		o.OnEvent = log.add
		o.Quarantine = QuarantinePolicy{Faults: 2, Window: time.Minute, Cooldown: 30 * time.Second}
	}, echoV(t, "1.0.0"), faultyBundle(t, 0))
	kinds := func(ev []Event) []string {
		var out []string
		for _, x := range ev {
			out = append(out, string(x.Kind)+" "+x.Bundle+"@"+x.Version)
		}
		slices.Sort(out)
		return out
	}
	if got := kinds(log.take()); !slices.Equal(got, []string{"loaded echo@1.0.0", "loaded faulty@0.1.0"}) {
		t.Fatalf("events at start = %q", got)
	}
	ctx := context.Background()
	faulty := faultyBundle(t, 0)
	if err := e.r.Reload(ctx, []BundleConfig{echoV(t, "1.0.1"), faulty}); err != nil {
		t.Fatalf("swap: %v", err)
	}
	if got := kinds(log.take()); !slices.Equal(got, []string{"swapped echo@1.0.1"}) {
		t.Fatalf("events of a swap = %q (an unchanged bundle must say nothing)", got)
	}
	bad := echoV(t, "1.0.2")
	bad.SHA256 = strings.Repeat("0", 64)
	if err := e.r.Reload(ctx, []BundleConfig{bad, faulty}); err == nil {
		t.Fatal("a bundle with the wrong sha256 loaded")
	}
	ev := log.take()
	if len(ev) != 1 || ev[0].Kind != EventRefused || ev[0].Bundle != "echo" || !strings.Contains(ev[0].Reason, "sha256 mismatch") {
		t.Fatalf("events of a refusal = %+v, want one refused echo naming the sha256 mismatch", ev)
	}
	for i := range 2 {
		if _, err := e.call(t, "org_a", "panic", `{}`); err == nil {
			t.Fatalf("panic call %d succeeded", i)
		}
	}
	ev = log.take()
	if len(ev) != 1 || ev[0].Kind != EventQuarantined || ev[0].Bundle != "faulty" || !strings.Contains(ev[0].Reason, "2 faults") {
		t.Fatalf("events of a quarantine = %+v, want one quarantined faulty with the fault count", ev)
	}
}
