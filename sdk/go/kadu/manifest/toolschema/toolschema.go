// Package toolschema compiles the inputSchema and outputSchema of a
// bundle's tools the one way the server and kadutest both do: JSON Schema
// 2020-12, format assertions on, "type": "object" at the root as MCP
// requires, and no reference outside the document (a bundle must not make
// the host read files or the network). Pass Compile as
// manifest.Options.CompileSchema.
//
// It owns compiling only; validating documents against a compiled schema
// is the caller's (the host reports failures its own way). A guest must
// not import it: it carries a schema compiler.
package toolschema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// url names the schema in the compiler's messages.
const url = "kadu:plugin/schema"

// Compile compiles a tool schema. The errors name what is wrong without
// the member; the caller says which schema it was.
func Compile(raw json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
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
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.UseLoader(noLoader{})
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("does not compile: %w", err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("does not compile as JSON Schema 2020-12: %w", err)
	}
	return s, nil
}

// CompileAny is Compile typed for manifest.Options.CompileSchema.
func CompileAny(raw json.RawMessage) (any, error) {
	s, err := Compile(raw)
	if err != nil {
		return nil, err
	}
	return s, nil
}

type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("$ref %s is outside the schema: tool schemas must be self-contained", url)
}
