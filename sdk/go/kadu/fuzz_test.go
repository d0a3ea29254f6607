package kadu

import (
	"encoding/json"
	"testing"

	"github.com/kobana/kadu/sdk/go/kadu/internal/wire"
)

// FuzzHandle checks that no invocation, however malformed, makes a
// well-behaved bundle fault: the answer is always status 0 or 1 with JSON
// output, and never a panic.
func FuzzHandle(f *testing.F) {
	f.Add(`{"op":"tools/call","params":{"name":"echo","arguments":{"a":1}}}`)
	f.Add(`{"op":"tools/call","params":{"name":"echo","arguments":null},"state":{"x":1},"input_responses":{"k":{}}}`)
	f.Add(`{"op":"resources/read","params":{"uri":"x://t/%41"}}`)
	f.Add(`{"op":"prompts/get","params":{"name":"p","arguments":{"who":""}}}`)
	f.Add(`{"op":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"who","value":"a"},"context":null}}`)
	f.Add(`{"op":"tools/call","params":{"name":"echo","arguments":"x"},"client":{"capabilities":null}}`)
	s := mustServer(f,
		Tool[map[string]any, map[string]any]{Name: "echo", InputSchema: noInput, Annotations: reads, Access: anyone,
			Handler: func(_ *Call, in map[string]any) (map[string]any, error) { return in, nil }},
		ResourceTemplate{URITemplate: "x://t/{id}", Name: "t", Access: anyone,
			Read: func(_ *Call, uri string, vars map[string]string) ([]ResourceContents, error) {
				return []ResourceContents{{Text: vars["id"]}}, nil
			}},
		Prompt{Name: "p", Access: anyone, Arguments: []PromptArgument{{Name: "who", Required: true}},
			Get: func(_ *Call, args map[string]string) (*PromptResult, error) {
				return &PromptResult{Messages: []PromptMessage{UserText("hi " + args["who"])}}, nil
			}},
		Completion{Complete: func(_ *Call, req CompleteRequest) (CompleteResult, error) {
			return CompleteResult{Values: []string{req.Argument.Value}}, nil
		}},
	)
	f.Fuzz(func(t *testing.T, in string) {
		h := &fakeHost{input: []byte(in)}
		status := s.Handle(h, int32(len(in)))
		if (status != 0 && status != 1) || !json.Valid(h.output) {
			t.Fatalf("Handle(%q) = %d %q (logs %q)", in, status, h.output, h.logs)
		}
	})
}

// FuzzAppendString checks the hand-written JSON string encoder of the fast
// path against encoding/json (HTML escaping off): same bytes for any input.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "q\"\\\n\r\t\b\f\x00\x1f", "\u2028\u2029", "é\xff\xfe", "<a&b>", `{"a":1}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := wire.AppendString(nil, []byte(s)); string(got) != string(want) {
			t.Fatalf("AppendString(%q) = %s; encoding/json says %s", s, got, want)
		}
	})
}
