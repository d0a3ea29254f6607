package rustsdk_test

import (
	"crypto/sha256"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kobana/kadu/sdk/go/kadu/kadutest"
	"github.com/kobana/kadu/sdk/internal/fixturetest"
)

// fixture builds sdk/rust/fixture with its build.sh, as CI and partners do.
func fixture(t testing.TB) string { return kadutest.BuildScript(t, "fixture") }

func TestFixture(t *testing.T) { fixturetest.Run(t, fixture(t)) }

func FuzzEcho(f *testing.F) { fixturetest.FuzzEcho(f, fixture(f)) }

// callTool invokes tool name with args and returns how the call ended.
func callTool(t *testing.T, b *kadutest.Bundle, name string, args map[string]any) kadutest.Outcome {
	t.Helper()
	return b.Invoke(t, kadutest.Invocation{Op: "tools/call", Params: map[string]any{"name": name, "arguments": args}})
}

// TestNumbersKeepTheirText checks what the SDK's json::Number promises: a
// number comes back with the very text it came in, whatever its size.
func TestNumbersKeepTheirText(t *testing.T) {
	b := kadutest.Wasm(t, fixture(t), &kadutest.Host{})
	for _, v := range []string{`1.50`, `-0`, `1E+2`, `1e400`, `-1e-400`, `12345678901234567890123456789`,
		`0.1000000000000000055511151231257827021181583404541015625`, `[1.0,2.00,3e0]`} {
		out := callTool(t, b, "echo", map[string]any{"value": json.RawMessage(v)})
		var r kadutest.ToolResult
		if out.Status != 0 || json.Unmarshal(out.Output, &r) != nil {
			t.Fatalf("echo %s: status %d fault %q %.300s", v, out.Status, out.Fault, out.Output)
		}
		if got, want := r.Text(), `{"value":`+v+`}`; got != want {
			t.Errorf("echo %s: text %s; want %s", v, got, want)
		}
	}
}

// TestPanicIsLoggedThenFaults checks the panic hook: a handler's panic
// reaches the host's log at level error with its message and place, and
// the call is a trap, not an answer.
func TestPanicIsLoggedThenFaults(t *testing.T) {
	h := &kadutest.Host{}
	b := kadutest.Wasm(t, fixture(t), h)
	out := callTool(t, b, "fail", map[string]any{"tier": "fault", "message": "invariant broken: ledger"})
	if !strings.HasPrefix(out.Fault, "trap") {
		t.Errorf("panic: status %d fault %q; want a trap", out.Status, out.Fault)
	}
	var logged []kadutest.LogEntry
	for _, l := range h.Logs() {
		if strings.Contains(l.Message, "invariant broken: ledger") {
			logged = append(logged, l)
		}
	}
	if len(logged) != 1 || logged[0].Level != 3 || !strings.HasPrefix(logged[0].Message, "panic: invariant broken: ledger (at src/lib.rs:") {
		t.Errorf("panic logs %+v; want one error \"panic: <message> (at src/lib.rs:<line>)\"", logged)
	}
}

// TestOutputCapIsLogged checks that an output refused for size is a fault
// the SDK explains in the log, not a silent success.
func TestOutputCapIsLogged(t *testing.T) {
	h := &kadutest.Host{OutputCap: 100}
	b := kadutest.Wasm(t, fixture(t), h)
	out := callTool(t, b, "big", map[string]any{"bytes": 200})
	if out.Fault != "output too large" {
		t.Errorf("big 200 over a cap of 100: status %d fault %q; want output too large", out.Status, out.Fault)
	}
	logs := h.Logs()
	if len(logs) == 0 || logs[len(logs)-1].Level != 3 || !strings.Contains(logs[len(logs)-1].Message, "over this bundle's output cap") {
		t.Errorf("logs %+v; want an error naming the output cap", logs)
	}
}

// TestRustUnitTests runs the crate's own tests (JSON, templates, manifest
// checks, …) and its documentation examples natively with Debian's rustc,
// which CI installs.
func TestRustUnitTests(t *testing.T) {
	if testing.Short() {
		t.Skip("compiling the Rust tests is skipped in -short mode")
	}
	rustc, rustdoc := "/usr/bin/rustc", "/usr/bin/rustdoc"
	for _, tool := range []string{rustc, rustdoc} {
		if _, err := os.Stat(tool); err != nil {
			t.Fatalf("%s is missing: install it with `sudo apt-get install rustc` (CI does)", tool)
		}
	}
	dir := t.TempDir()
	run := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	bin := filepath.Join(dir, "kadu_test")
	run(rustc, "--edition", "2021", "--test", "-o", bin, "src/lib.rs")
	out := run(bin)
	if !strings.Contains(out, "test result: ok") {
		t.Errorf("unit tests:\n%s", out)
	}
	rlib := filepath.Join(dir, "libkadu.rlib")
	run(rustc, "--edition", "2021", "--crate-type", "rlib", "--crate-name", "kadu", "-o", rlib, "src/lib.rs")
	out = run(rustdoc, "--test", "--edition", "2021", "--crate-name", "kadu", "-L", dir, "--extern", "kadu="+rlib, "src/lib.rs")
	if !strings.Contains(out, "test result: ok") {
		t.Errorf("doc tests:\n%s", out)
	}
}

// TestReproducibleBuild builds the fixture again from two copies of the
// SDK at other paths: operators pin bundles by sha256, so the same sources
// must give the same bytes wherever they are cloned.
func TestReproducibleBuild(t *testing.T) {
	want := sum(t, fixture(t))
	for _, sub := range []string{"a", filepath.Join("some", "deeper path", "b")} {
		root := filepath.Join(t.TempDir(), sub, "rust")
		for _, p := range []string{"Cargo.toml", "src", "tools", "fixture/Cargo.toml", "fixture/Cargo.lock", "fixture/build.sh", "fixture/src"} {
			copyTree(t, p, filepath.Join(root, p))
		}
		out := filepath.Join(t.TempDir(), "fixture.wasm")
		cmd := exec.Command("sh", "build.sh", out)
		cmd.Dir = filepath.Join(root, "fixture")
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build.sh in %s: %v\n%s", cmd.Dir, err, msg)
		}
		if got := sum(t, out); got != want {
			t.Errorf("built in %s: sha256 %x; built here: %x", root, got, want)
		}
	}
}

func sum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// copyTree copies the file or directory src to dst, keeping modes.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		return os.WriteFile(to, b, info.Mode().Perm())
	})
	if err != nil {
		t.Fatalf("copying %s: %v", src, err)
	}
}
