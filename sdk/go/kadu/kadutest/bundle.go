package kadutest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/kobana/kadu/sdk/go/kadu"
)

// Bundle is a loaded bundle: its manifest and a way to invoke it. It is
// not safe for concurrent use: like an instance, it runs one invocation at
// a time.
type Bundle struct {
	host     *Host
	eng      engine
	raw      json.RawMessage
	manifest *Manifest
}

// engine runs one export call: natively or under wazero.
type engine interface {
	call(s *session) (status int32, trapped error)
}

// load calls kadu_describe and checks the manifest.
func (b *Bundle) load(t testing.TB) {
	t.Helper()
	s := &session{h: b.host, phase: phaseDescribe, input: []byte("{}")}
	status, trapped := b.eng.call(s)
	out := s.outcome(status, trapped)
	if out.Fault != "" || out.Status != 0 {
		t.Fatalf("kadutest: kadu_describe: status %d, fault %q, output %s; logs: %v", out.Status, out.Fault, out.Output, b.host.Logs())
	}
	m, err := ParseManifest(out.Output)
	if err != nil {
		t.Fatalf("kadutest: %v", err)
	}
	if err := CheckManifest(m); err != nil {
		for _, e := range unjoin(err) {
			t.Errorf("kadutest: manifest: %v", e)
		}
	}
	b.raw, b.manifest = out.Output, m
}

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// Manifest returns the bundle's manifest.
func (b *Bundle) Manifest() *Manifest { return b.manifest }

// ManifestJSON returns the manifest as kadu_describe wrote it.
func (b *Bundle) ManifestJSON() json.RawMessage { return b.raw }

// Invocation is the input of kadu_handle (sdk/ABI.md §7).
type Invocation struct {
	Op             string                     `json:"op"`
	Params         any                        `json:"params"`
	InputResponses map[string]json.RawMessage `json:"input_responses,omitempty"`
	State          json.RawMessage            `json:"state,omitempty"`
	// Client is the client; nil is DefaultClient.
	Client *kadu.Client `json:"client"`
}

// DefaultClient is an era-2026 client that declared elicitation.
var DefaultClient = kadu.Client{
	Capabilities:    map[string]json.RawMessage{"elicitation": json.RawMessage(`{}`)},
	ProtocolVersion: "2026-07-28",
}

// Invoke calls kadu_handle with inv and reports how it ended.
func (b *Bundle) Invoke(t testing.TB, inv Invocation) Outcome {
	t.Helper()
	if inv.Client == nil {
		c := DefaultClient
		inv.Client = &c
	}
	in, err := json.Marshal(inv)
	if err != nil {
		t.Fatalf("kadutest: encoding the invocation: %v", err)
	}
	s := &session{h: b.host, phase: phaseHandle, input: in, routes: b.host.allowedRoutes(b.manifest.Routes)}
	status, trapped := b.eng.call(s)
	return s.outcome(status, trapped)
}

// ToolResult is a tools/call result, or an input-required answer.
type ToolResult struct {
	Content           []Content       `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`

	// Set instead of the above on an input-required answer.
	ResultType    string                     `json:"resultType"`
	InputRequests map[string]json.RawMessage `json:"inputRequests"`
	State         json.RawMessage            `json:"state"`
}

// Content is a content block.
type Content struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// Text returns the text of the text content blocks, joined by newlines.
func (r *ToolResult) Text() string {
	var parts []string
	for _, c := range r.Content {
		if c.Type == "text" {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// CallTool calls tool name with args (anything that encodes to a JSON
// object) and returns its result, failing t unless the call answered
// status 0 with a well-formed result.
func (b *Bundle) CallTool(t testing.TB, name string, args any) *ToolResult {
	t.Helper()
	out := b.Invoke(t, Invocation{Op: "tools/call", Params: map[string]any{"name": name, "arguments": args}})
	if out.Fault != "" || out.Status != 0 {
		t.Fatalf("kadutest: %s: status %d, fault %q, output %s; logs: %v", name, out.Status, out.Fault, out.Output, b.host.Logs())
	}
	var r ToolResult
	if err := json.Unmarshal(out.Output, &r); err != nil {
		t.Fatalf("kadutest: %s: result: %v", name, err)
	}
	if err := r.check(); err != nil {
		t.Fatalf("kadutest: %s: %v: %s", name, err, out.Output)
	}
	if err := b.checkOutput(name, &r); err != nil {
		t.Fatalf("kadutest: %s: %v", name, err)
	}
	return &r
}

// checkOutput applies the host's check of a successful result against the
// tool's outputSchema: a mismatch is a fault there.
func (b *Bundle) checkOutput(name string, r *ToolResult) error {
	tool := b.manifest.Tool(name)
	if tool == nil || len(tool.OutputSchema) == 0 || r.IsError || r.ResultType != "" {
		return nil
	}
	if len(r.StructuredContent) == 0 {
		return errors.New("the tool declares an outputSchema but its result has no structuredContent")
	}
	schema, err := CompileSchema(tool.OutputSchema)
	if err != nil {
		return fmt.Errorf("outputSchema: %w", err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(r.StructuredContent))
	if err != nil {
		return fmt.Errorf("structuredContent: %w", err)
	}
	if err := schema.Validate(doc); err != nil {
		return fmt.Errorf("structuredContent does not match the outputSchema (the host faults the call): %w", err)
	}
	return nil
}

// check applies the shape rules of sdk/ABI.md §8 and §9.
func (r *ToolResult) check() error {
	if r.ResultType != "" {
		if r.ResultType != "input_required" || len(r.InputRequests) == 0 {
			return errors.New(`resultType must be "input_required" with inputRequests`)
		}
		if len(r.State) > kadu.MaxStateBytes {
			return errors.New("state over 16 KiB")
		}
		return nil
	}
	if r.Content == nil {
		return errors.New("no content")
	}
	if len(r.StructuredContent) > 0 && r.StructuredContent[0] != '{' {
		return errors.New("structuredContent is not an object")
	}
	return nil
}
