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

// TestSlowEventHookHoldsUpNeitherSwapNorClose blocks the hook on the
// "swapped" event, as an audit write to a stalled database would: by the
// time the hook hears of the swap, calls are answered by the new version,
// and Close returns without waiting for the hook. Reload itself returns
// once the hook does.
func TestSlowEventHookHoldsUpNeitherSwapNorClose(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	defer func() {
		select {
		case <-release:
		default:
			close(release) // a failed test must not leave Reload blocked
		}
	}()
	e := newEnv(t, func(o *Options) {
		o.OnEvent = func(_ context.Context, ev Event) {
			if ev.Kind == EventSwapped {
				close(entered)
				<-release
			}
		}
	}, echoV(t, "1.0.0"))
	v2 := echoV(t, "1.0.1") // built before the reload: a build is not what this test waits for
	reloaded := make(chan error, 1)
	go func() { reloaded <- e.r.Reload(context.Background(), []BundleConfig{v2}) }()

	// The bound only catches a hook never called: loading takes seconds at
	// most, even under the race detector on a busy machine.
	select {
	case <-entered:
	case err := <-reloaded:
		t.Fatalf("Reload returned (%v) without telling the hook of the swap", err)
	case <-time.After(2 * time.Minute):
		t.Fatal("the hook was not told of the swap within 2 minutes")
	}
	res, err := e.call(t, "org_a", "echo", `{"text":"hi"}`)
	if err != nil {
		t.Fatalf("echo while the hook is told of the swap: %v", err)
	}
	if got := structured(t, res)["version"]; got != "1.0.1" {
		t.Errorf("echo while the hook is told of the swap answered from %v, want 1.0.1: the event came before the swap", got)
	}
	select {
	case err := <-reloaded:
		t.Fatalf("Reload returned (%v) before its hook did", err)
	default:
	}

	closed := make(chan error, 1)
	go func() { closed <- e.r.Close(context.Background()) }()
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("Close waited for a blocked event hook")
	}

	close(release)
	select {
	case err := <-reloaded:
		if err != nil {
			t.Errorf("Reload: %v", err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("Reload did not return after its hook did")
	}
}
