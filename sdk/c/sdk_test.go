package csdk_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kobana/kadu/sdk/go/kadu/kadutest"
	"github.com/kobana/kadu/sdk/internal/fixturetest"
)

// fixture builds sdk/c/fixture with its build.sh, as CI and partners do.
func fixture(t testing.TB) string { return kadutest.BuildScript(t, "fixture") }

func TestFixture(t *testing.T) { fixturetest.Run(t, fixture(t)) }

func FuzzEcho(f *testing.F) { fixturetest.FuzzEcho(f, fixture(f)) }

// echo calls the fixture's echo tool with value as raw JSON and returns
// the outcome.
func echo(t *testing.T, b *kadutest.Bundle, value string) kadutest.Outcome {
	t.Helper()
	return b.Invoke(t, kadutest.Invocation{Op: "tools/call", Params: map[string]any{
		"name": "echo", "arguments": map[string]any{"value": json.RawMessage(value)}}})
}

// toolText returns the text of a tools/call result.
func toolText(t *testing.T, out kadutest.Outcome) string {
	t.Helper()
	var r kadutest.ToolResult
	if out.Status != 0 || out.Fault != "" || json.Unmarshal(out.Output, &r) != nil {
		t.Fatalf("status %d fault %q output %.300s; want a result", out.Status, out.Fault, out.Output)
	}
	return r.Text()
}

// TestNumbersKeepTheirText checks what sets the C SDK's JSON apart from a
// float64 round trip: a number comes back with the very text it came in.
func TestNumbersKeepTheirText(t *testing.T) {
	b := kadutest.Wasm(t, fixture(t), &kadutest.Host{})
	for _, v := range []string{`1.50`, `-0`, `1E+2`, `1e400`, `-1e-400`, `12345678901234567890123456789`,
		`0.1000000000000000055511151231257827021181583404541015625`, `[1.0,2.00,3e0]`} {
		if got, want := toolText(t, echo(t, b, v)), `{"value":`+v+`}`; got != want {
			t.Errorf("echo %s: text %s; want %s", v, got, want)
		}
	}
}

// TestStringsAsGoDecodesThem checks the parser's UTF-8 rules against Go's
// encoding/json, which the host uses: invalid bytes and lone surrogates
// become U+FFFD, pairs join, control characters are escaped on the way out.
func TestStringsAsGoDecodesThem(t *testing.T) {
	mux := http.NewServeMux()
	var body []byte
	mux.HandleFunc("GET /api/v1/usage", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(body) })
	b := kadutest.Wasm(t, fixture(t), &kadutest.Host{API: mux})
	for _, s := range []string{
		`"\ud800"`, `"\udc00x"`, `"\ud800\ud800\udc00"`, `"\ud83d\ude00"`, `"a\u0000b"`, `"\u001f\u007f"`,
		"\"\xff\xfe\"", "\"\xe2\x82\"", "\"\xed\xa0\x80\"", "\"\xf4\x90\x80\x80\"", "\"\xc0\xaf\"", "\"ok ✓ 😀\"",
	} {
		// The API's body reaches the parser as it is (the invocation was
		// re-encoded by Go on the way in).
		body = []byte(`{"s":` + s + `}`)
		r := b.CallTool(t, "call", map[string]any{"method": "GET", "path": "/api/v1/usage"})
		var got struct {
			LastBody struct {
				S *string `json:"s"`
			} `json:"last_body"`
		}
		var want struct {
			S *string `json:"s"`
		}
		if err := json.Unmarshal(body, &want); err != nil {
			t.Fatalf("Go refuses %q: %v", body, err)
		}
		if err := json.Unmarshal(r.StructuredContent, &got); err != nil || got.LastBody.S == nil || *got.LastBody.S != *want.S {
			t.Errorf("string %q: parsed as %s; want %q as Go decodes it", s, r.StructuredContent, *want.S)
		}
		if !utf8Valid(r.StructuredContent) {
			t.Errorf("string %q: the output is not valid UTF-8: %q", s, r.StructuredContent)
		}
	}
}

