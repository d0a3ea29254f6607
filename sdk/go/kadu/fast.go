package kadu

import (
	"bytes"
	"encoding/json"

	"github.com/kobana/kadu/sdk/go/kadu/internal/wire"
)

// fastToolResult encodes the common results — a string, or raw JSON such
// as an API response — without reflection: in a guest, encoding/json costs
// tens of microseconds per call, several times more under the host's
// deadline checks. ok is false for anything else, which takes the general
// path (encodeToolValue). The output is what encodeToolValue would write;
// the host checks that it is valid JSON.
func fastToolResult(v any, structured bool) (out []byte, ok bool) {
	var text []byte
	switch x := v.(type) {
	case string:
		if structured {
			return nil, false
		}
		text = []byte(x)
	case json.RawMessage:
		text = bytes.TrimSpace(x)
		if len(text) == 0 || (structured && text[0] != '{') {
			return nil, false
		}
	default:
		return nil, false
	}
	out = make([]byte, 0, 2*len(text)+64)
	out = append(out, `{"content":[{"type":"text","text":`...)
	out = wire.AppendString(out, text)
	out = append(out, `}]`...)
	if structured {
		out = append(out, `,"structuredContent":`...)
		out = append(out, text...)
	}
	return append(out, '}'), true
}
