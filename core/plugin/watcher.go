package plugin

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// watchDebounce is how long the watcher waits after the last change before
// reloading: editors and deploy tools write a file in several steps (or
// write a temporary file and rename it), and one reload should see the
// finished result.
const watchDebounce = 250 * time.Millisecond

// Watch calls reload after any of paths (the config file, the bundle
// files) is written, created, renamed or removed, once changes have
// settled for 250 ms. It watches the directories holding the paths, so a
// file replaced by rename is still seen. Watch blocks until ctx ends and
// returns nil then, or returns an error at once when it cannot watch.
//
// reload runs on a goroutine of its own, never twice at once: changes
// during a reload cause one more reload after it. The app calls the same
// reload on SIGHUP.
func Watch(ctx context.Context, paths []string, reload func()) error {
	return watch(ctx, paths, reload, realClock{})
}

// timerClock makes the debounce testable without sleeping.
type timerClock interface {
	AfterFunc(d time.Duration, f func()) interface{ Stop() bool }
}

type realClock struct{}

func (realClock) AfterFunc(d time.Duration, f func()) interface{ Stop() bool } {
	return time.AfterFunc(d, f)
}

func watch(ctx context.Context, paths []string, reload func(), clock timerClock) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watching plugin files: %w", err)
	}
	defer w.Close()
	files := map[string]bool{}
	dirs := map[string]bool{}
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return fmt.Errorf("watching %s: %w", p, err)
		}
		files[abs] = true
		dirs[filepath.Dir(abs)] = true
	}
	for d := range dirs {
		if err := w.Add(d); err != nil {
			return fmt.Errorf("watching directory %s: %w", d, err)
		}
	}
	d := newDebouncer(clock, watchDebounce, reload)
	defer d.stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			if files[filepath.Clean(ev.Name)] && ev.Op&(fsnotify.Write|fsnotify.Create|fsnotify.Rename|fsnotify.Remove) != 0 {
				d.trigger()
			}
		case _, ok := <-w.Errors:
			if !ok {
				return nil
			}
			// An overflow loses events: reload to be sure nothing was missed.
			d.trigger()
		}
	}
}

// debouncer runs f once, delay after the last trigger. Runs of f never
// overlap: a trigger during a run schedules one more run after it.
type debouncer struct {
	clock timerClock
	delay time.Duration
	f     func()

	mu      sync.Mutex
	timer   interface{ Stop() bool } // guarded by mu
	running bool                     // guarded by mu
	again   bool                     // guarded by mu
	stopped bool                     // guarded by mu
}

func newDebouncer(clock timerClock, delay time.Duration, f func()) *debouncer {
	return &debouncer{clock: clock, delay: delay, f: f}
}

func (d *debouncer) trigger() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stopped {
		return
	}
	if d.timer != nil {
		d.timer.Stop()
	}
	d.timer = d.clock.AfterFunc(d.delay, d.fire)
}

func (d *debouncer) fire() {
	d.mu.Lock()
	if d.stopped {
		d.mu.Unlock()
		return
	}
	if d.running {
		d.again = true
		d.mu.Unlock()
		return
	}
	d.running = true
	d.mu.Unlock()
	for {
		d.f()
		d.mu.Lock()
		if !d.again || d.stopped {
			d.running = false
			d.mu.Unlock()
			return
		}
		d.again = false
		d.mu.Unlock()
	}
}

func (d *debouncer) stop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.stopped = true
	if d.timer != nil {
		d.timer.Stop()
	}
}
