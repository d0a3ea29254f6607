package kadu

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/kobana/kadu/sdk/go/kadu/internal/wire"
)

// Property is one property of an object schema built by ObjectSchema.
type Property struct {
	Name     string
	Schema   string // the property's JSON Schema, as JSON text
	Required bool
}

// ObjectSchema returns the JSON Schema of an object with props, in order,
// and no other property ("additionalProperties": false): the usual
// inputSchema of a tool. It panics if a Schema is not valid JSON, like
// regexp.MustCompile, since schemas are fixed at init. It writes the
// bytes itself: it runs inside _initialize, on every instance.
func ObjectSchema(props ...Property) json.RawMessage {
	b := []byte(`{"type":"object","properties":{`)
	var required [][]byte
	for i, p := range props {
		if !wire.Valid([]byte(p.Schema)) {
			panic(fmt.Sprintf("kadu.ObjectSchema: property %q: schema is not valid JSON", p.Name))
		}
		if i > 0 {
			b = append(b, ',')
		}
		name := wire.AppendString(nil, []byte(p.Name))
		b = append(b, name...)
		b = append(b, ':')
		b = wire.Compact(b, wire.TrimSpace([]byte(p.Schema)))
		if p.Required {
			required = append(required, name)
		}
	}
	b = append(b, '}')
	if len(required) > 0 {
		b = append(b, `,"required":[`...)
		b = append(b, bytes.Join(required, []byte(","))...)
		b = append(b, ']')
	}
	return append(b, `,"additionalProperties":false}`...)
}