func utf8Valid(b []byte) bool { return strings.ToValidUTF8(string(b), "\uFFFD") == string(b) }

// TestDepthLimit checks KADU_JSON_MAX_DEPTH (128 containers for the whole
// invocation, whose envelope takes 3): up to it the value comes back, past
// it the call is refused as -32602, cleanly, and the instance serves on.
func TestDepthLimit(t *testing.T) {
	b := kadutest.Wasm(t, fixture(t), &kadutest.Host{})
	nest := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	if got, want := toolText(t, echo(t, b, nest(125))), `{"value":`+nest(125)+`}`; got != want {
		t.Errorf("echo of 125 levels: %.80s…; want the value back", got)
	}
	out := echo(t, b, nest(126))
	if out.Status != 1 || out.Fault != "" || !strings.Contains(string(out.Output), "-32602") || !strings.Contains(string(out.Output), "nesting") {
		t.Errorf("echo of 126 levels: status %d fault %q %s; want status 1, -32602 about nesting", out.Status, out.Fault, out.Output)
	}
	if got := toolText(t, echo(t, b, `"after"`)); got != `{"value":"after"}` {
		t.Errorf("after the refusal: %s", got)
	}
}

// FuzzParse hands any bytes to the SDK's parser, as an API response body:
// valid JSON must come back as the same value (numbers with their text),
// anything else as the body string; the instance never faults.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`{"a":[1,2,{"b":null}]}`, `[`, `{"a":}`, `"\u12"`, `"\ud800`, `01`, `-`, `1.`, `1e`,
		`tru`, "\"\x01\"", `{"a" 1}`, `[1,]`, `{"a":1,}`, ` 7 `, strings.Repeat(`{"a":`, 200), "\xff"} {
		f.Add([]byte(s))
	}
	mux := http.NewServeMux()
	var body []byte
	mux.HandleFunc("GET /api/v1/usage", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(body) })
	b := kadutest.Wasm(f, fixture(f), &kadutest.Host{API: mux})
	f.Fuzz(func(t *testing.T, data []byte) {
		body = data
		out := b.Invoke(t, kadutest.Invocation{Op: "tools/call", Params: map[string]any{"name": "call",
			"arguments": map[string]any{"method": "GET", "path": "/api/v1/usage"}}})
		if out.Status != 0 || out.Fault != "" {
			t.Fatalf("body %q: status %d fault %q %.200s", data, out.Status, out.Fault, out.Output)
		}
		var r kadutest.ToolResult
		var sc struct {
			LastBody json.RawMessage `json:"last_body"`
		}
		if json.Unmarshal(out.Output, &r) != nil || json.Unmarshal(r.StructuredContent, &sc) != nil {
			t.Fatalf("body %q: result %.300s", data, out.Output)
		}
		got, want := decodeNumbers(t, sc.LastBody), any(nil)
		switch {
		case len(bytes.TrimSpace(data)) == 0:
			want = decodeNumbers(t, []byte("null")) // an empty body
			if len(data) > 0 {
				want = string(data) // not JSON: the body as a string
			}
		case json.Valid(data) && fixturetest.Depth(data) <= 128:
			want = decodeNumbers(t, data)
		default: // the body as a string, each invalid UTF-8 byte a U+FFFD as Go writes it
			js, _ := json.Marshal(string(data))
			want = decodeNumbers(t, js)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("body %q: last_body %s; want %#v", data, sc.LastBody, want)
		}
	})
}

func decodeNumbers(t *testing.T, b []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("decoding %q: %v", b, err)
	}
	return v
}

// buildC builds a bundle of src and the SDK's sources with clang directly
// and extra flags, for the variants build.sh does not make.
func buildC(t *testing.T, src string, extra ...string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("building a wasm bundle is skipped in -short mode")
	}
	out := filepath.Join(t.TempDir(), "bundle.wasm")
	args := []string{"--target=wasm32-wasi", "-mexec-model=reactor", "-std=c11", "-O2", "-I", ".",
		"-Wl,--stack-first", "-Wl,-z,stack-size=131072", "-Wl,--strip-debug", "-o", out, src}
	args = append(append(args, sdkFiles(t, "kadu*.c")...), extra...)
	if msg, err := exec.Command("clang", args...).CombinedOutput(); err != nil {
		t.Fatalf("clang: %v\n%s", err, msg)
	}
	return out
}

