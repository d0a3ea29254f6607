package plugin

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/kobana/kadu/core/schema"
)

// compiledSchema is a tool's inputSchema or outputSchema, compiled once at
// load. Safe for concurrent use.
type compiledSchema struct {
	s      *jsonschema.Schema
	passed passedSet // documents that passed, see check
}

// schemaName names a tool schema in compile errors (core/schema).
const schemaName = "tool_schema"

// compileToolSchema compiles a tool schema with the host's options
// (core/schema: JSON Schema 2020-12, format assertions, no reference
// outside the document, so a bundle cannot make the host read files or the
// network), and requires "type": "object" at the root, as MCP does.
func compileToolSchema(raw json.RawMessage) (*compiledSchema, error) {
	doc, err := schema.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil, errors.New(`want a JSON Schema object such as {"type":"object"}`)
	}
	if t, _ := obj["type"].(string); t != "object" {
		return nil, errors.New(`want "type": "object" at the root`)
	}
	s, err := schema.Compile(schemaName, doc)
	if err != nil {
		return nil, fmt.Errorf("does not compile as JSON Schema 2020-12: %w", err)
	}
	return &compiledSchema{s: s}, nil
}

// validate checks a JSON value against the schema. The error lists each
// failing location as a JSON pointer, e.g. "/text: got number, want string".
func (c *compiledSchema) validate(doc json.RawMessage) error {
	inst, ok := decodeValue(doc)
	if !ok {
		// Not one JSON value: the library's decoder says what is wrong.
		var err error
		if inst, err = schema.Parse(doc); err != nil {
			return fmt.Errorf("(root): not valid JSON: %w", err)
		}
	}
	return schema.Validate(c.s, inst)
}
