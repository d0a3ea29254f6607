package confirm

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/kobana/kadu/core/mcp"
	"github.com/kobana/kadu/core/schema"
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

// schemaName names the schema in compile errors (core/schema).
const schemaName = "inputSchema"

// compileSchema compiles an inputSchema with the options the plugin host
// uses (core/schema); nil if it does not compile.
func compileSchema(raw json.RawMessage) *jsonschema.Schema {
	doc, err := schema.Parse(raw)
	if err != nil {
		return nil
	}
	s, err := schema.Compile(schemaName, doc)
	if err != nil {
		return nil
	}
	return s
}

// validate checks args against s. The error names each failing location
// as a JSON pointer, e.g. "/input_file_ids/0: does not match pattern …".
func validate(s *jsonschema.Schema, args json.RawMessage) error {
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	inst, err := schema.Parse(args)
	if err != nil {
		return fmt.Errorf("(root): not valid JSON: %w", err)
	}
	return schema.Validate(s, inst)
}
