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
	c := NewCompiler(func(ref string) error {
		return fmt.Errorf("$ref %s is outside the schema: tool schemas must be self-contained", ref)
	})
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

// NewCompiler returns a compiler with the options every schema in Kadu is
// compiled with, tool schemas here and the server's other schemas (task
// input schemas, confirmation forms) alike: JSON Schema 2020-12 unless the
// schema says otherwise, format assertions on, and no loading of anything
// outside the document. refused says why a reference outside it is
// refused; its error is what the compiler reports.
func NewCompiler(refused func(ref string) error) *jsonschema.Compiler {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.UseLoader(refusingLoader(refused))
	return c
}

// refusingLoader refuses every reference the compiler would load: a schema
// must be self-contained, so compiling never reads a file or the network.
type refusingLoader func(ref string) error

func (f refusingLoader) Load(ref string) (any, error) { return nil, f(ref) }
