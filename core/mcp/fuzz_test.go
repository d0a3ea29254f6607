package mcp

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"
	"unicode/utf8"
)

// FuzzParseMessage checks that the parser never panics, that what it
// accepts is a well-formed request, and that it agrees with encoding/json
// on every member it reads.
func FuzzParseMessage(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"x","arguments":{"a":[1,{"b":"}"}]}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","\u006dethod":"n"}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"k":1,"k":2}}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"m"}]`,
		`{"jsonrpc":"2.0","id":-0,"method":"m","params":{"uri":"a\"b\\"}}`,
		`{"jsonrpc":"2.0","id":1e3,"method":"m"}`,
		`  {"jsonrpc" : "2.0" , "id" : 2 , "method" : "m" , "params" : [ ] }  `,
		`{`, `null`, `"x"`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		m, err := parseMessage(body)
		if err != nil {
			if err.Code != CodeParseError && err.Code != CodeInvalidRequest {
				t.Fatalf("unexpected code %d", err.Code)
			}
			if err.Code == CodeParseError && json.Valid(body) {
				t.Fatalf("valid JSON reported as a parse error")
			}
			return
		}
		// A map keeps member names exactly (struct fields would match
		// them case-insensitively, which JSON-RPC does not).
		var std map[string]json.RawMessage
		if e := json.Unmarshal(body, &std); e != nil {
			t.Fatalf("accepted a body encoding/json refuses: %v", e)
		}
		var method string
		if json.Unmarshal(std["method"], &method) != nil || method != m.method || string(std["jsonrpc"]) != `"2.0"` {
			t.Fatalf("disagrees with encoding/json: %s vs method %q", body, m.method)
		}
		if m.id != nil && !bytes.Equal(std["id"], m.id) {
			t.Fatalf("id %s, encoding/json says %s", m.id, std["id"])
		}
		if m.params != nil && !bytes.Equal(std["params"], m.params) {
			t.Fatalf("params %s, encoding/json says %s", m.params, std["params"])
		}
	})
}

// FuzzObjectMembers checks the member splitter against encoding/json.
func FuzzObjectMembers(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1,"b":[1,2,{"c":"d"}],"e":"\"}"}`, `{"a":1,"a":2}`, `{"\u00e9":true,"x":null}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var want map[string]json.RawMessage
		if json.Unmarshal(data, &want) != nil || want == nil {
			return
		}
		ms, err := objectMembers(data)
		if err != nil {
			t.Fatalf("objectMembers(%s): %v", data, err)
		}
		got := map[string]json.RawMessage{}
		for _, m := range ms {
			got[m.name] = m.value
		}
		if len(got) != len(want) {
			t.Fatalf("%d members, encoding/json has %d", len(got), len(want))
		}
		for k, v := range want {
			if !bytes.Equal(bytes.TrimSpace(v), got[k]) {
				t.Fatalf("member %q = %s, encoding/json says %s", k, got[k], v)
			}
		}
	})
}

// FuzzDecodeHeaderValue checks the sentinel decoder: it never panics,
// decoded values are valid UTF-8, and encoding then decoding is the identity.
func FuzzDecodeHeaderValue(f *testing.F) {
	for _, s := range []string{"echo", "=?base64?ZWNobw==?=", "=?base64?ZWNobw?=", "=?BASE64?ZWNobw==?=", "=?base64??=", " São Paulo ", "=?base64?w6k=?=", "=?base64?/w==?="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		got, err := DecodeHeaderValue(v)
		if err == nil && !utf8.ValidString(got) && utf8.ValidString(v) {
			t.Fatalf("DecodeHeaderValue(%q) = %q: invalid UTF-8", v, got)
		}
		if !utf8.ValidString(v) {
			return
		}
		enc := EncodeHeaderValue(v)
		for i := 0; i < len(enc); i++ {
			if enc[i] < 0x20 || enc[i] > 0x7e {
				t.Fatalf("EncodeHeaderValue(%q) = %q: not plain ASCII", v, enc)
			}
		}
		dec, err := DecodeHeaderValue(enc)
		if err != nil || dec != v {
			t.Fatalf("round trip of %q: %q, %v", v, dec, err)
		}
		// A header built from the encoded value survives net/http untouched.
		h := http.Header{}
		h.Set(HeaderName, enc)
		if h.Get(HeaderName) != enc {
			t.Fatalf("net/http changed %q", enc)
		}
	})
}
