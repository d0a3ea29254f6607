package app

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kobana/kadu/core/config"
	"github.com/kobana/kadu/core/plugin"
	"github.com/kobana/kadu/sdk/go/kadu/kadutest"
)

// The bundle-file tests serve the first-party bundles (required, as
// shipped) and the C SDK's fixture as an optional partner bundle, from a
// copy of its build that the test breaks.

// fixtureCopy copies the C fixture bundle into a directory of the test's
// own, so breaking it leaves the build cache alone.
func fixtureCopy(t *testing.T) (path, sha string) {
	t.Helper()
	built := kadutest.BuildScript(t, "../../sdk/c/fixture")
	b, err := os.ReadFile(built)
	if err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(t.TempDir(), "fixture.wasm")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, fileSHA256(t, path)
}

// withFixture is the configuration of these tests: the product and the
// fixture at path, pinned to sha.
func withFixture(t *testing.T, path, sha string, required bool) func(*config.Config) {
	return func(c *config.Config) {
		useFirstPartyBundles(t, c)
		c.Plugins.Bundles["fixture"] = config.Bundle{Enabled: true, Required: required, Path: path, SHA256: sha,
			Routes: []string{"GET /api/v1/tasks/{id}", "POST /api/v1/tasks/{id}/run", "GET /api/v1/usage"}}
	}
}

// statusOf returns the entry of GET /admin/plugins named name.
func statusOf(t *testing.T, srv *testServer, name string) plugin.BundleStatus {
	t.Helper()
	_, body := adminDo(t, srv, http.MethodGet, "/admin/plugins")
	for _, st := range body.Bundles {
		if st.Name == name {
			return st
		}
	}
	t.Fatalf("GET /admin/plugins has no bundle %q: %+v", name, body.Bundles)
	return plugin.BundleStatus{}
}

// waitFileError polls GET /admin/plugins until the fixture's file_error
// contains want, or fails t after a bound generous for a busy machine
// (the watcher reloads 250 ms after the change).
func waitFileError(t *testing.T, srv *testServer, want string) plugin.BundleStatus {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		st := statusOf(t, srv, "fixture")
		if strings.Contains(st.FileError, want) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("30 s after the change, GET /admin/plugins shows the fixture as %+v; want file_error containing %q", st, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestBundleFileBrokenWhileServing overwrites, then deletes, the file of a
// loaded bundle while the server runs: GET /admin/plugins and the log say
// so at once, naming the file, and the tool keeps answering from the
// version in memory. A restart with the file gone serves the other
// bundles and lists the broken one as failed.
func TestBundleFileBrokenWhileServing(t *testing.T) {
	path, sha := fixtureCopy(t)
	configure := withFixture(t, path, sha, false)
	srv := serveApp(t, configure, Options{Version: "test"})
	token, err := MintDevToken(srv.cfg, TokenOptions{OrgID: "org_file"})
	if err != nil {
		t.Fatal(err)
	}
	client := loopbackClient(1)
	echo := func(when string) {
		t.Helper()
		if err := toolCall(client, srv, token, "echo", `{"value":"x"}`); err != nil {
			t.Fatalf("fixture echo %s: %v", when, err)
		}
	}
	echo("before any change")

	if err := os.WriteFile(path, []byte("\x00asm\x01\x00\x00\x00 a deploy cut short"), 0o644); err != nil {
		t.Fatal(err)
	}
	st := waitFileError(t, srv, "sha256 mismatch")
	if st.State != plugin.StateLoaded || st.SHA256 != sha || !strings.Contains(st.FileError, path) ||
		!strings.Contains(st.FileError, "keeps serving from memory") || !strings.Contains(st.FileError, "next start will skip") {
		t.Errorf("after overwriting the file: %+v; want loaded, pinned to %s, and a file_error naming %s and what follows", st, sha, path)
	}
	if logs := srv.logs.String(); !strings.Contains(logs, "bundle file changed under the loaded version") || !strings.Contains(logs, path) {
		t.Errorf("no error log naming %s after it was overwritten", path)
	}
	echo("with its file overwritten")

	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	st = waitFileError(t, srv, "cannot be read")
	if st.State != plugin.StateLoaded || !strings.Contains(st.FileError, "no such file") {
		t.Errorf("after deleting the file: %+v; want loaded, with a file_error saying it is gone", st)
	}
	echo("with its file deleted")

	t.Run("restart serves the others", func(t *testing.T) {
		again := serveApp(t, configure, Options{Version: "test"})
		st := statusOf(t, again, "fixture")
		if st.State != plugin.StateFailed || !strings.Contains(st.LastError, path) {
			t.Errorf("fixture after a restart without its file: %+v; want failed, naming %s", st, path)
		}
		token, err := MintDevToken(again.cfg, TokenOptions{OrgID: "org_file"})
		if err != nil {
			t.Fatal(err)
		}
		if err := toolCall(client, again, token, "kadu_tasks_list", `{}`); err != nil {
			t.Errorf("a first-party tool next to the missing bundle: %v", err)
		}
		if logs := again.logs.String(); !strings.Contains(logs, "serving without the bundles that did not load") ||
			!strings.Contains(logs, `"level":"ERROR"`) {
			t.Errorf("the restart did not log an error about the skipped bundle")
		}
	})

	t.Run("restart refused when it is required", func(t *testing.T) {
		cfg := config.Defaults()
		cfg.DataDir = t.TempDir()
		cfg.Addr, cfg.AdminAddr = freeAddr(t), freeAddr(t)
		cfg.PublicURL = "http://" + cfg.Addr
		withFixture(t, path, sha, true)(&cfg)
		a, err := New(context.Background(), &cfg, Options{Version: "test", Logger: slog.New(slog.DiscardHandler)})
		if err == nil {
			a.Close()
			t.Fatal("the server started without a required bundle")
		}
		for _, want := range []string{`required bundle "fixture"`, path, "restore the file", "required: false"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("start error %q does not contain %q", err, want)
			}
		}
	})
}

// freeAddr is a loopback address nothing listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