// sdkFiles returns the SDK's files that match pattern (kadu*.c: its
// sources), sorted bytewise as build.sh's glob is.
func sdkFiles(t *testing.T, pattern string) []string {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) == 0 {
		t.Fatalf("no SDK file matches %s (%v)", pattern, err)
	}
	return files
}

// TestOutOfMemory checks the SDK's answer to malloc failing at the
// bundle's memory limit: a fault (status 2) with a log line, never a trap
// or a half-written result, and the next call on a fresh instance works.
func TestOutOfMemory(t *testing.T) {
	h := &kadutest.Host{}
	b := kadutest.Wasm(t, buildC(t, "fixture/fixture.c", "-Wl,--max-memory=2097152"), h) // 2 MiB
	for _, tt := range []struct {
		name string
		inv  kadutest.Invocation
	}{
		{"a handler's allocation", kadutest.Invocation{Op: "tools/call", Params: map[string]any{"name": "big", "arguments": map[string]any{"bytes": 4 << 20}}}},
		{"the parser", kadutest.Invocation{Op: "tools/call", Params: map[string]any{"name": "echo",
			"arguments": map[string]any{"value": json.RawMessage("[" + strings.Repeat("0,", 300_000) + "0]")}}}},
	} {
		h.Reset()
		out := b.Invoke(t, tt.inv)
		if out.Status != 2 || !strings.Contains(out.Fault, "status 2") {
			t.Errorf("%s over 2 MiB: status %d fault %q; want status 2", tt.name, out.Status, out.Fault)
		}
		logged := false
		for _, l := range h.Logs() {
			logged = logged || l.Level == 3 && strings.Contains(l.Message, "out of memory")
		}
		if !logged {
			t.Errorf("%s over 2 MiB: logs %+v; want an error about memory", tt.name, h.Logs())
		}
		if got := toolText(t, echo(t, b, `"ok"`)); got != `{"value":"ok"}` {
			t.Errorf("after %s ran out of memory: %s", tt.name, got)
		}
	}
}

