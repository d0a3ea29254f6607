package plugin

import (
	"bytes"
	"encoding/json"
	"testing"
)

// marshalInvocation is the invocation JSON as encoding/json writes it,
// what the guests were built against.
func marshalInvocation(t testing.TB, inv *invocationJSON) ([]byte, error) {
	t.Helper()
	return json.Marshal(inv)
}

// htmlEscaped is b with <, >, & and U+2028/9 escaped, as encoding/json
// escapes them within raw values, which appendInvocation leaves as they
// are (the same JSON).
func htmlEscaped(b []byte) []byte {
	var out bytes.Buffer
	json.HTMLEscape(&out, b)
	return out.Bytes()
}

func TestInvocationMatchesEncodingJSON(t *testing.T) {
	for _, tc := range []struct {
		name string
		inv  invocationJSON
	}{
		{"tools/call", invocationJSON{Op: opToolsCall, Params: json.RawMessage(`{"name":"echo","arguments":{"text":"hi"}}`),
			Client: clientJSON{Capabilities: map[string]json.RawMessage{"sampling": json.RawMessage(`{}`),
				"elicitation": json.RawMessage(` { "form" : {} } `)}, ProtocolVersion: "2026-07-28"}}},
		{"no capabilities", invocationJSON{Op: opReadResource, Params: json.RawMessage(`{"uri":"kadu://x"}`)}},
		{"empty capabilities", invocationJSON{Op: opToolsCall, Params: json.RawMessage(`{}`),
			Client: clientJSON{Capabilities: map[string]json.RawMessage{}}}},
		{"retry", invocationJSON{Op: opPromptsGet, Params: json.RawMessage("{\n\"name\": \"p\"}"),
			InputResponses: map[string]json.RawMessage{"b": json.RawMessage(`{"action":"accept"}`), "a": json.RawMessage(`[1, 2]`)},
			State:          json.RawMessage(`{"step": 2}`), Client: clientJSON{ProtocolVersion: "2025-06-18"}}},
		{"escapes", invocationJSON{Op: "tools/call", Params: json.RawMessage(`"<a&b>"`),
			Client: clientJSON{Capabilities: map[string]json.RawMessage{"x\"y\n\u2028é\xff": nil}, ProtocolVersion: "v<1>"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, err := marshalInvocation(t, &tc.inv)
			if err != nil {
				t.Fatal(err)
			}
			got, err := appendInvocation(nil, &tc.inv)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(htmlEscaped(got), want) {
				t.Errorf("appendInvocation:\n got %s\nwant %s", got, want)
			}
		})
	}
}

func TestInvocationRefusesInvalidRawValues(t *testing.T) {
	for _, inv := range []invocationJSON{
		{Op: opToolsCall, Params: json.RawMessage(`{"name":`)},
		{Op: opToolsCall, Params: json.RawMessage(`{} {}`)},
		{Op: opToolsCall, Params: json.RawMessage(`{}`), State: json.RawMessage(`nul`)},
		{Op: opToolsCall, Params: json.RawMessage(`{}`), Client: clientJSON{Capabilities: map[string]json.RawMessage{"a": json.RawMessage(`{`)}}},
	} {
		if got, err := appendInvocation(nil, &inv); err == nil {
			t.Errorf("appendInvocation(%+v) = %s, want an error", inv, got)
		}
	}
}

// FuzzToolParams holds the hand-written tools/call params to what
// encoding/json writes, for any name and any arguments.
func FuzzToolParams(f *testing.F) {
	f.Add("echo", []byte(`{"text":"hi"}`))
	f.Add("a\"b<\u2028", []byte(` [1, {"x": null}] `))
	f.Add("\xff", []byte(`{`))
	f.Fuzz(func(t *testing.T, name string, args []byte) {
		if len(args) == 0 {
			return // CallTool passes {} for no arguments; encoding/json refuses an empty raw value
		}
		want, wantErr := json.Marshal(struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}{name, args})
		got, err := appendToolParams(nil, name, args)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("appendToolParams(%q, %q) error %v, encoding/json %v", name, args, err, wantErr)
		}
		if err == nil && !bytes.Equal(htmlEscaped(got), want) {
			t.Fatalf("appendToolParams(%q, %q):\n got %s\nwant %s", name, args, got, want)
		}
	})
}
