package toolschema_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kobana/kadu/sdk/go/kadu/manifest/toolschema"
)

func TestCompile(t *testing.T) {
	tests := []struct {
		name    string
		schema  string
		wantErr string // substring; "" compiles
	}{
		{name: "object", schema: `{"type":"object","properties":{"id":{"type":"string","format":"uuid"}}}`},
		{name: "not JSON", schema: `{"type":`, wantErr: "not valid JSON"},
		{name: "an array", schema: `[]`, wantErr: "want a JSON Schema object"},
		{name: "a string schema", schema: `{"type":"string"}`, wantErr: `want "type": "object" at the root`},
		{name: "unknown type", schema: `{"type":"object","properties":{"a":{"type":"strin"}}}`, wantErr: "does not compile as JSON Schema 2020-12"},
		{name: "a file reference", schema: `{"type":"object","properties":{"a":{"$ref":"file:///etc/passwd"}}}`, wantErr: "self-contained"},
		{name: "a remote reference", schema: `{"type":"object","properties":{"a":{"$ref":"https://example.com/s.json"}}}`, wantErr: "self-contained"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, err := toolschema.Compile(json.RawMessage(tt.schema))
			if tt.wantErr == "" {
				if err != nil || s == nil {
					t.Fatalf("Compile() = %v, %v; want a schema", s, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Compile() error = %v; want one containing %q", err, tt.wantErr)
			}
		})
	}
}

// TestCompileAssertsFormats checks that "format" is an assertion, as the
// host validates arguments.
func TestCompileAssertsFormats(t *testing.T) {
	s, err := toolschema.Compile(json.RawMessage(`{"type":"object","properties":{"at":{"type":"string","format":"date-time"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(map[string]any{"at": "yesterday"}); err == nil {
		t.Fatal(`Validate({"at":"yesterday"}) passed; want a format failure`)
	}
}
