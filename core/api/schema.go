package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// compileSchema compiles a task's input_schema (JSON Schema 2020-12,
// format assertions on). The error names what is wrong, for a 422 on the
// task itself.
func compileSchema(raw json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("input_schema is not JSON: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	// No remote references: a task's schema must be self-contained.
	c.UseLoader(noLoader{})
	if err := c.AddResource("kadu:input_schema", doc); err != nil {
		return nil, fmt.Errorf("input_schema: %w", err)
	}
	s, err := c.Compile("kadu:input_schema")
	if err != nil {
		return nil, fmt.Errorf("input_schema: %w", err)
	}
	return s, nil
}

type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("input_schema may not reference %s: schemas must be self-contained", url)
}

// validateInput checks input against schema and returns a 422 with one
// problem per failing location, param "input.<path>".
func validateInput(schema *jsonschema.Schema, input json.RawMessage) error {
	return validateAgainst(schema, input, "input",
		"Make input match the task's input_schema (kadu_tasks_get shows it, with examples).")
}

// validateAgainst checks doc (the value of body member param) against
// schema: a 422 with one problem per failing location, param
// "<param>.<path>", each with hint.
func validateAgainst(schema *jsonschema.Schema, doc json.RawMessage, param, hint string) error {
	if len(doc) == 0 {
		doc = json.RawMessage("{}")
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return paramProblem(http.StatusUnprocessableEntity, "validation_error", param, param+" is not valid JSON.", "Send "+param+" as a JSON object.")
	}
	err = schema.Validate(inst)
	var ve *jsonschema.ValidationError
	if err == nil {
		return nil
	}
	if !errors.As(err, &ve) {
		return fmt.Errorf("validating input: %w", err)
	}
	ls := leaves(ve)
	slices.SortStableFunc(ls, func(a, b *jsonschema.ValidationError) int {
		return strings.Compare(strings.Join(a.InstanceLocation, "."), strings.Join(b.InstanceLocation, "."))
	})
	var v validation
	for _, leaf := range ls {
		at := strings.Join(append([]string{param}, leaf.InstanceLocation...), ".")
		detail := strings.TrimSpace(leaf.Error())
		if _, after, ok := strings.Cut(detail, "': "); ok && strings.HasPrefix(detail, "at '") {
			detail = after // the param already says where
		}
		v.add(at, at+": "+detail, hint)
	}
	return v.err()
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
