package kadu

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestDecodeInvocation(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    invocation
		wantErr bool
	}{
		{name: "tools/call", in: `{"op":"tools/call","params":{"name":"t","arguments":{"id":"x"}},"client":{"capabilities":{}}}`,
			want: invocation{Op: "tools/call", Params: params{Name: "t", Arguments: json.RawMessage(`{"id":"x"}`)}, Client: json.RawMessage(`{"capabilities":{}}`)}},
		{name: "unknown members skipped", in: ` {"later":[1,{"a":null}],"op":"resources/read","params":{"uri":"x://a","more":true}} `,
			want: invocation{Op: "resources/read", Params: params{URI: "x://a"}}},
		{name: "retry", in: `{"op":"tools/call","params":{"name":"t"},"input_responses":{"ok":{"action":"accept"}},"state":[1]}`,
			want: invocation{Op: "tools/call", Params: params{Name: "t"}, InputResponses: map[string]json.RawMessage{"ok": json.RawMessage(`{"action":"accept"}`)}, State: json.RawMessage(`[1]`)}},
		{name: "escapes in names and strings", in: `{"\u006fp":"tools\/call","params":{"name":"a\u00e9\ud83d\ude00"}}`,
			want: invocation{Op: "tools/call", Params: params{Name: "aé😀"}}},
		{name: "names match case-insensitively, as encoding/json", in: `{"OP":"x"}`, want: invocation{Op: "x"}},
		{name: "null leaves a string alone", in: `{"op":"x","op":null}`, want: invocation{Op: "x"}},
		{name: "op not a string", in: `{"op":1}`, wantErr: true},
		{name: "params not an object", in: `{"op":"x","params":[]}`, wantErr: true},
		{name: "input_responses not an object", in: `{"input_responses":"x"}`, wantErr: true},
		{name: "not an object", in: `[]`, wantErr: true},
		{name: "trailing data", in: `{} {}`, wantErr: true},
		{name: "truncated", in: `{"op":"x"`, wantErr: true},
		{name: "bad JSON in an unknown member", in: `{"x":[1,]}`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got invocation
			err := decodeInvocation([]byte(tt.in), &got)
			if (err != nil) != tt.wantErr {
				t.Fatalf("decodeInvocation(%s) error = %v; want error %v", tt.in, err, tt.wantErr)
			}
			if err == nil && !reflect.DeepEqual(got, tt.want) {
				t.Errorf("decodeInvocation(%s) = %+v; want %+v", tt.in, got, tt.want)
			}
		})
	}
}

// FuzzDecodeInvocation checks the hand-written envelope decoder against
// encoding/json decoding the same struct: both refuse the same inputs, and
// on the others they decode the same fields.
func FuzzDecodeInvocation(f *testing.F) {
	for _, s := range []string{
		`{"op":"tools/call","params":{"name":"echo","arguments":{"a":1}}}`,
		`{"op":"tools/call","params":{"name":"echo","arguments":null},"state":{"x":1},"input_responses":{"k":{}}}`,
		`{"op":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"who","value":"a"},"context":null}}`,
		`{"Op":"x","PARAMS":{"Name":"\u017f","uri":"\ud800x"},"params":null,"input_responses":{"a":1,"a":[2]},"input_responses":{"b":3}}`,
		`{"op":"a\"\\\/\b\f\n\r\t\u0041\xff"}`,
		`{"op":-0.5e+3}`, `{"op":1e}`, `{"x":[[[]]],"client":tru}`, ` null `, `{"op":"x"} x`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var want, got invocation
		wantErr := json.Unmarshal([]byte(in), &want)
		gotErr := decodeInvocation([]byte(in), &got)
		if (gotErr != nil) != (wantErr != nil) {
			t.Fatalf("decodeInvocation(%q) error = %v; encoding/json says %v", in, gotErr, wantErr)
		}
		if gotErr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("decodeInvocation(%q)\n= %+v\nencoding/json says\n  %+v", in, got, want)
		}
	})
}
