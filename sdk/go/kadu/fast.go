package kadu

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
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
	out = appendString(out, text)
	out = append(out, `}]`...)
	if structured {
		out = append(out, `,"structuredContent":`...)
		out = append(out, text...)
	}
	return append(out, '}'), true
}

// appendString appends s as a JSON string, as encoding/json does with
// HTML escaping off: quotes, backslashes and control characters escaped,
// U+2028 and U+2029 escaped, invalid UTF-8 replaced by U+FFFD.
func appendString(dst, s []byte) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
