package plugin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/mcp"
)

func TestLoadAndCall(t *testing.T) {
	e := newEnv(t, nil, bundle(t, "echo"))
	tools, err := e.r.Tools(context.Background(), principal("org_a"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Name)
	}
	if want := []string{"echo", "fetch", "fetch_write", "fetch_destructive", "whoami", "fail"}; !slices.Equal(names, want) {
		t.Fatalf("tools = %v, want %v", names, want)
	}
	echo := tools[0]
	if echo.Access != (mcp.Access{MinRole: auth.RoleViewer, Scope: auth.ScopeRead}) {
		t.Errorf("echo access = %+v", echo.Access)
	}
	if hp := echo.HeaderParams; len(hp) != 1 || hp[0].Header != "Region" || hp[0].Type != "string" || !slices.Equal(hp[0].Path, []string{"region"}) {
		t.Errorf("echo header params = %+v, want Region", echo.HeaderParams)
	}

	res, err := e.call(t, "org_a", "echo", `{"text":"hello"}`)
	if err != nil {
		t.Fatalf("echo: %v", err)
	}
	if got := text(t, res); got != "hello" || res.IsError {
		t.Fatalf("echo text = %q (isError %v), want hello", got, res.IsError)
	}
	if got := structured(t, res); got["text"] != "hello" || got["version"] != "1.0.0" {
		t.Fatalf("echo structuredContent = %v", got)
	}

	// One api() round trip, as the caller, with the query string intact.
	res, err = e.call(t, "org_a", "fetch", `{"paths":["/api/v1/tasks?limit=1"]}`)
	if err != nil {
		t.Fatalf("fetch: %v", err)
	}
	calls := e.api.recorded()
	if len(calls) != 1 || calls[0] != (apiRecord{Org: "org_a", Subject: "user-org_a", Method: "GET", Path: "/api/v1/tasks?limit=1"}) {
		t.Fatalf("dispatcher saw %+v", calls)
	}
	answers := structured(t, res)["answers"].([]any)
	if a := answers[0].(map[string]any); a["status"] != float64(200) || a["body"].(map[string]any)["org"] != "org_a" {
		t.Fatalf("guest read back %v", a)
	}

	st := e.statusOf(t, "echo")
	if st.State != StateLoaded || st.Version != "1.0.0" || st.Calls != 2 || st.APICalls != 1 || st.Faults != 0 || st.Pools != 1 {
		t.Fatalf("status = %+v", st)
	}
}

func TestSHA256MismatchRefused(t *testing.T) {
	cfg := bundle(t, "echo")
	want := cfg.SHA256
	cfg.SHA256 = strings.Repeat("0", 64)
	cfg.Required = true
	_, err := New(context.Background(), &Options{Dispatcher: &fakeAPI{}, Bundles: []BundleConfig{cfg}, CacheDir: testCacheDir(t)})
	if err == nil {
		t.Fatal("New loaded a bundle whose sha256 does not match its pin")
	}
	for _, s := range []string{`bundle "echo"`, "sha256 mismatch", want, cfg.SHA256, "update sha256 in the config"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not mention %q", err, s)
		}
	}
}

// A bundle that does not load stops New only when it is required; an
// optional one is skipped, listed as failed, and the others serve.
func TestOptionalBundleThatFailsIsSkipped(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "gone.wasm")
	broken := BundleConfig{Name: "gone", Path: missing, SHA256: strings.Repeat("0", 64)}
	logs := &logBuffer{}
	r, err := New(context.Background(), &Options{Dispatcher: &fakeAPI{}, CacheDir: testCacheDir(t),
		Logger: slog.New(slog.NewJSONHandler(logs, nil)), Bundles: []BundleConfig{bundle(t, "echo"), broken}})
	if err != nil {
		t.Fatalf("New with an optional bundle missing = %v, want the others served", err)
	}
	defer r.Close(context.Background())
	var gone *BundleStatus
	for _, st := range r.Status() {
		if st.Name == "gone" {
			gone = &st
		}
	}
	if gone == nil || gone.State != StateFailed || !strings.Contains(gone.LastError, missing) {
		t.Errorf("Status of the missing bundle = %+v, want failed naming %s", gone, missing)
	}
	if _, err := r.CallTool(context.Background(), principal("org_a"), &mcp.ToolCall{Tool: &mcp.Tool{Name: "echo"},
		Arguments: []byte(`{"text":"hi"}`), Client: era2026()}); err != nil {
		t.Errorf("echo next to the missing bundle: %v", err)
	}
	if !strings.Contains(logs.String(), "serving without the bundles that did not load") {
		t.Errorf("no error log about the skipped bundle: %s", logs)
	}

	broken.Required = true
	_, err = New(context.Background(), &Options{Dispatcher: &fakeAPI{}, CacheDir: testCacheDir(t),
		Bundles: []BundleConfig{bundle(t, "echo"), broken}})
	for _, want := range []string{`required bundle "gone"`, missing, "restore the file", "required: false"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("New with a required bundle missing = %v, want an error containing %q", err, want)
		}
	}
}

