package plugin

import (
	"context"
	"os"
	"path/filepath"
	"strings"
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

// TestWatcherSetPathsFollowsAMovedBundle moves the watched set to a file in
// a directory not watched before, as a reload pointing a bundle at a new
// release does: a change there reloads, a change to the old file no longer
// does.
func TestWatcherSetPathsFollowsAMovedBundle(t *testing.T) {
	oldDir, newDir := t.TempDir(), t.TempDir()
	oldFile, newFile := filepath.Join(oldDir, "acme-1.1.0.wasm"), filepath.Join(newDir, "acme-1.2.0.wasm")
	w, err := NewWatcher([]string{oldFile})
	if err != nil {
		t.Fatal(err)
	}
	var reloads atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx, func() { reloads.Add(1) }) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run returned %v after its context ended", err)
		}
	}()
	if err := w.SetPaths([]string{newFile}); err != nil {
		t.Fatalf("SetPaths: %v", err)
	}
	if w.watched(oldFile) || !w.watched(newFile) {
		t.Fatalf("after SetPaths: old file watched %v, new file watched %v; want false, true", w.watched(oldFile), w.watched(newFile))
	}
	// The new directory is watched once SetPaths returns: one write is
	// enough (the bound only catches a change never seen).
	if err := os.WriteFile(newFile, []byte("v2"), 0o644); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for reloads.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no reload within 30 s of writing the file SetPaths added")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestWatcherSetPathsNamesAMissingDirectory(t *testing.T) {
	dir := t.TempDir()
	w, err := NewWatcher([]string{filepath.Join(dir, "kadu.yaml")})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go w.Run(ctx, func() {})
	missing := filepath.Join(dir, "nope")
	err = w.SetPaths([]string{filepath.Join(dir, "kadu.yaml"), filepath.Join(missing, "acme.wasm")})
	if err == nil || !strings.Contains(err.Error(), missing) {
		t.Fatalf("SetPaths with a missing directory = %v, want an error naming %s", err, missing)
	}
	if !w.watched(filepath.Join(dir, "kadu.yaml")) {
		t.Error("the paths that can be watched are not, after one that cannot")
	}
}
