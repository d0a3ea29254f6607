package plugin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

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
		if inst, err = jsonschema.UnmarshalJSON(bytes.NewReader(doc)); err != nil {
			return fmt.Errorf("(root): not valid JSON: %w", err)
		}
	}
	err := c.s.Validate(inst)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	var msgs []string
	for _, leaf := range leaves(ve) {
		ptr := pointer(leaf.InstanceLocation)
		detail := strings.TrimSpace(leaf.Error())
		if _, after, ok := strings.Cut(detail, "': "); ok && strings.HasPrefix(detail, "at '") {
			detail = after // the pointer already says where
		}
		msgs = append(msgs, ptr+": "+detail)
	}
	slices.Sort(msgs)
	return errors.New(strings.Join(slices.Compact(msgs), "; "))
}

// leaves returns the innermost errors: the ones that name a location and a
// reason, not "doesn't validate with …".
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

// pointer renders an instance location as an RFC 6901 JSON pointer; the
// root is "(root)" so that a message never starts with an empty location.
func pointer(tokens []string) string {
	if len(tokens) == 0 {
		return "(root)"
	}
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		t = strings.ReplaceAll(t, "~", "~0")
		b.WriteString(strings.ReplaceAll(t, "/", "~1"))
	}
	return b.String()
}
