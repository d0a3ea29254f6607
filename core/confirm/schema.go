package confirm

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/kobana/kadu/core/mcp"
)

// checkArguments validates call's arguments against the tool's inputSchema
// before anyone is asked to confirm: a person should never approve a call
// that cannot run. Next validates again when the call runs (the schema may
// have changed meanwhile). It returns the isError result to answer, or nil.
func (c *Confirmer) checkArguments(call *mcp.ToolCall) *mcp.ToolResult {
	s := c.schemas.get(call.Tool.InputSchema)
	if s == nil {
		return nil // no usable schema: Next refuses the call if it must
	}
	err := validate(s, call.Arguments)
	if err == nil {
		return nil
	}
	return &mcp.ToolResult{IsError: true, Content: []mcp.Content{mcp.Text(fmt.Sprintf(
		"Invalid arguments for %s: %v. Fix them to match the tool's inputSchema and call again; nothing was done.",
		call.Tool.Name, err))}}
}

// maxSchemas bounds the cache; past it, it starts over. Tools are few, and
// a hot swap changes a schema only now and then.
const maxSchemas = 512

// schemaCache compiles each distinct inputSchema once. Safe for
// concurrent use.
type schemaCache struct {
	mu sync.Mutex
	m  map[[32]byte]*jsonschema.Schema // guarded by mu; nil value: does not compile
}

func (sc *schemaCache) get(raw json.RawMessage) *jsonschema.Schema {
	if len(raw) == 0 {
		return nil
	}
	key := sha256.Sum256(raw)
	sc.mu.Lock()
	s, ok := sc.m[key]
	sc.mu.Unlock()
	if ok {
		return s
	}
	s = compileSchema(raw)
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.m == nil || len(sc.m) >= maxSchemas {
		sc.m = map[[32]byte]*jsonschema.Schema{}
	}
	sc.m[key] = s
	return s
}

const schemaURL = "kadu:confirm/inputSchema"

// compileSchema compiles an inputSchema as JSON Schema 2020-12 with format
// assertions, as the plugin host does; nil if it does not compile.
func compileSchema(raw json.RawMessage) *jsonschema.Schema {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.UseLoader(noLoader{})
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil
	}
	s, err := c.Compile(schemaURL)
	if err != nil {
		return nil
	}
	return s
}

// noLoader refuses every $ref outside the schema: validating must never
// read a file or the network.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("$ref %s is outside the schema", url)
}

// validate checks args against s. The error names each failing location
// as a JSON pointer, e.g. "/input_file_ids/0: does not match pattern …".
func validate(s *jsonschema.Schema, args json.RawMessage) error {
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		return fmt.Errorf("(root): not valid JSON: %w", err)
	}
	err = s.Validate(inst)
	var ve *jsonschema.ValidationError
	if err == nil || !errors.As(err, &ve) {
		return err
	}
	var msgs []string
	for _, leaf := range leaves(ve) {
		detail := strings.TrimSpace(leaf.Error())
		if _, after, ok := strings.Cut(detail, "': "); ok && strings.HasPrefix(detail, "at '") {
			detail = after // the pointer already says where
		}
		msgs = append(msgs, pointer(leaf.InstanceLocation)+": "+detail)
	}
	slices.Sort(msgs)
	return errors.New(strings.Join(slices.Compact(msgs), "; "))
}

// leaves returns the innermost errors: those that name a location and a
// reason.
func leaves(ve *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(ve.Causes) == 0 {
		return []*jsonschema.ValidationError{ve}
	}
	var out []*jsonschema.ValidationError
	for _, c := range ve.Causes {
		out = append(out, leaves(c)...)
	}
	return out
}

// pointer renders an instance location as an RFC 6901 JSON pointer.
func pointer(tokens []string) string {
	if len(tokens) == 0 {
		return "(root)"
	}
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1"))
	}
	return b.String()
}
