package kadutest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// builds remembers the modules of BuildWasm and BuildScript by directory
// for the life of the test process.
var builds struct {
	mu   sync.Mutex
	done map[string]string
}

// BuildWasm builds the bundle in package directory pkg (e.g. "." from the
// bundle's own tests) with GOOS=wasip1 GOARCH=wasm -buildmode=c-shared and
// returns the module's path, as buildOnce does.
func BuildWasm(t testing.TB, pkg string) string {
	t.Helper()
	return buildOnce(t, pkg, func(dir, tmp string) error {
		goTool, err := exec.LookPath("go")
		if err != nil {
			return fmt.Errorf("the go tool is not on PATH: %w", err)
		}
		// The flags of `go tool task build:plugins`: the same source gives
		// the same bytes, so a test build matches the sha256 pins in the
		// config.
		cmd := exec.Command(goTool, "build", "-trimpath", "-buildvcs=false", "-buildmode=c-shared", "-o", tmp, ".")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
		if msg, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared %s: %w\n%s", pkg, err, msg)
		}
		return nil
	})
}

// buildOnce runs build once per test process for directory dir, with the
// absolute directory and a temporary output path, then moves the module
// to the user's cache directory (one file per directory, replaced by the
// next build, so nothing piles up) and returns its path. It skips t in
// -short mode: a first build takes seconds.
func buildOnce(t testing.TB, dir string, build func(dir, tmp string) error) string {
	t.Helper()
	if testing.Short() {
		t.Skip("kadutest: building a wasm bundle is skipped in -short mode")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatalf("kadutest: %v", err)
	}
	builds.mu.Lock()
	defer builds.mu.Unlock()
	if out, ok := builds.done[abs]; ok {
		return out
	}
	// Not t.TempDir: the module outlives the test that built it.
	cache, err := cacheDir("modules")
	if err != nil {
		t.Fatalf("kadutest: %v", err)
	}
	out := filepath.Join(cache, filepath.Base(abs)+"-"+hash(abs)+".wasm")
	tmp := fmt.Sprintf("%s.%d.tmp", out, os.Getpid())
	unlock, err := lockDir(out + ".lock")
	if err != nil {
		t.Fatalf("kadutest: %v", err)
	}
	defer unlock()
	if err := build(abs, tmp); err != nil {
		_ = os.Remove(tmp)
		t.Fatalf("kadutest: %v", err)
	}
	if err := os.Rename(tmp, out); err != nil {
		t.Fatalf("kadutest: the build wrote no module: %v", err)
	}
	if builds.done == nil {
		builds.done = map[string]string{}
	}
	builds.done[abs] = out
	return out
}

// hash tells apart packages with the same base name.
func hash(s string) string {
	var h uint32 = 2166136261
	for i := 0; i < len(s); i++ {
		h = (h ^ uint32(s[i])) * 16777619
	}
	const digits = "0123456789abcdef"
	b := make([]byte, 8)
	for i := range b {
		b[i] = digits[h>>(28-4*i)&0xf]
	}
	return string(b)
}

// cacheDir returns (creating it) the directory name under kadutest's cache
// in the user's cache directory.
func cacheDir(name string) (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	dir = filepath.Join(dir, "kadu", "kadutest", name)
	return dir, os.MkdirAll(dir, 0o755)
}
