package plugin

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// referenceObjectString is objectString by encoding/json.
func referenceObjectString(b []byte, key string) (string, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil || m == nil {
		return "", false
	}
	raw, ok := m[key]
	if !ok || len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

var objectStringCases = []struct {
	doc  string
	want string
	ok   bool
}{
	{`{"type":"text","text":"hi"}`, "text", true},
	{` { "text" : {"type":"nested"} , "type" : "image" } `, "image", true},
	{`{"type":"a","type":"b"}`, "b", true},
	{`{"type":"a","type":1}`, "", false},
	{`{"type":null}`, "", false},
	{`{"type":""}`, "", true},
	{`{"typ\u0065":"t\u00e9xt"}`, "téxt", true},
	{`{"Type":"text"}`, "", false},
	{`{"text":"say \"type\": \"x\"","n":[1,{"type":"y"}],"b":true}`, "", false},
	{`{}`, "", false},
	{`[{"type":"text"}]`, "", false},
	{`"type"`, "", false},
	{`null`, "", false},
}

func TestObjectString(t *testing.T) {
	for _, tc := range objectStringCases {
		got, ok := objectString([]byte(tc.doc), "type")
		if got != tc.want || ok != tc.ok {
			t.Errorf("objectString(%s) = %q, %v; want %q, %v", tc.doc, got, ok, tc.want, tc.ok)
		}
		if rg, rok := referenceObjectString([]byte(tc.doc), "type"); rg != got || rok != ok {
			t.Errorf("objectString(%s) = %q, %v; encoding/json says %q, %v", tc.doc, got, ok, rg, rok)
		}
	}
}

// FuzzObjectString holds objectString to encoding/json on valid JSON, and
// to not panicking on anything.
func FuzzObjectString(f *testing.F) {
	for _, tc := range objectStringCases {
		f.Add([]byte(tc.doc))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		got, ok := objectString(doc, "type")
		if !json.Valid(doc) {
			return
		}
		if want, wok := referenceObjectString(doc, "type"); got != want || ok != wok {
			t.Fatalf("objectString(%s) = %q, %v; encoding/json says %q, %v", doc, got, ok, want, wok)
		}
	})
}

// FuzzDecodeValue holds decodeValue to jsonschema.UnmarshalJSON.
func FuzzDecodeValue(f *testing.F) {
	for _, doc := range []string{executionJSON, `{"a":[1,-2.5e3,true,false,null,"x\u00e9\n"],"a":{}}`, ` [] `, `"\ud83d\ude00"`,
		`{"k\u0065y":"\xff"}`, `1 2`, `{`, `0`, `-0.0E+1`} {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		got, ok := decodeValue(doc)
		want, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
		if ok != (err == nil) {
			t.Fatalf("decodeValue(%q) ok %v; jsonschema.UnmarshalJSON error %v", doc, ok, err)
		}
		if ok && !reflect.DeepEqual(got, want) {
			t.Fatalf("decodeValue(%q) = %#v; jsonschema.UnmarshalJSON %#v", doc, got, want)
		}
	})
}
