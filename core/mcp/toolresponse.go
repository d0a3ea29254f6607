package mcp

import (
	"bytes"
	"encoding/json"
)

// marshalToolResponse encodes the response to a tools/call whose content
// blocks and structuredContent are raw JSON (what a bundle answers) into
// exactly the bytes json.Marshal writes, without running encoding/json
// over them: Marshal compacts and re-validates every raw member, which
// cost more than the rest of the response on a call that returns an
// execution. The decorations, small and varied, still go through
// json.Marshal. ok is false when a block is not raw JSON; the caller then
// marshals the whole response. FuzzMarshalToolResponse holds it to
// json.Marshal.
func marshalToolResponse(id json.RawMessage, r *callToolResult) ([]byte, bool, error) {
	size := 64 + len(id) + len(r.StructuredContent)
	for _, c := range r.Content {
		raw, ok := c.(json.RawMessage)
		if !ok || len(raw) == 0 {
			return nil, false, nil
		}
		size += len(raw) + 1
	}
	decor, err := json.Marshal(&r.decorations)
	if err != nil {
		return nil, false, err
	}
	b := make([]byte, 0, size+len(decor))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = appendRawJSON(b, id)
	b = append(b, `,"result":{"content":[`...)
	for i, c := range r.Content {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendRawJSON(b, c.(json.RawMessage))
	}
	b = append(b, ']')
	if len(r.StructuredContent) > 0 {
		b = append(b, `,"structuredContent":`...)
		b = appendRawJSON(b, r.StructuredContent)
	}
	if r.IsError {
		b = append(b, `,"isError":true`...)
	}
	if len(decor) > 2 { // {"resultType":…}: its members follow
		b = append(b, ',')
		b = append(b, decor[1:len(decor)-1]...)
	}
	return append(b, "}}"...), true, nil
}

// appendRawJSON appends raw as json.Marshal writes a json.RawMessage:
// compacted, with <, >, & and U+2028/U+2029 escaped. Raw JSON that is
// already so — what bundles write — is copied as it is after one pass.
// Invalid JSON is appended as it is; json.Valid checked it upstream.
func appendRawJSON(dst, raw []byte) []byte {
	if plainCompact(raw) {
		return append(dst, raw...)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return append(dst, raw...)
	}
	var out bytes.Buffer
	json.HTMLEscape(&out, buf.Bytes())
	return append(dst, out.Bytes()...)
}

// plainCompact reports whether raw has no white space outside strings and
// nothing json.Marshal would escape.
func plainCompact(raw []byte) bool {
	in := false
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; c {
		case '"':
			in = !in
		case '\\':
			if in {
				i++ // the escaped byte cannot end the string
			}
		case ' ', '\t', '\n', '\r':
			if !in {
				return false
			}
		case '<', '>', '&':
			return false
		case 0xE2: // U+2028 and U+2029 are E2 80 A8 and E2 80 A9
			if i+2 < len(raw) && raw[i+1] == 0x80 && (raw[i+2] == 0xA8 || raw[i+2] == 0xA9) {
				return false
			}
		}
	}
	return true
}
