package agent

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestAnswerSchemaCheck(t *testing.T) {
	schema := &answerSchema{
		Type: "object",
		Properties: map[string]*propertySchema{
			"account": {Type: "string", Enum: []string{"corrente", "poupanca"}},
			"from":    {Type: "string", Format: "date"},
			"at":      {Type: "string", Format: "date-time"},
			"email":   {Type: "string", Format: "email"},
			"link":    {Type: "string", Format: "uri"},
			"note":    {Type: "string", MinLength: ptr(2), MaxLength: ptr(5)},
			"days":    {Type: "integer", Minimum: ptr(0.0), Maximum: ptr(90.0)},
			"rate":    {Type: "number"},
			"ok":      {Type: "boolean"},
		},
		Required: []string{"account"},
	}
	tests := []struct {
		answer  string
		wantErr string // "" = valid
	}{
		{answer: `{"account": "corrente"}`},
		{answer: `{"account": "poupanca", "from": "2026-03-01", "at": "2026-03-01T10:00:00-03:00", "email": "ana@kobana.com.br", "link": "https://kobana.com.br", "note": "abc", "days": 3, "rate": 2.5, "ok": false}`},
		{answer: `{"account": "corrente", "note": null}`},
		{answer: `[]`, wantErr: "JSON object"},
		{answer: `null`, wantErr: "JSON object"},
		{answer: `{}`, wantErr: "account: required"},
		{answer: `{"account": "cdb"}`, wantErr: "account: want one of corrente, poupanca"},
		{answer: `{"account": "corrente", "extra": 1}`, wantErr: "extra: not a property"},
		{answer: `{"account": "corrente", "from": "01/03/2026"}`, wantErr: "from: want a date"},
		{answer: `{"account": "corrente", "at": "2026-03-01"}`, wantErr: "at: want an RFC 3339"},
		{answer: `{"account": "corrente", "email": "Ana <ana@x.com>"}`, wantErr: "email: want an e-mail"},
		{answer: `{"account": "corrente", "link": "kobana.com.br"}`, wantErr: "link: want an absolute URI"},
		{answer: `{"account": "corrente", "note": "a"}`, wantErr: "note: at least 2"},
		{answer: `{"account": "corrente", "note": "abcdef"}`, wantErr: "note: at most 5"},
		{answer: `{"account": "corrente", "days": 1.5}`, wantErr: "days: want an integer"},
		{answer: `{"account": "corrente", "days": -1}`, wantErr: "days: at least 0"},
		{answer: `{"account": "corrente", "days": 91}`, wantErr: "days: at most 90"},
		{answer: `{"account": "corrente", "rate": "2"}`, wantErr: "rate: want a number"},
		{answer: `{"account": "corrente", "ok": "yes"}`, wantErr: "ok: want true or false"},
		{answer: `{"account": 5}`, wantErr: "account: want a string"},
	}
	for _, tt := range tests {
		t.Run(tt.answer, func(t *testing.T) {
			err := schema.check(json.RawMessage(tt.answer))
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("check(%s) = %v, want %q", tt.answer, err, tt.wantErr)
			}
		})
	}
}

func TestAnswerSchemaValidate(t *testing.T) {
	tests := []struct {
		schema   string
		wantPath string
	}{
		{`{"type": "array", "properties": {"a": {"type": "string"}}}`, "s.type"},
		{`{"type": "object", "properties": {}}`, "s.properties"},
		{`{"type": "object", "properties": {"a b": {"type": "string"}}}`, "s.properties.a b"},
		{`{"type": "object", "properties": {"a": null}}`, "s.properties.a"},
		{`{"type": "object", "properties": {"a": {"type": "number", "enum": ["x"]}}}`, "s.properties.a.enum"},
		{`{"type": "object", "properties": {"a": {"type": "number", "format": "date"}}}`, "s.properties.a.format"},
		{`{"type": "object", "properties": {"a": {"type": "string", "format": "cpf"}}}`, "s.properties.a.format"},
		{`{"type": "object", "properties": {"a": {"type": "string", "minimum": 1}}}`, "s.properties.a"},
		{`{"type": "object", "properties": {"a": {"type": "integer", "maxLength": 1}}}`, "s.properties.a"},
		{`{"type": "object", "properties": {"a": {"type": "integer", "default": "x"}}}`, "s.properties.a.default"},
	}
	for _, tt := range tests {
		t.Run(tt.schema, func(t *testing.T) {
			var s answerSchema
			if err := json.Unmarshal([]byte(tt.schema), &s); err != nil {
				t.Fatal(err)
			}
			v := &validation{}
			s.validate(v, "s")
			for _, p := range v.problems {
				if p.Path == tt.wantPath {
					return
				}
			}
			t.Fatalf("problems = %+v, want one at %q", v.problems, tt.wantPath)
		})
	}
}
