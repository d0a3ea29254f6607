package schema

import (
	"strings"
	"testing"
)

func parse(t *testing.T, raw string) any {
	t.Helper()
	doc, err := Parse([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func TestCompileOptions(t *testing.T) {
	tests := []struct {
		name    string
		schema  string
		inst    string
		wantErr string // "" when inst must pass; "compile: …" when the schema must not compile
	}{
		{name: "draft 2020-12 by default", schema: `{"prefixItems":[{"type":"string"}]}`, inst: `[1]`, wantErr: "/0: got number, want string"},
		{name: "formats are asserted", schema: `{"type":"string","format":"email"}`, inst: `"not an address"`, wantErr: "(root): 'not an address' is not valid email"},
		{name: "valid instance", schema: `{"type":"object","properties":{"n":{"type":"integer"}}}`, inst: `{"n":2}`},
		{name: "local $ref", schema: `{"$defs":{"s":{"type":"string"}},"$ref":"#/$defs/s"}`, inst: `"x"`},
		{name: "remote $ref refused", schema: `{"$ref":"https://example.com/s.json"}`, wantErr: "compile: must be self-contained"},
		{name: "file $ref refused", schema: `{"$ref":"file:///etc/passwd"}`, wantErr: "compile: must be self-contained"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Compile("test", parse(t, tt.schema))
			if want, ok := strings.CutPrefix(tt.wantErr, "compile: "); ok {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("Compile() error %v, want one containing %q", err, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			err = Validate(s, parse(t, tt.inst))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Validate() = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestValidateNamesEveryLocationSorted(t *testing.T) {
	s, err := Compile("test", parse(t, `{"type":"object","properties":{"b":{"type":"string"},"a/x":{"type":"integer"}},"required":["c"]}`))
	if err != nil {
		t.Fatal(err)
	}
	err = Validate(s, parse(t, `{"b":1,"a/x":"y"}`))
	want := "(root): missing property 'c'; /a~1x: got string, want integer; /b: got number, want string"
	if err == nil || err.Error() != want {
		t.Fatalf("Validate() = %v\nwant %s", err, want)
	}
	fs, ok := Failures(s.Validate(parse(t, `{"b":1,"a/x":"y"}`)))
	if !ok || len(fs) != 3 {
		t.Fatalf("Failures() = %+v, %v; want three", fs, ok)
	}
	if _, ok := Failures(nil); ok {
		t.Fatal("Failures(nil) reported a validation error")
	}
}
