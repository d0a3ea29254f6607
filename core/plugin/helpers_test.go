package plugin

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/internal/fakeclock"
	"github.com/kobana/kadu/core/mcp"
)

// Guests are real WebAssembly modules built from testdata/guests/<name>
// with the Go toolchain running the tests. A build is cached on disk under
// the user cache directory, keyed by a hash of the sources, the flags and
// the Go version, so only the first run after a change pays for it.

type builtGuest struct {
	path, sha string
	err       error
}

var (
	guestMu     sync.Mutex
	guestBuilds = map[string]*sync.Once{}
	guestOut    = map[string]*builtGuest{}
)

// guest returns the path and sha256 of testdata/guests/<name> built as a
// wasip1 reactor, with optional -ldflags (e.g. "-X main.version=2.0.0").
func guest(t testing.TB, name, ldflags string) (path, sha string) {
	t.Helper()
	key := name + "|" + ldflags
	guestMu.Lock()
	once, ok := guestBuilds[key]
	if !ok {
		once = new(sync.Once)
		guestBuilds[key] = once
	}
	guestMu.Unlock()
	once.Do(func() {
		p, s, err := buildGuest(name, ldflags)
		guestMu.Lock()
		guestOut[key] = &builtGuest{path: p, sha: s, err: err}
		guestMu.Unlock()
	})
	guestMu.Lock()
	b := guestOut[key]
	guestMu.Unlock()
	if b.err != nil {
		t.Fatalf("building guest %s: %v", name, b.err)
	}
	return b.path, b.sha
}

func buildGuest(name, ldflags string) (string, string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s|%s|%s\n", runtime.Version(), name, ldflags)
	for _, dir := range []string{filepath.Join("testdata", "guests", name), filepath.Join("testdata", "guests", "rawabi")} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			return "", "", fmt.Errorf("no sources in %s", dir)
		}
		sort.Strings(files)
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				return "", "", err
			}
			fmt.Fprintf(h, "%s %d\n", f, len(b))
			h.Write(b)
		}
	}
	cacheRoot, err := os.UserCacheDir()
	if err != nil {
		cacheRoot = os.TempDir()
	}
	dir := filepath.Join(cacheRoot, "kadu-plugin-test-guests")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	out := filepath.Join(dir, name+"-"+hex.EncodeToString(h.Sum(nil))[:16]+".wasm")
	if _, err := os.Stat(out); err != nil {
		tmp, err := os.CreateTemp(dir, name+"-*.tmp")
		if err != nil {
			return "", "", err
		}
		tmp.Close()
		defer os.Remove(tmp.Name())
		args := []string{"build", "-buildmode=c-shared", "-trimpath", "-o", tmp.Name()}
		if ldflags != "" {
			args = append(args, "-ldflags", ldflags)
		}
		args = append(args, "./testdata/guests/"+name)
		cmd := exec.Command(goTool(), args...)
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
		if msg, err := cmd.CombinedOutput(); err != nil {
			return "", "", fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, msg)
		}
		if err := os.Rename(tmp.Name(), out); err != nil {
			return "", "", err
		}
	}
	b, err := os.ReadFile(out)
	if err != nil {
		return "", "", err
	}
	sum := sha256.Sum256(b)
	return out, hex.EncodeToString(sum[:]), nil
}

func goTool() string {
	if p := filepath.Join(runtime.GOROOT(), "bin", "go"); fileExists(p) {
		return p
	}
	return "go"
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// fakeAPI is a Dispatcher that records every call and answers with a JSON
// echo of the request, or with handler when set.
type fakeAPI struct {
	mu      sync.Mutex
	calls   []apiRecord
	handler func(p *auth.Principal, method, path string, body []byte) (int, []byte)
}

type apiRecord struct {
	Org, Subject, Method, Path, Body string
}

func (f *fakeAPI) Dispatch(_ context.Context, p *auth.Principal, method, path string, body []byte) (int, []byte) {
	f.mu.Lock()
	f.calls = append(f.calls, apiRecord{Org: p.OrgID, Subject: p.Subject, Method: method, Path: path, Body: string(body)})
	h := f.handler
	f.mu.Unlock()
	if h != nil {
		return h(p, method, path, body)
	}
	resp, _ := json.Marshal(map[string]string{"method": method, "path": path, "org": p.OrgID})
	return 200, resp
}

func (f *fakeAPI) recorded() []apiRecord {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]apiRecord(nil), f.calls...)
}

// echoGrant is what the operator grants the echo bundle in most tests.
var echoGrant = []string{"GET /api/v1/tasks", "GET /api/v1/tasks/{id}", "PATCH /api/v1/tasks/{id}", "POST /api/v1/tasks/{id}/run"}

