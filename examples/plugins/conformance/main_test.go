package main

import (
	"encoding/base64"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/kobana/kadu/sdk/go/kadu"
	"github.com/kobana/kadu/sdk/go/kadu/kadutest"
)

// forEachEngine runs f on the bundle natively and as the WebAssembly
// module the server loads: both must answer alike.
func forEachEngine(t *testing.T, f func(t *testing.T, b *kadutest.Bundle)) {
	t.Helper()
	t.Run("native", func(t *testing.T) { f(t, kadutest.Native(t, &kadutest.Host{})) })
	t.Run("wasm", func(t *testing.T) { f(t, kadutest.Wasm(t, kadutest.BuildWasm(t, "."), &kadutest.Host{})) })
}

// client2026 is an era-2026 client that declared caps.
func client2026(caps ...string) *kadu.Client {
	c := &kadu.Client{Capabilities: map[string]json.RawMessage{}, ProtocolVersion: "2026-07-28"}
	for _, name := range caps {
		c.Capabilities[name] = json.RawMessage(`{}`)
	}
	return c
}

// invoke runs op and fails t unless the bundle answered status 0.
func invoke(t *testing.T, b *kadutest.Bundle, inv kadutest.Invocation) json.RawMessage {
	t.Helper()
	out := b.Invoke(t, inv)
	if out.Status != 0 || out.Fault != "" {
		t.Fatalf("%s %v: status %d, fault %q, output %s", inv.Op, inv.Params, out.Status, out.Fault, out.Output)
	}
	return out.Output
}

// TestManifestOffersTheSuiteFixtures checks that every name the suite's
// server scenarios call is there, that nothing needs a confirmation or an
// API route, and that tools that need the client say which capability.
func TestManifestOffersTheSuiteFixtures(t *testing.T) {
	b := kadutest.Native(t, &kadutest.Host{})
	m := b.Manifest()
	if m.Name != "conformance" || len(m.Routes) != 0 {
		t.Errorf("manifest name %q routes %v; want conformance and no routes", m.Name, m.Routes)
	}
	for _, name := range []string{
		"test_simple_text", "test_image_content", "test_audio_content", "test_embedded_resource",
		"test_multiple_content_types", "test_error_handling", "test_tool_with_logging", "test_tool_with_progress",
		"test_sampling", "test_elicitation", "test_elicitation_sep1034_defaults", "test_elicitation_sep1330_enums",
		"test_custom_headers", "test_input_required_result_elicitation", "test_input_required_result_sampling",
		"test_input_required_result_list_roots", "test_input_required_result_request_state",
		"test_input_required_result_multiple_inputs", "test_input_required_result_multi_round",
		"test_input_required_result_tampered_state", "test_input_required_result_capabilities",
	} {
		tool := m.Tool(name)
		if tool == nil {
			t.Errorf("tool %s is missing", name)
			continue
		}
		if a := tool.Annotations; a == nil || a.DestructiveHint == nil || *a.DestructiveHint || a.ReadOnlyHint == nil || !*a.ReadOnlyHint {
			t.Errorf("tool %s: annotations %+v; want read-only, not destructive (the host would ask to confirm it)", name, a)
		}
	}
	needs := map[string][]string{
		"test_sampling":                              {"sampling"},
		"test_input_required_result_list_roots":      {"roots"},
		"test_input_required_result_multiple_inputs": {"elicitation", "sampling", "roots"},
		"test_input_required_result_capabilities":    nil, // asks only for what the client declared
	}
	for name, want := range needs {
		if got := m.Tool(name).RequiresCapabilities; !slices.Equal(got, want) {
			t.Errorf("tool %s requires %v; want %v", name, got, want)
		}
	}
	var uris, promptNames []string
	for _, r := range m.Resources {
		uris = append(uris, r.URI)
	}
	for _, p := range m.Prompts {
		promptNames = append(promptNames, p.Name)
	}
	for _, want := range []string{"test://static-text", "test://static-binary", "test://watched-resource"} {
		if !slices.Contains(uris, want) {
			t.Errorf("resource %s is missing from %v", want, uris)
		}
	}
	if len(m.ResourceTemplates) != 1 || m.ResourceTemplates[0].URITemplate != templateURI {
		t.Errorf("templates = %+v; want %s", m.ResourceTemplates, templateURI)
	}
	for _, want := range []string{"test_simple_prompt", "test_prompt_with_arguments", "test_prompt_with_embedded_resource",
		"test_prompt_with_image", "test_input_required_result_prompt"} {
		if !slices.Contains(promptNames, want) {
			t.Errorf("prompt %s is missing from %v", want, promptNames)
		}
	}
	if !m.Completions {
		t.Error(`manifest says "completions": false; the suite completes prompt and template arguments`)
	}
}

