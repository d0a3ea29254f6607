package plugin

import (
	"context"
	"errors"
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
//
// Watch keeps paths for good; a caller whose reloads may move a bundle to
// another file uses a Watcher, and gives it the new paths.
func Watch(ctx context.Context, paths []string, reload func()) error {
	w, err := NewWatcher(paths)
	if err != nil {
		return err
	}
	return w.Run(ctx, reload)
}

// Watcher is Watch with a set of paths that can change while it runs: a
// configuration reload that points a bundle at another file (or another
// directory) must have that file, and its .sig, watched from then on, or
// a signature copied in after the reload refused the bundle is never seen.
type Watcher struct {
	fs    *fsnotify.Watcher
	clock timerClock

	mu     sync.Mutex
	files  map[string]bool // guarded by mu: the absolute paths watched
	dirs   map[string]bool // guarded by mu: the directories added to fs
	closed bool            // guarded by mu: Run has returned
}

// NewWatcher watches paths, or returns an error naming the directory of
// one it cannot watch (one missing, say). Run starts the reloads.
func NewWatcher(paths []string) (*Watcher, error) {
	return newWatcher(paths, realClock{})
}

func newWatcher(paths []string, clock timerClock) (*Watcher, error) {
	fs, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watching plugin files: %w", err)
	}
	w := &Watcher{fs: fs, clock: clock, files: map[string]bool{}, dirs: map[string]bool{}}
	if err := w.SetPaths(paths); err != nil {
		fs.Close()
		return nil, err
	}
	return w, nil
}

// SetPaths makes paths the watched set, in place of the last one: changes
// to a path no longer in it stop reloading, and a directory that holds
// none of them any more stops being watched. A directory that cannot be
// watched is named in the error; the rest of paths are watched anyway, and
// the next SetPaths tries that directory again. After Run has returned,
// SetPaths does nothing.
//
// The app calls it right after each read of the configuration, before the
// bundle files are read: a change made after the read is then seen.
func (w *Watcher) SetPaths(paths []string) error {
	files := make(map[string]bool, len(paths))
	dirs := map[string]bool{}
	var errs []error
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			errs = append(errs, fmt.Errorf("watching %s: %w", p, err))
			continue
		}
		files[abs] = true
		dirs[filepath.Dir(abs)] = true
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	for d := range dirs {
		if w.dirs[d] {
			continue
		}
		if err := w.fs.Add(d); err != nil {
			errs = append(errs, fmt.Errorf("watching directory %s: %w", d, err))
			delete(dirs, d)
		}
	}
	for d := range w.dirs {
		if !dirs[d] {
			// An error means the watch is gone already (the directory was
			// removed): nothing is left to stop.
			_ = w.fs.Remove(d)
		}
	}
	w.files, w.dirs = files, dirs
	return errors.Join(errs...)
}

// watched reports whether name is one of the watched paths.
func (w *Watcher) watched(name string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.files[filepath.Clean(name)]
}

// Run calls reload as Watch does, until ctx ends, and returns nil then;
// the Watcher is closed when Run returns. Run it once.
func (w *Watcher) Run(ctx context.Context, reload func()) error {
	defer func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.closed = true
		w.fs.Close()
	}()
	d := newDebouncer(w.clock, watchDebounce, reload)
	defer d.stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.fs.Events:
			if !ok {
				return nil
			}
			if ev.Op&(fsnotify.Write|fsnotify.Create|fsnotify.Rename|fsnotify.Remove) != 0 && w.watched(ev.Name) {
				d.trigger()
			}
		case _, ok := <-w.fs.Errors:
			if !ok {
				return nil
			}
			// An overflow loses events: reload to be sure nothing was missed.
			d.trigger()
		}
	}
}

// timerClock makes the debounce testable without sleeping.
type timerClock interface {
	AfterFunc(d time.Duration, f func()) interface{ Stop() bool }
}

type realClock struct{}

func (realClock) AfterFunc(d time.Duration, f func()) interface{ Stop() bool } {
	return time.AfterFunc(d, f)
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
