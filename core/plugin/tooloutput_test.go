package plugin

import (
	"encoding/json"
	"reflect"
	"testing"
)

var toolOutputSeeds = []string{
	`{"content":[{"type":"text","text":"hi"}]}`,
	`{"content":[{"type":"text","text":"{\"id\":1}"}],"structuredContent":{"id":1},"isError":false}`,
	` { "content" : [ ] , "isError" : true } `,
	`{"content":null,"isError":null,"structuredContent":null}`,
	`{"content":[{"type":"text","text":"a"}],"content":[{"type":"text","text":"b"}]}`,
	`{"isError":true,"isError":null}`,
	`{"Content":[{"type":"text","text":"case"}]}`,
	`{"ISERROR":true}`,
	`{"resultType":"input_required","inputRequests":{"a":{}},"state":"x"}`,
	`{"\u0063ontent":[{"type":"text","text":"escaped key"}]}`,
	`{"content":{"type":"text"}}`,
	`{"isError":"yes"}`,
	`{"other":[1,2,{"x":"}"}],"content":[1,"two",[3]]}`,
	`{}`,
	`[]`,
	`"text"`,
	`{"ſtate":"long s"}`,
}

// TestDecodeToolOutputFast pins the shapes the fast decoder takes and the
// ones it leaves to encoding/json.
func TestDecodeToolOutputFast(t *testing.T) {
	for _, tc := range []struct {
		out  string
		fast bool
	}{
		{toolOutputSeeds[0], true},
		{toolOutputSeeds[1], true},
		{toolOutputSeeds[2], true},
		{toolOutputSeeds[3], true},
		{toolOutputSeeds[4], true},
		{toolOutputSeeds[5], true},
		{toolOutputSeeds[6], false},  // another case: encoding/json matches it
		{toolOutputSeeds[7], false},  // likewise
		{toolOutputSeeds[8], false},  // input required
		{toolOutputSeeds[9], false},  // escaped key
		{toolOutputSeeds[10], false}, // content not an array: encoding/json says why
		{toolOutputSeeds[11], false},
		{toolOutputSeeds[12], true},
		{`[]`, false},
		{`{"ſtate":"long s"}`, false},
	} {
		var tr toolOutput
		if got := decodeToolOutputFast([]byte(tc.out), &tr); got != tc.fast {
			t.Errorf("decodeToolOutputFast(%s) = %v, want %v", tc.out, got, tc.fast)
		}
	}
}

// FuzzDecodeToolOutput holds the fast decoder to encoding/json: whatever
// it accepts, json.Unmarshal accepts too, with the same result.
func FuzzDecodeToolOutput(f *testing.F) {
	for _, s := range toolOutputSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, out []byte) {
		if !json.Valid(out) {
			return // instance.call refuses it before decoding
		}
		var fast toolOutput
		if !decodeToolOutputFast(out, &fast) {
			return
		}
		var slow toolOutput
		if err := json.Unmarshal(out, &slow); err != nil {
			t.Fatalf("fast decoder accepted %q, encoding/json refuses it: %v", out, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q decoded as\n%#v\nencoding/json:\n%#v", out, fast, slow)
		}
	})
}