// TestContentTools checks the content blocks the suite compares with its
// reference server.
func TestContentTools(t *testing.T) {
	tests := []struct {
		tool        string
		args        any
		wantContent string // the result's content, as JSON
		wantIsError bool
	}{
		{tool: "test_simple_text", wantContent: `[{"type":"text","text":"This is a simple text response for testing."}]`},
		{tool: "test_image_content", wantContent: `[{"type":"image","data":"` + pngBase64 + `","mimeType":"image/png"}]`},
		{tool: "test_audio_content", wantContent: `[{"type":"audio","data":"` + wavBase64 + `","mimeType":"audio/wav"}]`},
		{tool: "test_embedded_resource", wantContent: `[{"type":"resource","resource":{"uri":"test://embedded-resource","mimeType":"text/plain","text":"This is an embedded resource content."}}]`},
		{tool: "test_multiple_content_types", wantContent: `[{"type":"text","text":"Multiple content types test:"},` +
			`{"type":"image","data":"` + pngBase64 + `","mimeType":"image/png"},` +
			`{"type":"resource","resource":{"uri":"test://mixed-content-resource","mimeType":"application/json","text":"{\"test\":\"data\",\"value\":123}"}}]`},
		{tool: "test_error_handling", wantIsError: true, wantContent: `[{"type":"text","text":"This tool intentionally returns an error for testing"}]`},
		{tool: "test_tool_with_progress", wantContent: `[{"type":"text","text":"Tool with progress executed successfully"}]`},
		{tool: "test_custom_headers", args: map[string]any{"region": "us-west1"}, wantContent: `[{"type":"text","text":"Region: {\"region\":\"us-west1\"}"}]`},
		{tool: "json_schema_2020_12_tool", args: map[string]any{"name": "Ana", "email": "ana@example.com"},
			wantContent: `[{"type":"text","text":"JSON Schema 2020-12 tool called with: {\"email\":\"ana@example.com\",\"name\":\"Ana\"}"}]`},
	}
	forEachEngine(t, func(t *testing.T, b *kadutest.Bundle) {
		for _, tt := range tests {
			t.Run(tt.tool, func(t *testing.T) {
				args := tt.args
				if args == nil {
					args = map[string]any{}
				}
				out := invoke(t, b, kadutest.Invocation{Op: "tools/call", Params: map[string]any{"name": tt.tool, "arguments": args}})
				var got struct {
					Content json.RawMessage `json:"content"`
					IsError bool            `json:"isError"`
				}
				if err := json.Unmarshal(out, &got); err != nil {
					t.Fatalf("result %s: %v", out, err)
				}
				if string(got.Content) != tt.wantContent || got.IsError != tt.wantIsError {
					t.Errorf("content %s isError %v;\nwant %s isError %v", got.Content, got.IsError, tt.wantContent, tt.wantIsError)
				}
			})
		}
	})
}

// inputRequired is an input_required answer.
type inputRequired struct {
	ResultType    string                     `json:"resultType"`
	InputRequests map[string]json.RawMessage `json:"inputRequests"`
	State         json.RawMessage            `json:"state"`
}

// call runs a tools/call and returns the input_required answer (nil when
// the call completed) and the text of a completed result.
func call(t *testing.T, b *kadutest.Bundle, tool string, client *kadu.Client, state json.RawMessage, responses map[string]json.RawMessage) (*inputRequired, string) {
	t.Helper()
	out := invoke(t, b, kadutest.Invocation{Op: "tools/call", Params: map[string]any{"name": tool, "arguments": map[string]any{}},
		Client: client, State: state, InputResponses: responses})
	var ir inputRequired
	if err := json.Unmarshal(out, &ir); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	if ir.ResultType == "input_required" {
		return &ir, ""
	}
	var res kadutest.ToolResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	return nil, res.Text()
}

func accept(content string) json.RawMessage {
	return json.RawMessage(`{"action":"accept","content":` + content + `}`)
}

