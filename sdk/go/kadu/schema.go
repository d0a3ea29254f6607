package kadu

import (
	"bytes"
	"encoding/json"
	"fmt"
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
// regexp.MustCompile, since schemas are fixed at init.
func ObjectSchema(props ...Property) json.RawMessage {
	var b bytes.Buffer
	b.WriteString(`{"type":"object","properties":{`)
	var required []string
	for i, p := range props {
		if !json.Valid([]byte(p.Schema)) {
			panic(fmt.Sprintf("kadu.ObjectSchema: property %q: schema is not valid JSON", p.Name))
		}
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(p.Name)
		b.Write(name)
		b.WriteByte(':')
		if err := json.Compact(&b, []byte(p.Schema)); err != nil {
			panic(fmt.Sprintf("kadu.ObjectSchema: property %q: %v", p.Name, err))
		}
		if p.Required {
			required = append(required, p.Name)
		}
	}
	b.WriteString(`}`)
	if len(required) > 0 {
		r, _ := json.Marshal(required)
		b.WriteString(`,"required":`)
		b.Write(r)
	}
	b.WriteString(`,"additionalProperties":false}`)
	return b.Bytes()
}