func TestInvalidManifestRefused(t *testing.T) {
	tests := []struct {
		variant string
		wantErr string
	}{
		{variant: "array_schema", wantErr: `manifest: tools[0] (broken).inputSchema: want "type": "object" at the root`},
		{variant: "header_in_array", wantErr: "x-mcp-header at /properties/tags/items"},
		{variant: "no_access", wantErr: "tools[0] (broken).access: required"},
		{variant: "ungranted_route", wantErr: `routes[0] "DELETE /api/v1/tasks/{id}": not granted by the operator`},
		{variant: "readonly_destructive", wantErr: "readOnlyHint and destructiveHint are both true"},
		{variant: "bad_version", wantErr: `version "one": want a semantic version`},
		{variant: "not_json", wantErr: "kadu_describe: bundle badmanifest: invalid output: output is not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.variant, func(t *testing.T) {
			t.Parallel()
			cfg := bundle(t, "badmanifest")
			cfg.Routes = []string{"GET /api/v1/tasks"}
			cfg.Config = map[string]string{"variant": tt.variant}
			cfg.Required = true
			r, err := New(context.Background(), &Options{Dispatcher: &fakeAPI{}, Bundles: []BundleConfig{cfg}, CacheDir: testCacheDir(t)})
			if err == nil {
				r.Close(context.Background())
				t.Fatal("New published a bundle with an invalid manifest")
			}
			if !strings.Contains(err.Error(), `bundle "badmanifest"`) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v\nwant it to name the bundle and contain %q", err, tt.wantErr)
			}
		})
	}
}