// TestReproducibleBuild builds the fixture from two copies of the SDK at
// different paths: operators pin bundles by sha256, so the bytes must not
// depend on where the source was checked out.
func TestReproducibleBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("building a wasm bundle is skipped in -short mode")
	}
	var sums [2][32]byte
	for i, dir := range []string{filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "a much longer path", "c")} {
		for _, f := range append(sdkFiles(t, "kadu*.[ch]"), "fixture/fixture.c", "fixture/build.sh", "tools/build.sh") {
			copyFile(t, f, filepath.Join(dir, f))
		}
		cmd := exec.Command("sh", "build.sh", "out.wasm")
		cmd.Dir = filepath.Join(dir, "fixture")
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build.sh in %s: %v\n%s", dir, err, msg)
		}
		b, err := os.ReadFile(filepath.Join(cmd.Dir, "out.wasm"))
		if err != nil {
			t.Fatal(err)
		}
		sums[i] = sha256.Sum256(b)
	}
	if sums[0] != sums[1] {
		t.Errorf("two checkouts built different bytes: %x and %x", sums[0], sums[1])
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRegistrationMistakes checks what a partner sees for a definition the
// host would refuse: one log line naming each mistake, and kadu_describe
// faulting so that the host refuses the bundle (and keeps the old one).
func TestRegistrationMistakes(t *testing.T) {
	for _, tt := range []struct {
		name  string
		flags []string
		want  []string
	}{
		{"at registration", nil, []string{
			"kadu_bundle_info: name Mistakes: want ^[a-z][a-z0-9_]{0,31}$",
			"kadu_bundle_info: version 1.0: want a semantic version",
			"kadu_add_route: GET /api/v1/tasks?status=failed: want",
			"tool bad name: name: want ^[a-zA-Z0-9_.-]{1,64}$",
			"tool no_access: access: want KADU_ROLE_* and KADU_SCOPE_*",
			"tool both: hints: read-only and destructive at once",
			"tool twice: registered twice",
			"template x://{a}{b}: uri_template: want an absolute URI with {name} variables",
			"template x://items/{id}: read: required",
			"kadu_describe: kadu_main registered definitions the host would refuse",
		}},
		{"in the manifest", []string{"-DSCHEMA"}, []string{"tool schema: input_schema is not JSON: expected a member name at byte 17"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := &kadutest.Host{}
			fatal := loadFails(t, buildC(t, "testdata/mistakes.c", tt.flags...), h)
			if !strings.Contains(fatal, "kadu_describe: status 2") {
				t.Errorf("loading: %s; want kadu_describe to fault", fatal)
			}
			var logs []string
			for _, l := range h.Logs() {
				if l.Level == 3 {
					logs = append(logs, l.Message)
				}
			}
			for _, want := range tt.want {
				found := false
				for _, l := range logs {
					found = found || strings.Contains(l, want)
				}
				if !found {
					t.Errorf("no error logged containing %q; logged:\n%s", want, strings.Join(logs, "\n"))
				}
			}
		})
	}
}

// loadFails loads the bundle at path with kadutest.Wasm, which must fail,
// and returns its failure message.
func loadFails(t *testing.T, path string, h *kadutest.Host) (msg string) {
	t.Helper()
	rec := &fatalRecorder{TB: t}
	defer func() {
		if r := recover(); r != rec {
			if r != nil {
				panic(r)
			}
			t.Fatalf("kadutest.Wasm loaded a bundle kadu_describe should refuse")
		}
		msg = rec.msg
	}()
	kadutest.Wasm(rec, path, h)
	return ""
}

// fatalRecorder is a testing.TB whose Fatalf records the message and
// unwinds, so that a test can look at a failure kadutest reports.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (r *fatalRecorder) Fatalf(format string, args ...any) {
	r.msg = fmt.Sprintf(format, args...)
	panic(r)
}

// TestTemplateVariables checks the SDK's matcher of resource templates:
// a variable is one or more characters other than / ? #, percent-decoded
// as Go's url.PathUnescape does; a URI that does not match is not found.
func TestTemplateVariables(t *testing.T) {
	b := kadutest.Wasm(t, fixture(t), &kadutest.Host{})
	for _, tt := range []struct{ uri, wantID string }{
		{"fixture://items/item1", "item1"},
		{"fixture://items/a%2Fb%20c%3F", "a/b c?"},
		{"fixture://items/%C3%A7%e2%9c%93", "ç✓"},
		{"fixture://items/a+b", "a+b"},
		{"fixture://items/", ""},
		{"fixture://items/a/b", ""},
		{"fixture://items/a?b", ""},
		{"fixture://items/bad%zz", ""},
		{"fixture://items/bad%2", ""},
		{"fixture://itemsX/a", ""},
	} {
		out := b.Invoke(t, kadutest.Invocation{Op: "resources/read", Params: map[string]any{"uri": tt.uri}})
		if tt.wantID == "" {
			if out.Status != 1 || !strings.Contains(string(out.Output), `"Resource not found"`) {
				t.Errorf("%s: status %d %s; want Resource not found", tt.uri, out.Status, out.Output)
			}
			continue
		}
		var got struct {
			Contents []struct{ URI, Text string }
		}
		want, _ := json.Marshal(map[string]string{"id": tt.wantID})
		if out.Status != 0 || json.Unmarshal(out.Output, &got) != nil || len(got.Contents) != 1 ||
			got.Contents[0].URI != tt.uri || got.Contents[0].Text != string(want) {
			t.Errorf("%s: status %d %s; want the item %s", tt.uri, out.Status, out.Output, want)
		}
	}
}
