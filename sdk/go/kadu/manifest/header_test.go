package manifest

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestHeaderParams(t *testing.T) {
	tests := []struct {
		name    string
		schema  string
		want    []HeaderParam
		wantErr string // substring; "" means valid
	}{
		{
			name:   "none",
			schema: `{"type":"object","properties":{"a":{"type":"string"}}}`,
		},
		{
			name:   "top-level and nested properties, ordered by path",
			schema: `{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"opts":{"type":"object","properties":{"n":{"type":"integer","x-mcp-header":"N"},"dry":{"type":"boolean","x-mcp-header":"Dry"}}}}}`,
			want: []HeaderParam{
				{Header: "Dry", Path: []string{"opts", "dry"}, Type: "boolean"},
				{Header: "N", Path: []string{"opts", "n"}, Type: "integer"},
				{Header: "Region", Path: []string{"region"}, Type: "string"},
			},
		},
		{
			name:   "a property named x-mcp-header is a name, not the keyword",
			schema: `{"type":"object","properties":{"x-mcp-header":{"type":"string"}}}`,
		},
		{
			name:    "number is not allowed",
			schema:  `{"type":"object","properties":{"amount":{"type":"number","x-mcp-header":"Amount"}}}`,
			wantErr: `"type" must be "string", "integer" or "boolean"`,
		},
		{
			name:    "type list is not allowed",
			schema:  `{"type":"object","properties":{"a":{"type":["string","null"],"x-mcp-header":"A"}}}`,
			wantErr: `"type" must be`,
		},
		{
			name:    "object is not allowed",
			schema:  `{"type":"object","properties":{"a":{"type":"object","x-mcp-header":"A"}}}`,
			wantErr: `"type" must be`,
		},
		{
			name:    "inside array items",
			schema:  `{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string","x-mcp-header":"Tag"}}}}`,
			wantErr: "properties keys only",
		},
		{
			name:    "inside prefixItems",
			schema:  `{"type":"object","properties":{"t":{"type":"array","prefixItems":[{"type":"string","x-mcp-header":"T"}]}}}`,
			wantErr: "properties keys only",
		},
		{
			name:    "inside anyOf",
			schema:  `{"type":"object","anyOf":[{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}]}`,
			wantErr: "properties keys only",
		},
		{
			name:    "inside a conditional",
			schema:  `{"type":"object","if":{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}}`,
			wantErr: "properties keys only",
		},
		{
			name:    "inside $defs (reached only through $ref)",
			schema:  `{"type":"object","properties":{"a":{"$ref":"#/$defs/a"}},"$defs":{"a":{"type":"string","x-mcp-header":"A"}}}`,
			wantErr: "properties keys only",
		},
		{
			name:    "on the root",
			schema:  `{"type":"object","x-mcp-header":"Root"}`,
			wantErr: "properties keys only",
		},
		{
			name:    "empty value",
			schema:  `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":""}}}`,
			wantErr: "non-empty string",
		},
		{
			name:    "not a string",
			schema:  `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":7}}}`,
			wantErr: "non-empty string",
		},
		{
			name:    "not a token",
			schema:  `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Re gion"}}}`,
			wantErr: "not an HTTP header token",
		},
		{
			name:    "control character",
			schema:  `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A\u0001"}}}`,
			wantErr: "not an HTTP header token",
		},
		{
			name:    "duplicate, case-insensitively",
			schema:  `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Region"},"b":{"type":"string","x-mcp-header":"REGION"}}}`,
			wantErr: "already used at /properties/a",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := HeaderParams(json.RawMessage(tt.schema))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("HeaderParams() error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("HeaderParams() error = %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("HeaderParams() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// FuzzHeaderParams feeds arbitrary schemas to the x-mcp-header walker: it
// must never panic, and every parameter it derives must obey the rules.
func FuzzHeaderParams(f *testing.F) {
	f.Add(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`)
	f.Add(`{"properties":{"a":{"items":{"x-mcp-header":"A"}}}}`)
	f.Add(`{"allOf":[{"properties":{"a":{"type":"integer","x-mcp-header":"A"}}}]}`)
	f.Fuzz(func(t *testing.T, schema string) {
		params, err := HeaderParams(json.RawMessage(schema))
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, p := range params {
			key := strings.ToLower(p.Header)
			if !IsToken(p.Header) || seen[key] || len(p.Path) == 0 ||
				(p.Type != "string" && p.Type != "integer" && p.Type != "boolean") {
				t.Fatalf("derived an invalid header parameter %+v from %s", p, schema)
			}
			seen[key] = true
		}
	})
}
