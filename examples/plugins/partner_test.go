// Package plugins_test checks that a partner's Go bundle builds from a
// directory outside this repository against the sdk/go module alone.
package plugins_test

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kobana/kadu/sdk/go/kadu/kadutest"
)

// TestGoPartnerBundleBuildsOutsideTheRepository copies examples/plugins/go
// to a temporary directory, points its requirement of
// github.com/kobana/kadu/sdk/go at this checkout's sdk/go (a partner would
// use a tagged version instead), builds it as the server loads bundles —
// with no workspace, no network and an empty module cache, so that nothing
// but the standard library and sdk/go can be reached — and calls its tool.
func TestGoPartnerBundleBuildsOutsideTheRepository(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a wasm bundle")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool on PATH")
	}
	sdk, err := filepath.Abs(filepath.Join("..", "..", "sdk", "go"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	copyDir(t, "go", dir)
	mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(mod), "replace") {
		t.Fatalf("examples/plugins/go/go.mod has a replace directive; a partner's has none:\n%s", mod)
	}
	mod = append(mod, []byte("\nreplace github.com/kobana/kadu/sdk/go => "+sdk+"\n")...)
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), mod, 0o644); err != nil {
		t.Fatal(err)
	}

	wasm := filepath.Join(dir, "failures.wasm")
	cmd := exec.Command(goTool, "build", "-trimpath", "-buildmode=c-shared", "-o", wasm, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0",
		"GOWORK=off", "GOPROXY=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local",
		"GOMODCACHE="+t.TempDir(), // empty: the bundle needs no module but sdk/go
	)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared in %s: %v\n%s", dir, err, out)
	}

	h := &kadutest.Host{API: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"data":[{"id":"exe_1","task_id":"tsk_a","status":"failed",` +
			`"failure":{"code":"timeout","message":"late"}}],"meta":{"next_cursor":null,"limit":50}}`))
	})}
	b := kadutest.Wasm(t, wasm, h)
	r := b.CallTool(t, "failures_digest", map[string]any{})
	if r.IsError || !strings.Contains(string(r.StructuredContent), `"task_id":"tsk_a","failures":1`) {
		t.Fatalf("failures_digest = %s %s; want tsk_a with one failure", r.StructuredContent, r.Text())
	}
}

// copyDir copies the regular files of src (not its subdirectories) to dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || strings.HasSuffix(e.Name(), ".wasm") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