// TestInputRequiredRounds walks each tool that asks the client through its
// rounds, as the suite's SEP-2322 scenarios do: the first call asks, the
// retry with the answers and the state completes, and an answer that is
// missing or malformed is asked for again.
func TestInputRequiredRounds(t *testing.T) {
	sampled := json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"Paris"},"model":"m"}`)
	roots := json.RawMessage(`{"roots":[{"uri":"file:///home/ana","name":"home"}]}`)
	tests := []struct {
		name      string
		tool      string
		wantKeys  []string                   // asked for on the first call
		responses map[string]json.RawMessage // sent on the retry
		noState   bool                       // retry without the state
		wantText  string                     // contained in the completed result; "" expects another round
	}{
		{name: "elicitation greets", tool: "test_input_required_result_elicitation", wantKeys: []string{"user_name"},
			responses: map[string]json.RawMessage{"user_name": accept(`{"name":"Alice"}`)}, wantText: "Hello, Alice!"},
		{name: "extra answers are ignored", tool: "test_input_required_result_elicitation", wantKeys: []string{"user_name"},
			responses: map[string]json.RawMessage{"user_name": accept(`{"name":"Alice"}`), "unknown_extra_key": accept(`{"foo":"bar"}`)},
			noState:   true, wantText: "Hello, Alice!"},
		{name: "wrong key asks again", tool: "test_input_required_result_elicitation", wantKeys: []string{"user_name"},
			responses: map[string]json.RawMessage{"wrong_key": accept(`{"name":"Alice"}`)}},
		{name: "a number for an answer asks again", tool: "test_input_required_result_elicitation", wantKeys: []string{"user_name"},
			responses: map[string]json.RawMessage{"user_name": json.RawMessage(`12345`)}},
		{name: "sampling", tool: "test_input_required_result_sampling", wantKeys: []string{"capital_question"},
			responses: map[string]json.RawMessage{"capital_question": sampled}, wantText: "Paris"},
		{name: "roots", tool: "test_input_required_result_list_roots", wantKeys: []string{"client_roots"},
			responses: map[string]json.RawMessage{"client_roots": roots}, wantText: "file:///home/ana"},
		{name: "request state round-trips", tool: "test_input_required_result_request_state", wantKeys: []string{"confirm"},
			responses: map[string]json.RawMessage{"confirm": accept(`{"ok":true}`)}, wantText: "state-ok"},
		{name: "multiple inputs at once", tool: "test_input_required_result_multiple_inputs", wantKeys: []string{"client_roots", "greeting", "user_name"},
			responses: map[string]json.RawMessage{"user_name": accept(`{"name":"Alice"}`), "greeting": sampled, "client_roots": roots},
			wantText:  "All inputs received"},
		{name: "multiple inputs, one missing", tool: "test_input_required_result_multiple_inputs", wantKeys: []string{"client_roots", "greeting", "user_name"},
			responses: map[string]json.RawMessage{"user_name": accept(`{"name":"Alice"}`), "greeting": sampled}},
		{name: "sampling tool", tool: "test_sampling", wantKeys: []string{"sampling"},
			responses: map[string]json.RawMessage{"sampling": sampled}, wantText: "LLM response: Paris"},
		{name: "elicitation form with defaults", tool: "test_elicitation_sep1034_defaults", wantKeys: []string{"form"},
			responses: map[string]json.RawMessage{"form": accept(`{"name":"John Doe","age":30}`)}, wantText: `"age":30`},
	}
	forEachEngine(t, func(t *testing.T, b *kadutest.Bundle) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				client := client2026("elicitation", "sampling", "roots")
				ir, _ := call(t, b, tt.tool, client, nil, nil)
				if ir == nil {
					t.Fatal("the first call completed; want input_required")
				}
				if got := slices.Sorted(maps.Keys(ir.InputRequests)); !slices.Equal(got, tt.wantKeys) {
					t.Errorf("asked for %v; want %v", got, tt.wantKeys)
				}
				state := ir.State
				if tt.noState {
					state = nil
				}
				again, text := call(t, b, tt.tool, client, state, tt.responses)
				switch {
				case tt.wantText == "" && again == nil:
					t.Errorf("retry completed with %q; want the input asked for again", text)
				case tt.wantText != "" && again != nil:
					t.Errorf("retry asked again for %v; want a result containing %q", again.InputRequests, tt.wantText)
				case !strings.Contains(text, tt.wantText):
					t.Errorf("retry answered %q; want it to contain %q", text, tt.wantText)
				}
			})
		}
	})
}

// TestMultiRound checks that the state evolves between two rounds and that
// the second round's answer completes the call.
func TestMultiRound(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *kadutest.Bundle) {
		const tool = "test_input_required_result_multi_round"
		client := client2026("elicitation")
		r1, _ := call(t, b, tool, client, nil, nil)
		if r1 == nil || r1.InputRequests["step1"] == nil {
			t.Fatalf("round 1 = %+v; want step1", r1)
		}
		r2, _ := call(t, b, tool, client, r1.State, map[string]json.RawMessage{"step1": accept(`{"name":"Ana"}`)})
		if r2 == nil || r2.InputRequests["step2"] == nil || string(r2.State) == string(r1.State) {
			t.Fatalf("round 2 = %+v; want step2 with a new state (round 1's was %s)", r2, r1.State)
		}
		// Round 2's state without its answer asks for step 2 again.
		if again, text := call(t, b, tool, client, r2.State, nil); again == nil || again.InputRequests["step2"] == nil {
			t.Errorf("round 2 retried without an answer = %+v %q; want step2 again", again, text)
		}
		if r3, text := call(t, b, tool, client, r2.State, map[string]json.RawMessage{"step2": accept(`{"color":"blue"}`)}); r3 != nil || !strings.Contains(text, "blue") {
			t.Errorf("round 3 = %+v %q; want a result with the colour", r3, text)
		}
	})
}

// TestCapabilitiesToolAsksOnlyWhatTheClientDeclared is the suite's
// capability check: a client that declared sampling alone is never asked
// to elicit.
func TestCapabilitiesToolAsksOnlyWhatTheClientDeclared(t *testing.T) {
	tests := []struct {
		name     string
		client   *kadu.Client
		wantKeys []string // nil: the call completes
	}{
		{name: "sampling only", client: client2026("sampling"), wantKeys: []string{"greeting"}},
		{name: "elicitation and roots", client: client2026("elicitation", "roots"), wantKeys: []string{"client_roots", "user_name"}},
		{name: "nothing declared", client: client2026()},
		{name: "era 2025, capabilities unknown", client: &kadu.Client{ProtocolVersion: "2025-06-18"}},
	}
	forEachEngine(t, func(t *testing.T, b *kadutest.Bundle) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				ir, text := call(t, b, "test_input_required_result_capabilities", tt.client, nil, nil)
				var got []string
				if ir != nil {
					got = slices.Sorted(maps.Keys(ir.InputRequests))
				}
				if !slices.Equal(got, tt.wantKeys) || (ir == nil && text == "") {
					t.Errorf("asked for %v (text %q); want %v", got, text, tt.wantKeys)
				}
			})
		}
	})
}

// TestResources reads each resource and the template, and a URI nobody
// serves.
func TestResources(t *testing.T) {
	png, _ := base64.StdEncoding.DecodeString(pngBase64)
	tests := []struct {
		uri        string
		wantStatus int32
		want       string // the output JSON
	}{
		{uri: "test://static-text", want: `{"contents":[{"uri":"test://static-text","mimeType":"text/plain","text":"This is the content of the static text resource."}]}`},
		{uri: "test://static-binary", want: `{"contents":[{"uri":"test://static-binary","mimeType":"image/png","blob":"` + base64.StdEncoding.EncodeToString(png) + `"}]}`},
		{uri: "test://template/123/data", want: `{"contents":[{"uri":"test://template/123/data","mimeType":"application/json","text":"{\"data\":\"Data for ID: 123\",\"id\":\"123\",\"templateTest\":true}"}]}`},
		{uri: "test://nonexistent-resource-for-sep-2164", wantStatus: 1,
			want: `{"code":-32602,"message":"Resource not found","data":{"uri":"test://nonexistent-resource-for-sep-2164"}}`},
	}
	forEachEngine(t, func(t *testing.T, b *kadutest.Bundle) {
		for _, tt := range tests {
			t.Run(tt.uri, func(t *testing.T) {
				out := b.Invoke(t, kadutest.Invocation{Op: "resources/read", Params: map[string]string{"uri": tt.uri}})
				if out.Status != tt.wantStatus || string(out.Output) != tt.want {
					t.Errorf("= %d %s;\nwant %d %s", out.Status, out.Output, tt.wantStatus, tt.want)
				}
			})
		}
	})
}

// TestPrompts renders each prompt, and walks the prompt that asks for
// input first.
func TestPrompts(t *testing.T) {
	tests := []struct {
		prompt string
		args   map[string]string
		want   string // contained in the output JSON
	}{
		{prompt: "test_simple_prompt", want: `"text":"This is a simple prompt for testing."`},
		{prompt: "test_prompt_with_arguments", args: map[string]string{"arg1": "a", "arg2": "b"}, want: `arg1='a', arg2='b'`},
		{prompt: "test_prompt_with_embedded_resource", args: map[string]string{"resourceUri": "test://static-text"},
			want: `{"role":"user","content":{"type":"resource","resource":{"uri":"test://static-text","mimeType":"text/plain","text":"Embedded resource content for testing."}}}`},
		{prompt: "test_prompt_with_image", want: `{"role":"user","content":{"type":"image","data":"` + pngBase64 + `","mimeType":"image/png"}}`},
	}
	forEachEngine(t, func(t *testing.T, b *kadutest.Bundle) {
		for _, tt := range tests {
			t.Run(tt.prompt, func(t *testing.T) {
				args := tt.args
				if args == nil {
					args = map[string]string{}
				}
				out := invoke(t, b, kadutest.Invocation{Op: "prompts/get", Params: map[string]any{"name": tt.prompt, "arguments": args}})
				if !strings.Contains(string(out), tt.want) {
					t.Errorf("= %s; want it to contain %s", out, tt.want)
				}
			})
		}
		t.Run("input required first", func(t *testing.T) {
			get := kadutest.Invocation{Op: "prompts/get", Params: map[string]any{"name": "test_input_required_result_prompt", "arguments": map[string]string{}}}
			var ir inputRequired
			if err := json.Unmarshal(invoke(t, b, get), &ir); err != nil || ir.ResultType != "input_required" || ir.InputRequests["context"] == nil {
				t.Fatalf("first get = %+v, %v; want input_required for context", ir, err)
			}
			get.State, get.InputResponses = ir.State, map[string]json.RawMessage{"context": accept(`{"context":"March statements"}`)}
			if out := invoke(t, b, get); !strings.Contains(string(out), "March statements") || strings.Contains(string(out), "input_required") {
				t.Errorf("retry = %s; want the prompt built from the context", out)
			}
		})
	})
}

// TestCompletion suggests values that start with what was typed.
func TestCompletion(t *testing.T) {
	tests := []struct {
		name string
		ref  map[string]string
		arg  string
		typ  string
		want string
	}{
		{name: "prompt argument", ref: map[string]string{"type": "ref/prompt", "name": "test_prompt_with_arguments"}, arg: "arg1", typ: "par",
			want: `{"completion":{"values":["paris","park","party"],"total":3}}`},
		{name: "template variable", ref: map[string]string{"type": "ref/resource", "uri": templateURI}, arg: "id", typ: "1",
			want: `{"completion":{"values":["1","123"],"total":2}}`},
		{name: "nothing matches", ref: map[string]string{"type": "ref/prompt", "name": "test_prompt_with_arguments"}, arg: "arg2", typ: "z",
			want: `{"completion":{"values":[]}}`},
	}
	forEachEngine(t, func(t *testing.T, b *kadutest.Bundle) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				out := invoke(t, b, kadutest.Invocation{Op: "completion/complete", Params: map[string]any{
					"ref": tt.ref, "argument": map[string]string{"name": tt.arg, "value": tt.typ}}})
				if string(out) != tt.want {
					t.Errorf("= %s; want %s", out, tt.want)
				}
			})
		}
	})
}

// BenchmarkFixtureCall measures one tools/call into the fixture under
// wazero, as the host makes it: a plain answer, and the first round of a
// tool that asks the client for input (building its request and state).
//
//	go test -run '^$' -bench FixtureCall ./examples/plugins/conformance
func BenchmarkFixtureCall(b *testing.B) {
	bundle := kadutest.Wasm(b, kadutest.BuildWasm(b, "."), &kadutest.Host{})
	client := client2026("elicitation", "sampling", "roots")
	for _, tool := range []string{"test_simple_text", "test_input_required_result_multiple_inputs"} {
		inv := kadutest.Invocation{Op: "tools/call", Params: map[string]any{"name": tool, "arguments": map[string]any{}}, Client: client}
		b.Run(tool, func(b *testing.B) {
			for b.Loop() {
				if out := bundle.Invoke(b, inv); out.Status != 0 || out.Fault != "" {
					b.Fatalf("status %d, fault %q", out.Status, out.Fault)
				}
			}
		})
	}
}
