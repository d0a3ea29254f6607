package mcp

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzMarshalToolResponse holds marshalToolResponse to json.Marshal: the
// same bytes for every tools/call result a bundle can answer.
func FuzzMarshalToolResponse(f *testing.F) {
	f.Add([]byte(`1`), []byte(`{"type":"text","text":"hi"}`), []byte(`{"id":"exe_1","n":[1,2]}`), false, "complete", "k", "v")
	f.Add([]byte(`"req-1"`), []byte(` { "type" : "text", "text" : "<b>&</b>" } `), []byte(``), true, "", "", "")
	f.Add([]byte(`null`), []byte("{\"type\":\"text\",\"text\":\"\u2028 \\\" \\\\ ok\"}"), []byte("{\"a\" :\n\"\u2029\"}"), false, "complete", "io.modelcontextprotocol/serverInfo", "x")
	f.Fuzz(func(t *testing.T, id, block, sc []byte, isError bool, resultType, metaKey, metaValue string) {
		if !json.Valid(id) || !json.Valid(block) || (len(sc) > 0 && !json.Valid(sc)) {
			return
		}
		r := &callToolResult{Content: []Content{json.RawMessage(block), json.RawMessage(block)}, StructuredContent: sc, IsError: isError}
		r.ResultType = resultType
		if metaKey != "" {
			r.Meta = map[string]any{metaKey: metaValue}
		}
		want, err := json.Marshal(response{JSONRPC: "2.0", ID: id, Result: r})
		if err != nil {
			t.Skip(err)
		}
		got, ok, err := marshalToolResponse(id, r)
		if err != nil || !ok {
			t.Fatalf("marshalToolResponse: ok=%v err=%v", ok, err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("got  %s\nwant %s", got, want)
		}
	})
}

func TestMarshalToolResponseLeavesOtherBlocksToMarshal(t *testing.T) {
	r := &callToolResult{Content: []Content{Text("made by the host")}}
	if _, ok, err := marshalToolResponse(json.RawMessage(`1`), r); ok || err != nil {
		t.Fatalf("a TextContent block took the raw path (ok=%v, err=%v)", ok, err)
	}
}
