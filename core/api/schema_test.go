package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
)

func TestValidateInput(t *testing.T) {
	schema, err := compileSchema(json.RawMessage(`{"type":"object","required":["period"],"additionalProperties":false,
		"properties":{"period":{"type":"string","pattern":"^[0-9]{4}-[0-9]{2}$"},"limit":{"type":"integer","minimum":1},"email":{"type":"string","format":"email"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		input      string
		wantParams []string
	}{
		{name: "valid", input: `{"period":"2026-11"}`},
		{name: "missing required", input: `{}`, wantParams: []string{"input"}},
		{name: "wrong type and pattern", input: `{"period":"nov","limit":0}`, wantParams: []string{"input.limit", "input.period"}},
		{name: "extra property", input: `{"period":"2026-11","x":1}`, wantParams: []string{"input"}},
		{name: "format asserted", input: `{"period":"2026-11","email":"not-an-email"}`, wantParams: []string{"input.email"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := validateInput(schema, json.RawMessage(tt.input))
			if tt.wantParams == nil {
				if err != nil {
					t.Fatalf("validateInput = %v", err)
				}
				return
			}
			var ae *Error
			if !errors.As(err, &ae) || ae.Status != http.StatusUnprocessableEntity {
				t.Fatalf("validateInput = %v, want 422", err)
			}
			var got []string
			for _, p := range ae.Problems {
				got = append(got, *p.Param)
				if p.Code != "validation_error" || p.Detail == "" || strings.Contains(p.Detail, "jsonschema validation failed") {
					t.Errorf("problem %+v: want a plain detail", p)
				}
			}
			if strings.Join(got, ",") != strings.Join(tt.wantParams, ",") {
				t.Errorf("params = %v, want %v (%+v)", got, tt.wantParams, ae.Problems)
			}
		})
	}
}

func TestCompileSchemaRefusesRemoteRefs(t *testing.T) {
	if _, err := compileSchema(json.RawMessage(`{"$ref":"https://example.com/s.json"}`)); err == nil {
		t.Fatal("a remote $ref must be refused")
	}
	if _, err := compileSchema(json.RawMessage(`{"type":"nope"}`)); err == nil {
		t.Fatal("an invalid schema must be refused")
	}
}
