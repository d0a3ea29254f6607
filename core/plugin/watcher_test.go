package plugin

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeTimers is a timerClock whose timers fire only when the test says.
type fakeTimers struct {
	mu     sync.Mutex
	timers []*fakeTimer
}

type fakeTimer struct {
	f       func()
	stopped atomic.Bool
}

func (t *fakeTimer) Stop() bool { return !t.stopped.Swap(true) }

func (c *fakeTimers) AfterFunc(_ time.Duration, f func()) interface{ Stop() bool } {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{f: f}
	c.timers = append(c.timers, t)
	return t
}

// fire runs every pending timer that was not stopped.
func (c *fakeTimers) fire() {
	c.mu.Lock()
	pending := c.timers
	c.timers = nil
	c.mu.Unlock()
	for _, t := range pending {
		if !t.stopped.Swap(true) {
			t.f()
		}
	}
}

func TestDebouncerCoalesces(t *testing.T) {
	clock := &fakeTimers{}
	var runs atomic.Int32
	d := newDebouncer(clock, watchDebounce, func() { runs.Add(1) })
	for range 5 { // an editor's burst of writes
		d.trigger()
	}
	clock.fire()
	if n := runs.Load(); n != 1 {
		t.Fatalf("5 changes in a burst ran reload %d times, want 1", n)
	}
	d.trigger()
	clock.fire()
	if n := runs.Load(); n != 2 {
		t.Fatalf("a later change ran reload %d times in all, want 2", n)
	}
	d.stop()
	d.trigger()
	clock.fire()
	if n := runs.Load(); n != 2 {
		t.Fatal("reload ran after stop")
	}
}

func TestDebouncerNeverOverlaps(t *testing.T) {
	clock := &fakeTimers{}
	inside, release := make(chan struct{}), make(chan struct{})
	var runs, concurrent, maxConcurrent atomic.Int32
	d := newDebouncer(clock, watchDebounce, func() {
		if c := concurrent.Add(1); c > maxConcurrent.Load() {
			maxConcurrent.Store(c)
		}
		if runs.Add(1) == 1 {
			inside <- struct{}{}
			<-release
		}
		concurrent.Add(-1)
	})
	d.trigger()
	done := make(chan struct{})
	go func() { clock.fire(); close(done) }()
	<-inside // the first reload is running
	d.trigger()
	clock.fire() // a change during it: marked, not run alongside
	close(release)
	<-done
	if runs.Load() != 2 || maxConcurrent.Load() != 1 {
		t.Fatalf("runs = %d, max concurrent = %d; want 2 runs, never overlapping", runs.Load(), maxConcurrent.Load())
	}
}

func TestWatchReloadsOnChange(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "kadu.yaml")
	if err := os.WriteFile(cfg, []byte("a: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	reloaded := make(chan struct{}, 10)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- Watch(ctx, []string{cfg}, func() { reloaded <- struct{}{} }) }()

	// The watcher may not be listening yet: keep changing the file, less
	// often than the debounce, until a reload comes (the deadline only
	// bounds a broken watcher).
	deadline := time.After(30 * time.Second)
	tick := time.NewTicker(4 * watchDebounce)
	defer tick.Stop()
	wait := func(write func()) {
		t.Helper()
		for {
			write()
			select {
			case <-reloaded:
				return
			case <-tick.C:
			case <-deadline:
				t.Fatal("no reload after changing a watched file")
			}
		}
	}
	wait(func() { os.WriteFile(cfg, []byte("a: 2\n"), 0o644) })
	// Replacing by rename (what deploy tools do) is seen too.
	wait(func() {
		tmp := filepath.Join(dir, "kadu.yaml.tmp")
		os.WriteFile(tmp, []byte("a: 3\n"), 0o644)
		os.Rename(tmp, cfg)
	})
	cancel()
	if err := <-errc; err != nil {
		t.Fatalf("Watch returned %v after its context ended", err)
	}
}

func TestWatchFailsOnMissingDirectory(t *testing.T) {
	err := Watch(context.Background(), []string{filepath.Join(t.TempDir(), "nope", "kadu.yaml")}, func() {})
	if err == nil {
		t.Fatal("Watch of a path in a missing directory succeeded")
	}
}
