package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/kobana/kadu/core/schema"
)

// compileSchema compiles a task's input_schema (JSON Schema 2020-12,
// format assertions on). The error names what is wrong, for a 422 on the
// task itself.
func compileSchema(raw json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := schema.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("input_schema is not JSON: %w", err)
	}
	s, err := schema.Compile("input_schema", doc)
	if err != nil {
		return nil, fmt.Errorf("input_schema: %w", err)
	}
	return s, nil
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
func validateAgainst(s *jsonschema.Schema, doc json.RawMessage, param, hint string) error {
	if len(doc) == 0 {
		doc = json.RawMessage("{}")
	}
	inst, err := schema.Parse(doc)
	if err != nil {
		return paramProblem(http.StatusUnprocessableEntity, "validation_error", param, param+" is not valid JSON.", "Send "+param+" as a JSON object.")
	}
	err = s.Validate(inst)
	if err == nil {
		return nil
	}
	fs, ok := schema.Failures(err)
	if !ok {
		return fmt.Errorf("validating input: %w", err)
	}
	slices.SortStableFunc(fs, func(a, b schema.Failure) int {
		return strings.Compare(strings.Join(a.Location, "."), strings.Join(b.Location, "."))
	})
	var v validation
	for _, f := range fs {
		at := strings.Join(append([]string{param}, f.Location...), ".")
		v.add(at, at+": "+f.Detail, hint)
	}
	return v.err()
}
