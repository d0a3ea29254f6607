package plugin

import (
	"encoding/json"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/kobana/kadu/core/schema"
	"github.com/kobana/kadu/sdk/go/kadu/manifest/toolschema"
)

// compiledSchema is a tool's inputSchema or outputSchema, compiled once at
// load. Safe for concurrent use.
type compiledSchema struct {
	s      *jsonschema.Schema
	passed passedSet // documents that passed, see check
}

// compileToolSchema compiles a tool schema as every checker of a manifest
// does (sdk/go/kadu/manifest/toolschema).
func compileToolSchema(raw json.RawMessage) (*compiledSchema, error) {
	s, err := toolschema.Compile(raw)
	if err != nil {
		return nil, err
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
