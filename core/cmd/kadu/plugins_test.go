package main

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kobana/kadu/sdk/go/kadu/kadutest"
)

func sha256File(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// TestPluginsValidate checks a real build of the tasks bundle: the
// operator sees its tools and a plugins.bundles entry to paste, pinned to
// the file they have.
func TestPluginsValidate(t *testing.T) {
	wasm := kadutest.BuildWasm(t, "../../../plugins/tasks")
	out, _, err := execute(t, &fake{}, "plugins", "validate", wasm)
	if err != nil {
		t.Fatalf("kadu plugins validate: %v\n%s", err, out)
	}
	if want := wasm + `: valid kadu/v1 bundle "tasks" version `; !strings.HasPrefix(out, want) {
		t.Errorf("first line of %q does not start with %q", out, want)
	}
	for _, tool := range []string{"kadu_tasks_list", "kadu_tasks_get", "kadu_tasks_create", "kadu_tasks_run", "kadu_usage_get"} {
		if !regexp.MustCompile(`(?m)^  tool +` + tool + ` `).MatchString(out) {
			t.Errorf("output lists no tool %s:\n%s", tool, out)
		}
	}
	// The snippet is YAML the operator pastes under the configuration's
	// root: the pin must be the file's own, or the server refuses it.
	snippet := "\nplugins:\n  bundles:\n    tasks:\n      enabled: true\n      path: " + wasm +
		"\n      sha256: " + sha256File(t, wasm) + "\n      routes:\n        - GET /api/v1/tasks\n"
	if !strings.Contains(out, snippet) {
		t.Errorf("output lacks the configuration snippet\n%s\ngot:\n%s", snippet, out)
	}
	if !strings.Contains(out, "        - POST /api/v1/tasks/{id}/run\n") {
		t.Errorf("snippet does not grant the run route:\n%s", out)
	}
}

// TestPluginsValidateWarnsUnusableRoutes checks that a bundle whose only
// tool is read-only but which declares a write and a destructive route is
// valid, with a warning for each of those routes naming what to change.
func TestPluginsValidateWarnsUnusableRoutes(t *testing.T) {
	wasm := kadutest.BuildWasm(t, "testdata/overreach")
	out, errOut, err := execute(t, &fake{}, "plugins", "validate", wasm)
	if err != nil {
		t.Fatalf("kadu plugins validate: %v\n%s", err, out)
	}
	for _, want := range []string{
		`warning: route "PATCH /api/v1/tasks/{id}" (write): it is a write and every operation of the bundle only reads`,
		`warning: route "POST /api/v1/tasks/{id}/run" (destructive): it is destructive and no tool of the bundle is annotated destructiveHint: true`,
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if strings.Contains(errOut, `"GET /api/v1/tasks"`) {
		t.Errorf("stderr warns about the read route its tool may call:\n%s", errOut)
	}
	// The first-party tasks bundle uses every route it declares.
	_, errOut, err = execute(t, &fake{}, "plugins", "validate", kadutest.BuildWasm(t, "../../../plugins/tasks"))
	if err != nil || errOut != "" {
		t.Errorf("validating the tasks bundle: %v, stderr %q; want no warning", err, errOut)
	}
}

func TestPluginsValidateRefuses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notWasm := filepath.Join(dir, "tasks.wasm")
	if err := os.WriteFile(notWasm, []byte("#!/bin/sh\necho not a bundle\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		path string
		want []string // in the error
	}{
		{name: "not WebAssembly", path: notWasm, want: []string{notWasm + " is not a valid bundle", "magic number"}},
		{name: "missing file", path: filepath.Join(dir, "nope.wasm"), want: []string{"nope.wasm", "no such file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, _, err := execute(t, &fake{}, "plugins", "validate", tt.path)
			if err == nil {
				t.Fatalf("kadu plugins validate %s succeeded:\n%s", tt.path, out)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if strings.Contains(out, "sha256:") {
				t.Errorf("a refused file got a configuration snippet:\n%s", out)
			}
		})
	}
}

// TestPluginsListPinMismatch lists a configuration whose tasks bundle is
// pinned to other bytes than its file: the row says so with the file's
// real hash, and the command fails, so a deploy script stops there.
func TestPluginsListPinMismatch(t *testing.T) {
	wasm := kadutest.BuildWasm(t, "../../../plugins/tasks")
	old := sha256.Sum256([]byte("an older build of the tasks bundle"))
	pin := hex.EncodeToString(old[:])
	cfg := writeConfig(t, "data_dir: "+t.TempDir()+`
plugins:
  bundles:
    tasks:
      enabled: true
      path: `+wasm+`
      sha256: `+pin+`
    executions: {enabled: false}
    files: {enabled: false}
    webhooks: {enabled: false}
`)
	out, _, err := execute(t, &fake{}, "plugins", "list", "--config", cfg)
	if err == nil || !strings.Contains(err.Error(), "1 bundle(s) would not load") {
		t.Errorf("kadu plugins list error = %v, want one bundle that would not load", err)
	}
	row := regexp.MustCompile(`(?m)^tasks +sha256 mismatch: file has ` + sha256File(t, wasm) + ` +` + regexp.QuoteMeta(wasm) + `$`)
	if !row.MatchString(out) {
		t.Errorf("no row reporting the tasks pin mismatch with the file's hash:\n%s", out)
	}
	for _, name := range []string{"executions", "files", "webhooks"} {
		if !regexp.MustCompile(`(?m)^` + name + ` +disabled`).MatchString(out) {
			t.Errorf("no disabled row for %s:\n%s", name, out)
		}
	}
}
