package kadutest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// BuildScript builds a bundle written in any language by running the
// build.sh in directory dir, the way a partner does, and returns the
// module's path. The script is run as `sh build.sh <out>` in dir and must
// write the module to <out>; it chooses its own toolchain (clang, rustc,
// asc …). Like BuildWasm, it builds once per test process, writes to the
// user's cache directory and skips t in -short mode.
//
// A missing toolchain fails t with the script's own message: the bundles
// of this repository are built from source in CI, so a test that silently
// skipped them would pass without testing anything.
func BuildScript(t testing.TB, dir string) string {
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
	cache, err := cacheDir("modules")
	if err != nil {
		t.Fatalf("kadutest: %v", err)
	}
	out := filepath.Join(cache, filepath.Base(abs)+"-"+hash(abs)+".wasm")
	tmp := fmt.Sprintf("%s.%d.tmp", out, os.Getpid())
	cmd := exec.Command("sh", "build.sh", tmp)
	cmd.Dir = abs
	if msg, err := cmd.CombinedOutput(); err != nil {
		_ = os.Remove(tmp)
		t.Fatalf("kadutest: sh build.sh in %s: %v\n%s", dir, err, msg)
	}
	if err := os.Rename(tmp, out); err != nil {
		t.Fatalf("kadutest: %s wrote no module: %v", filepath.Join(dir, "build.sh"), err)
	}
	if builds.done == nil {
		builds.done = map[string]string{}
	}
	builds.done[abs] = out
	return out
}