func TestModulesThatAreNotBundlesRefused(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		wasm    []byte
		wantErr string
	}{
		{name: "empty module", wasm: []byte("\x00asm\x01\x00\x00\x00"), wantErr: "not a kadu v1 bundle: it does not export kadu_abi_v1"},
		{name: "not wasm", wasm: []byte("#!/bin/sh\necho hi\n"), wantErr: "compiling"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_")+".wasm")
			if err := os.WriteFile(path, tt.wasm, 0o644); err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(tt.wasm)
			cfg := BundleConfig{Name: "x", Path: path, SHA256: hex.EncodeToString(sum[:]), Required: true}
			_, err := New(context.Background(), &Options{Dispatcher: &fakeAPI{}, Bundles: []BundleConfig{cfg}})
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("New() = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestConfiguredNameMustMatchManifest(t *testing.T) {
	cfg := bundle(t, "echo")
	cfg.Name = "other"
	cfg.Required = true
	_, err := New(context.Background(), &Options{Dispatcher: &fakeAPI{}, Bundles: []BundleConfig{cfg}, CacheDir: testCacheDir(t)})
	if err == nil || !strings.Contains(err.Error(), `name "echo" differs from the configured name "other"`) {
		t.Fatalf("New() = %v", err)
	}
}

// A corrupt or mis-pinned replacement is refused and the loaded version
// keeps serving; a new bundle that fails is not published, the others are.
func TestFailedReloadKeepsServing(t *testing.T) {
	e := newEnv(t, nil, echoV(t, "1.0.0"))
	corrupt := filepath.Join(t.TempDir(), "echo.wasm")
	if err := os.WriteFile(corrupt, []byte("\x00asm\x01\x00\x00\x00garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("\x00asm\x01\x00\x00\x00garbage"))
	v2 := echoV(t, "2.0.0")
	misPinned := v2
	misPinned.SHA256 = echoV(t, "1.0.0").SHA256
	broken := bundle(t, "badmanifest")
	broken.Config = map[string]string{"variant": "no_access"}

	tests := []struct {
		name    string
		cfgs    []BundleConfig
		wantErr string
	}{
		{name: "corrupt file", cfgs: []BundleConfig{{Name: "echo", Path: corrupt, SHA256: hex.EncodeToString(sum[:]), Routes: echoGrant}}, wantErr: "compiling"},
		{name: "mis-pinned file", cfgs: []BundleConfig{misPinned}, wantErr: "sha256 mismatch"},
		{name: "missing file", cfgs: []BundleConfig{{Name: "echo", Path: corrupt + ".gone", SHA256: v2.SHA256}}, wantErr: "no such file"},
		{name: "new broken bundle beside", cfgs: []BundleConfig{echoV(t, "1.0.0"), broken}, wantErr: `bundle "badmanifest"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := e.r.Reload(context.Background(), tt.cfgs)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Reload() = %v, want an error containing %q", err, tt.wantErr)
			}
			res, err := e.call(t, "org_a", "echo", `{"text":"still here"}`)
			if err != nil {
				t.Fatalf("echo after a failed reload: %v", err)
			}
			if v := structured(t, res)["version"]; v != "1.0.0" {
				t.Fatalf("echo served by %v, want the old 1.0.0", v)
			}
			if _, err := e.call(t, "org_a", "broken", `{}`); !errors.Is(err, &mcp.Error{Code: mcp.CodeInvalidParams}) {
				t.Fatalf("a refused bundle's tool answered: %v", err)
			}
		})
	}
	st := e.r.Status()
	if len(st) != 2 || st[0].Name != "echo" || st[0].State != StateLoaded || st[1].Name != "badmanifest" ||
		st[1].State != StateFailed || !strings.Contains(st[1].LastError, "access: required") {
		t.Fatalf("status = %+v", st)
	}
}

func TestReloadReusesUnchangedAndClosesRemoved(t *testing.T) {
	e := newEnv(t, nil, bundle(t, "echo"), bundle(t, "remember"))
	before := e.r.snap.Load().byName["echo"]
	if err := e.r.Reload(context.Background(), []BundleConfig{bundle(t, "echo"), bundle(t, "remember")}); err != nil {
		t.Fatal(err)
	}
	if e.r.snap.Load().byName["echo"] != before {
		t.Fatal("an unchanged bundle was reloaded instead of kept")
	}
	if n := e.r.runtimes.Load(); n != 2 {
		t.Fatalf("%d runtimes open, want 2", n)
	}
	// Changing only a limit makes a new version: limits live in the runtime.
	changed := bundle(t, "echo")
	changed.Limits.PoolSize = 1
	if err := e.r.Reload(context.Background(), []BundleConfig{changed}); err != nil {
		t.Fatal(err)
	}
	e.r.drains.Wait()
	if e.r.snap.Load().byName["echo"] == before {
		t.Fatal("a changed bundle kept its old version")
	}
	if _, err := e.call(t, "org_a", "remember", `{"value":"x"}`); !errors.Is(err, &mcp.Error{Code: mcp.CodeInvalidParams}) {
		t.Fatalf("a removed bundle's tool answered: %v", err)
	}
	if n := e.r.runtimes.Load(); n != 1 {
		t.Fatalf("%d runtimes open after removing a bundle and replacing another, want 1", n)
	}
	if !before.closed.Load() {
		t.Fatal("the replaced version was not closed")
	}
}

func TestNamesUniqueAcrossBundles(t *testing.T) {
	second := func(prefix string) BundleConfig {
		cfg := bundle(t, "echo")
		cfg.Name = "echo_two"
		cfg.Config = map[string]string{"bundle_name": "echo_two", "tool_prefix": prefix}
		cfg.Required = true
		return cfg
	}
	_, err := New(context.Background(), &Options{Dispatcher: &fakeAPI{}, CacheDir: testCacheDir(t),
		Bundles: []BundleConfig{bundle(t, "echo"), second("")}})
	if err == nil || !strings.Contains(err.Error(), `tool "echo" is already served by bundle echo@1.0.0`) {
		t.Fatalf("New() = %v, want a tool-name conflict", err)
	}

	// Through Reload, the working bundle keeps its names.
	e := newEnv(t, nil, bundle(t, "echo"))
	err = e.r.Reload(context.Background(), []BundleConfig{second(""), bundle(t, "echo")})
	if err == nil || !strings.Contains(err.Error(), `bundle "echo_two"`) {
		t.Fatalf("Reload() = %v, want echo_two refused", err)
	}
	if _, err := e.call(t, "org_a", "echo", `{"text":"x"}`); err != nil {
		t.Fatalf("echo after the conflict: %v", err)
	}
	if err := e.r.Reload(context.Background(), []BundleConfig{bundle(t, "echo"), second("two_")}); err != nil {
		t.Fatalf("distinct names: %v", err)
	}
	if res, err := e.call(t, "org_a", "two_echo", `{"text":"second"}`); err != nil || text(t, res) != "second" {
		t.Fatalf("two_echo = %v, %v", res, err)
	}
}

func TestCompilationCacheOnDisk(t *testing.T) {
	// The smallest module with code: one empty function, exported as "f".
	// It is not a bundle, but it is compiled (and cached) before the exports
	// are checked, which keeps this test free of a cold Go-guest compile.
	wasm := []byte("\x00asm\x01\x00\x00\x00" +
		"\x01\x04\x01\x60\x00\x00" + // type: func () -> ()
		"\x03\x02\x01\x00" + // function 0 has type 0
		"\x07\x05\x01\x01f\x00\x00" + // export "f" = function 0
		"\x0a\x04\x01\x02\x00\x0b") // its body: no locals, end
	path := filepath.Join(t.TempDir(), "f.wasm")
	if err := os.WriteFile(path, wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(wasm)
	dir := t.TempDir()
	_, err := New(context.Background(), &Options{Dispatcher: &fakeAPI{}, CacheDir: dir,
		Bundles: []BundleConfig{{Name: "f", Path: path, SHA256: hex.EncodeToString(sum[:]), Required: true}}})
	if err == nil || !strings.Contains(err.Error(), "not a kadu v1 bundle") {
		t.Fatalf("New() = %v", err)
	}
	var files int
	filepath.WalkDir(dir, func(_ string, d os.DirEntry, _ error) error {
		if d != nil && !d.IsDir() {
			files++
		}
		return nil
	})
	if files == 0 {
		t.Fatal("nothing was written to the compilation cache directory")
	}
}

func TestAdminHandler(t *testing.T) {
	cfg := echoV(t, "1.0.0")
	e := newEnv(t, func(o *Options) {
		o.ReloadConfig = func(context.Context) ([]BundleConfig, error) { return []BundleConfig{cfg}, nil }
	}, cfg)
	srv := httptest.NewServer(e.r.AdminHandler())
	defer srv.Close()

	get := func() (int, adminBody) {
		resp, err := http.Get(srv.URL + "/admin/plugins")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body adminBody
		json.NewDecoder(resp.Body).Decode(&body)
		return resp.StatusCode, body
	}
	post := func() (int, adminBody) {
		resp, err := http.Post(srv.URL+"/admin/plugins/reload", "application/json", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body adminBody
		json.NewDecoder(resp.Body).Decode(&body)
		return resp.StatusCode, body
	}
	if code, body := get(); code != 200 || len(body.Bundles) != 1 || body.Bundles[0].Version != "1.0.0" {
		t.Fatalf("GET = %d %+v", code, body)
	}
	cfg = echoV(t, "2.0.0")
	if code, body := post(); code != 200 || body.Error != "" || body.Bundles[0].Version != "2.0.0" {
		t.Fatalf("POST reload = %d %+v", code, body)
	}
	cfg.SHA256 = strings.Repeat("1", 64)
	code, body := post()
	if code != http.StatusUnprocessableEntity || !strings.Contains(body.Error, "sha256 mismatch") || body.Bundles[0].Version != "2.0.0" {
		t.Fatalf("POST reload with a bad pin = %d %+v", code, body)
	}
	if !strings.Contains(body.Bundles[0].LastError, "sha256 mismatch") {
		t.Fatalf("status does not show the failed reload: %+v", body.Bundles[0])
	}
	resp, err := http.Get(srv.URL + "/admin/plugins/reload")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("GET reload = %d, want 405", resp.StatusCode)
	}
}

func TestValidateOffline(t *testing.T) {
	path, _ := guest(t, "echo", "")
	m, err := validateBundle(context.Background(), path, nil, testCacheDir(t))
	if err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if m.Name != "echo" || m.Version != "1.0.0" || len(m.Tools) != 6 {
		t.Fatalf("manifest = %+v", m)
	}
	if _, err := validateBundle(context.Background(), path, []string{"GET /api/v1/tasks"}, testCacheDir(t)); err == nil ||
		!strings.Contains(err.Error(), `"GET /api/v1/tasks/{id}": not granted`) {
		t.Fatalf("Validate with a narrow grant = %v", err)
	}
	if _, err := validateBundle(context.Background(), path, []string{"GET tasks"}, ""); err == nil ||
		!strings.Contains(err.Error(), "routes[0]") {
		t.Fatalf("Validate with a malformed grant = %v", err)
	}
}
