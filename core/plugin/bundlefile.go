package plugin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"
)

// requiredLoaded decides whether New may serve after loading bundles
// failed with loadErr: it may when every bundle that failed is optional.
// Otherwise it returns the error to start with, naming each required
// bundle, its file and what to do.
func (r *Registry) requiredLoaded(bundles []BundleConfig, loadErr error) error {
	failures := *r.failures.Load()
	var fatal []error
	optional := 0
	for _, b := range bundles {
		f, ok := failures[b.Name]
		switch {
		case !ok:
		case b.Required:
			fatal = append(fatal, fmt.Errorf("required bundle %q did not load from %s: %w; restore the file "+
				"or pin the one there (sha256), or make the bundle optional (required: false) to start without it",
				b.Name, b.Path, f.err))
		default:
			optional++
		}
	}
	if len(fatal) > 0 {
		return errors.Join(fatal...)
	}
	if optional == 0 {
		return loadErr // not a bundle's own failure (a name given twice)
	}
	r.set.log.LogAttrs(context.Background(), slog.LevelError,
		"serving without the bundles that did not load; GET /admin/plugins lists them as failed",
		slog.Int("failed", optional), slog.Any("error", loadErr))
	return nil
}

// fileProblem names what is wrong with a loaded version's file, or "".
func fileProblem(v *version) string {
	_, sum, err := readBundle(v.cfg.Path)
	switch {
	case err != nil:
		return fmt.Sprintf("bundle file %s cannot be read: %v", v.cfg.Path, err)
	case !strings.EqualFold(sum, v.sha):
		return fmt.Sprintf("bundle file %s changed: sha256 mismatch, the file now has %s", v.cfg.Path, sum)
	}
	return ""
}

// fileState is what the Registry last saw of the file behind a loaded
// version. Safe for concurrent use (Reload and the sweep both check).
type fileState struct {
	mu      sync.Mutex
	size    int64     // of the file when last found intact; guarded by mu
	mod     time.Time // likewise
	problem string    // what is wrong with it now, "" when intact; guarded by mu
}

// checkFile verifies that v's file is still the one v was loaded from. A
// running version does not need it (the module is in memory), but the next
// start does: a file deleted or overwritten now would make that start skip
// the bundle, or refuse to start when it is required, long after the
// change. So the change is reported at once: an error log (once per
// change), FileError in Status, and the error returned (Reload joins it).
// The file is hashed again only when its size or time changed.
func (r *Registry) checkFile(ctx context.Context, v *version) error {
	if v.cfg.Wasm != nil {
		return nil // built into the binary: no file to lose
	}
	fi, statErr := os.Stat(v.cfg.Path)
	f := &v.file
	f.mu.Lock()
	defer f.mu.Unlock()
	if statErr == nil && f.problem == "" && fi.Size() == f.size && fi.ModTime().Equal(f.mod) {
		return nil
	}
	problem := fileProblem(v)
	if problem == "" {
		if f.problem != "" {
			r.set.log.LogAttrs(ctx, slog.LevelInfo, "bundle file intact again",
				slog.String("bundle", v.id), slog.String("path", v.cfg.Path))
		}
		f.problem = ""
		if statErr == nil {
			f.size, f.mod = fi.Size(), fi.ModTime()
		}
		return nil
	}
	next := "the next start will skip the bundle"
	if v.cfg.Required {
		next = "the next start will fail, as the bundle is required"
	}
	msg := fmt.Sprintf("%s. The loaded version keeps serving from memory, but %s: restore the file (sha256 %s), "+
		"or pin the new file in the config and reload", problem, next, v.sha)
	if msg != f.problem {
		r.set.log.LogAttrs(ctx, slog.LevelError, "bundle file changed under the loaded version",
			slog.String("bundle", v.id), slog.String("path", v.cfg.Path), slog.String("problem", msg))
	}
	f.problem = msg
	return errors.New(msg)
}

// fileError is what checkFile last found wrong with v's file, or "".
func (v *version) fileError() string {
	v.file.mu.Lock()
	defer v.file.mu.Unlock()
	return v.file.problem
}