// bundle returns the config of a built guest.
func bundle(t testing.TB, name string) BundleConfig {
	t.Helper()
	path, sum := guest(t, name, "")
	cfg := BundleConfig{Name: name, Path: path, SHA256: sum}
	switch name {
	case "echo":
		cfg.Routes = echoGrant
	case "bench":
		cfg.Routes = []string{"GET /api/v1/tasks"}
	}
	return cfg
}

// echoV returns the echo bundle built as the given version.
func echoV(t testing.TB, version string) BundleConfig {
	t.Helper()
	path, sum := guest(t, "echo", "-X main.version="+version)
	return BundleConfig{Name: "echo", Path: path, SHA256: sum, Routes: echoGrant}
}

// newClock is the manual clock for TTLs, quarantine and requestState expiry.
func newClock() *fakeclock.Clock { return fakeclock.New(time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)) }

// logBuffer collects log output for assertions.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

type env struct {
	r     *Registry
	api   *fakeAPI
	clock *fakeclock.Clock
	logs  *logBuffer
}

// newEnv creates a Registry over a fake API with a manual clock, loading
// bundles, every one required (a test fails at once, with the reason, when
// one does not load); tweak may adjust the options first. It is closed at
// cleanup.
func newEnv(t testing.TB, tweak func(*Options), bundles ...BundleConfig) *env {
	t.Helper()
	bundles = slices.Clone(bundles)
	for i := range bundles {
		bundles[i].Required = true
	}
	e := &env{api: &fakeAPI{}, clock: newClock(), logs: &logBuffer{}}
	opts := &Options{
		Bundles: bundles, Dispatcher: e.api, Now: e.clock.Now, CacheDir: testCacheDir(t),
		Logger: slog.New(slog.NewJSONHandler(io.MultiWriter(e.logs), &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	if tweak != nil {
		tweak(opts)
	}
	r, err := New(context.Background(), opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	e.r = r
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := r.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
		if n := r.runtimes.Load(); n != 0 {
			t.Errorf("after Close, %d wazero runtimes are still open", n)
		}
	})
	return e
}

// testCacheDir is wazero's on-disk compilation cache shared by the tests,
// so a bundle compiled once (0.7 s for a Go guest) loads in milliseconds
// afterwards, in this run and the next.
func testCacheDir(t testing.TB) string {
	root, err := os.UserCacheDir()
	if err != nil {
		return t.TempDir()
	}
	return filepath.Join(root, "kadu-plugin-test-wazero")
}

func principal(org string) *auth.Principal {
	return &auth.Principal{Issuer: "https://issuer.test", Subject: "user-" + org, OrgID: org,
		Role: auth.RoleAdmin, Scopes: []string{auth.ScopeAdmin}, ClientID: "client-1"}
}

// era2026 is a client that declared elicitation only.
func era2026(caps ...string) mcp.ClientContext {
	c := mcp.ClientContext{ProtocolVersion: "2026-07-28", Era: mcp.Era2026, Capabilities: map[string]json.RawMessage{},
		Info: &mcp.Implementation{Name: "test-client", Version: "1.0"}}
	for _, name := range caps {
		c.Capabilities[name] = json.RawMessage(`{}`)
	}
	return c
}

// call runs a tool as org with JSON arguments.
func (e *env) call(t testing.TB, org, tool, args string) (*mcp.ToolResult, error) {
	t.Helper()
	return e.callWith(t, org, &mcp.ToolCall{Tool: &mcp.Tool{Name: tool}, Arguments: json.RawMessage(args),
		Client: era2026(), RequestID: "req_test"})
}

func (e *env) callWith(t testing.TB, org string, call *mcp.ToolCall) (*mcp.ToolResult, error) {
	t.Helper()
	return e.r.CallTool(context.Background(), principal(org), call)
}

// structured decodes a result's structuredContent.
func structured(t testing.TB, res *mcp.ToolResult) map[string]any {
	t.Helper()
	if res == nil {
		t.Fatal("nil result")
	}
	var m map[string]any
	if err := json.Unmarshal(res.StructuredContent, &m); err != nil {
		t.Fatalf("structuredContent %s: %v", res.StructuredContent, err)
	}
	return m
}

// text returns the first text block of a result.
func text(t testing.TB, res *mcp.ToolResult) string {
	t.Helper()
	if res == nil || len(res.Content) == 0 {
		t.Fatalf("result has no content: %+v", res)
	}
	b, _ := json.Marshal(res.Content[0])
	var c mcp.TextContent
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatalf("content[0] %s: %v", b, err)
	}
	return c.Text
}

// statusOf returns the status of the named bundle.
func (e *env) statusOf(t testing.TB, name string) BundleStatus {
	t.Helper()
	for _, s := range e.r.Status() {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no status for bundle %s in %+v", name, e.r.Status())
	return BundleStatus{}
}

// flip changes one character in the middle of a sealed value.
func flip(s string) string {
	i := len(s) / 2
	c := byte('A')
	if s[i] == 'A' {
		c = 'B'
	}
	return s[:i] + string(c) + s[i+1:]
}
