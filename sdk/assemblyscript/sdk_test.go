package assemblyscriptsdk_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tetratelabs/wazero"

	"github.com/kobana/kadu/sdk/go/kadu/kadutest"
	"github.com/kobana/kadu/sdk/internal/fixturetest"
)

// fixture builds fixture/ with its build.sh (npm ci on first use, then
// asc) and returns the module's path.
func fixture(t testing.TB) string {
	t.Helper()
	return kadutest.BuildScript(t, "fixture")
}

func TestFixture(t *testing.T) { fixturetest.Run(t, fixture(t)) }

func FuzzEcho(f *testing.F) { fixturetest.FuzzEcho(f, fixture(f)) }

// TestModuleShape checks what AssemblyScript would get wrong by default:
// asc imports env.abort, env.trace and env.seed, which the host refuses,
// and runs top-level code from a start section instead of _initialize.
func TestModuleShape(t *testing.T) {
	code, err := os.ReadFile(fixture(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	m, err := rt.CompileModule(ctx, code)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range m.ImportedFunctions() {
		if mod, name, _ := f.Import(); mod != "kadu" && mod != "wasi_snapshot_preview1" {
			t.Errorf("imports %s.%s; only kadu and wasi_snapshot_preview1 are provided", mod, name)
		}
	}
	var exports []string
	for name := range m.ExportedFunctions() {
		exports = append(exports, name)
	}
	slices.Sort(exports)
	if want := []string{"_initialize", "kadu_abi_v1", "kadu_describe", "kadu_handle"}; !slices.Equal(exports, want) {
		t.Errorf("exported functions %v; want %v", exports, want)
	}
	if _, ok := m.ExportedMemories()["memory"]; !ok {
		t.Error("no exported memory")
	}
}

// TestFaultIsLogged checks the abort handler: a thrown Error is logged at
// level error with its message and where, then traps.
func TestFaultIsLogged(t *testing.T) {
	h := &kadutest.Host{}
	b := kadutest.Wasm(t, fixture(t), h)
	out := b.Invoke(t, kadutest.Invocation{Op: "tools/call", Params: map[string]any{"name": "fail",
		"arguments": map[string]any{"tier": "fault", "message": "invariant broken: ação"}}})
	if !strings.HasPrefix(out.Fault, "trap") {
		t.Errorf("fault tier: status %d fault %q; want a trap", out.Status, out.Fault)
	}
	if !hasLog(h, 3, "abort: invariant broken: ação (assembly/index.ts:") {
		t.Errorf("logs %+v; want the message and its place at level 3", h.Logs())
	}
}

// TestOutputCapIsLogged checks that an output over the cap is a fault
// the operator can read about, not a silent success.
func TestOutputCapIsLogged(t *testing.T) {
	h := &kadutest.Host{OutputCap: 1024}
	b := kadutest.Wasm(t, fixture(t), h)
	out := b.Invoke(t, kadutest.Invocation{Op: "tools/call", Params: map[string]any{"name": "big", "arguments": map[string]any{"bytes": 5000}}})
	if out.Fault == "" || out.Status != 2 {
		t.Errorf("big 5000 under a cap of 1024: status %d fault %q; want status 2", out.Status, out.Fault)
	}
	if !hasLog(h, 3, "over this bundle's output cap") {
		t.Errorf("logs %+v; want the output cap named at level 3", h.Logs())
	}
}

func hasLog(h *kadutest.Host, level int32, part string) bool {
	for _, l := range h.Logs() {
		if l.Level == level && strings.Contains(l.Message, part) {
			return true
		}
	}
	return false
}

// TestTemplateVariables checks that a template's variables reach the
// handler percent-decoded, and that a URI the template cannot decode is
// not found.
func TestTemplateVariables(t *testing.T) {
	b := kadutest.Wasm(t, fixture(t), &kadutest.Host{})
	for _, tt := range []struct {
		uri        string
		wantStatus int32
		want       string // the content's text, or the error's message
	}{
		{"fixture://items/a%20b%2Fc", 0, `{"id":"a b/c"}`},
		{"fixture://items/%C3%A7%F0%9F%98%80", 0, `{"id":"ç😀"}`},
		{"fixture://items/100%", 1, "Resource not found"},
		{"fixture://items/a/b", 1, "Resource not found"},
		{"fixture://items/", 1, "Resource not found"},
	} {
		out := b.Invoke(t, kadutest.Invocation{Op: "resources/read", Params: map[string]any{"uri": tt.uri}})
		var got struct {
			Contents []struct{ Text string } `json:"contents"`
			Message  string                  `json:"message"`
		}
		if err := json.Unmarshal(out.Output, &got); err != nil || out.Status != tt.wantStatus {
			t.Errorf("read %s: status %d %s; want status %d", tt.uri, out.Status, out.Output, tt.wantStatus)
			continue
		}
		text := got.Message
		if len(got.Contents) == 1 {
			text = got.Contents[0].Text
		}
		if text != tt.want {
			t.Errorf("read %s: %q; want %q", tt.uri, text, tt.want)
		}
	}
}

// TestPromptArguments checks the SDK's checks before a prompt handler
// runs: required arguments present and not blank, all strings.
func TestPromptArguments(t *testing.T) {
	b := kadutest.Wasm(t, fixture(t), &kadutest.Host{})
	for _, args := range []any{map[string]any{}, map[string]any{"name": "  "}, map[string]any{"name": 7}} {
		out := b.Invoke(t, kadutest.Invocation{Op: "prompts/get", Params: map[string]any{"name": "greet", "arguments": args}})
		if out.Status != 1 || !strings.Contains(string(out.Output), "-32602") {
			t.Errorf("greet with %v: status %d %s; want -32602", args, out.Status, out.Output)
		}
	}
}

// FuzzAPIBody sends any bytes as an API response body through the
// fixture's call tool, which parses it with Json.parse: valid JSON must
// come back as the same value (numbers with the same text), anything
// else as null, and nothing may fault.
func FuzzAPIBody(f *testing.F) {
	for _, seed := range []string{
		`{"id":"tsk_1","n":[1,-2.5e+3,12345678901234567890123],"ok":true,"none":null}`, `"\ud83d\ude00 \u00e7"`,
		`{"a":}`, `[1,]`, `01`, `1.`, `-`, `.5`, `1e`, `"\x"`, "\"\x01\"", `tru`, `{"a" 1}`, "\xff", "\xef\xbb\xbf{}",
		`"\ud800"`, ` [ ] `, `{"a":1}{}`, strings.Repeat("[", 129) + strings.Repeat("]", 129),
	} {
		f.Add([]byte(seed))
	}
	var body []byte
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/usage", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(body) })
	b := kadutest.Wasm(f, fixture(f), &kadutest.Host{API: mux})
	f.Fuzz(func(t *testing.T, data []byte) {
		body = data
		r := b.CallTool(t, "call", map[string]any{"method": "GET", "path": "/api/v1/usage"})
		var got struct {
			LastBody json.RawMessage `json:"last_body"`
		}
		if r.IsError || json.Unmarshal(r.StructuredContent, &got) != nil {
			t.Fatalf("body %q: %s %q", data, r.StructuredContent, r.Text())
		}
		valid := json.Valid(data) && utf8.Valid(data)
		switch {
		case !utf8.Valid(data):
			// Decoded with U+FFFD first: the parser saw other bytes.
		case valid && fixturetest.Depth(data) <= 120:
			if want, have := canonical(t, data), canonical(t, got.LastBody); have != want {
				t.Fatalf("body %q came back as %s", data, got.LastBody)
			}
		case !json.Valid(data) && len(bytes.TrimSpace(data)) > 0 && string(got.LastBody) != "null":
			t.Fatalf("invalid body %q parsed as %s", data, got.LastBody)
		}
	})
}

// canonical is js decoded (numbers kept as text) and encoded again.
func canonical(t *testing.T, js []byte) string {
	d := json.NewDecoder(bytes.NewReader(js))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("decoding %q: %v", js, err)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
