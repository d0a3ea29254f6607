package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kobana/kadu/core/config"
	"github.com/kobana/kadu/sdk/go/kadu/kadutest"
)

// firstParty are the bundles `go tool task build` builds into the binary.
func firstParty() []string { return []string{"executions", "files", "tasks", "webhooks"} }

// buildKaduWithBundles compiles the binary as `go tool task build` does:
// the first-party bundles (built with the flags of build:plugins, so their
// sha256 matches the pins) in plugins/embedded/wasm, which the binary
// embeds. They are laid there through an -overlay, so the test neither
// needs a prior build nor writes into the source tree.
func buildKaduWithBundles(t testing.TB) string {
	t.Helper()
	wasmDir, err := filepath.Abs("../../../plugins/embedded/wasm")
	if err != nil {
		t.Fatal(err)
	}
	replace := map[string]string{}
	for _, name := range firstParty() {
		replace[filepath.Join(wasmDir, name+".wasm")] = kadutest.BuildWasm(t, "../../../plugins/"+name)
	}
	overlay, err := json.Marshal(map[string]any{"Replace": replace})
	if err != nil {
		t.Fatal(err)
	}
	overlayFile := filepath.Join(t.TempDir(), "overlay.json")
	if err := os.WriteFile(overlayFile, overlay, 0o600); err != nil {
		t.Fatal(err)
	}
	return buildKadu(t, "-overlay", overlayFile)
}

// TestBinaryServesFromAnyDirectory is what an operator does with the
// artefact of `go tool task build`: start it from some other directory,
// with no configuration file and an empty data directory. The bundles
// built into it serve all 32 tools, /readyz says they are loaded, and
// `kadu version` lists them with the sha256 the built-in pins expect.
func TestBinaryServesFromAnyDirectory(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the bundles and the binary, and starts a server")
	}
	bin := buildKaduWithBundles(t)
	cwd := t.TempDir()                                         // no config/kadu.yaml here
	env := append(os.Environ(), "XDG_STATE_HOME="+t.TempDir()) // default data_dir: empty
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, config.EnvPrefix) {
			t.Fatalf("the environment sets %s; this test needs the built-in defaults", kv)
		}
	}

	version := exec.Command(bin, "version")
	version.Dir, version.Env = cwd, env
	out, err := version.Output()
	if err != nil {
		t.Fatalf("kadu version: %v", err)
	}
	pins := config.Defaults().Plugins.Bundles
	for _, name := range firstParty() {
		if want := "  " + name + " "; !strings.Contains(string(out), want) || !strings.Contains(string(out), "sha256:"+pins[name].SHA256) {
			t.Errorf("kadu version does not list bundle %s with its pinned sha256 %s:\n%s", name, pins[name].SHA256, out)
		}
	}

	addr, admin := freeAddr(t), freeAddr(t)
	serve := exec.Command(bin, "serve", "--addr", addr, "--admin-addr", admin)
	serve.Dir, serve.Env = cwd, env
	var stderr strings.Builder
	stdout := &lockedBuffer{}
	serve.Stderr, serve.Stdout = &stderr, stdout
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = serve.Process.Signal(os.Interrupt)
		_ = serve.Wait()
		if t.Failed() {
			t.Logf("kadu serve stderr:\n%s", stderr.String())
		}
	})
	// Compiling four bundles into an empty cache takes a while on a busy
	// machine: generous budget, then a message naming what was awaited.
	var ready string
	deadline := time.Now().Add(4 * time.Minute)
	for {
		if res, err := http.Get("http://" + admin + "/readyz"); err == nil {
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if ready = string(b); res.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("kadu serve started from %s was not ready within 4 minutes; last /readyz: %q", cwd, ready)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if !strings.Contains(ready, `"bundles":{"status":"ok","loaded":4}`) {
		t.Errorf("/readyz = %s; want the bundles check ok with 4 loaded", ready)
	}

	// The ready banner names the token command to paste: this one.
	wantBanner := "Access token: " + bin + " token --addr " + addr + "   "
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(stdout.String(), wantBanner); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("kadu serve's stdout lacks %q once ready:\n%s", wantBanner, stdout.String())
		}
	}
	tok := exec.Command(bin, "token", "--addr", addr)
	tok.Dir, tok.Env = cwd, env
	token, err := tok.Output()
	if err != nil {
		t.Fatalf("kadu token: %v", err)
	}
	names := toolNames(t, addr, strings.TrimSpace(string(token)))
	if len(names) != 32 {
		t.Fatalf("tools/list from a server started in another directory lists %d tools, want 32: %v", len(names), names)
	}
}

// lockedBuffer collects a child's output while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
