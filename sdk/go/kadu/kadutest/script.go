package kadutest

import (
	"fmt"
	"os/exec"
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
	return buildOnce(t, dir, func(abs, tmp string) error {
		cmd := exec.Command("sh", "build.sh", tmp)
		cmd.Dir = abs
		if msg, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("sh build.sh in %s: %w\n%s", dir, err, msg)
		}
		return nil
	})
}
