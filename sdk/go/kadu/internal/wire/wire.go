// Package wire reads JSON without reflection: the invocation envelope
// (sdk/ABI.md §7) and a tool's arguments split into members. In a wasm
// guest every pass of encoding/json costs tens of microseconds, several
// times more under the host's per-call deadline checks; these scanners do
// one pass with no allocation beyond what they return.
//
// It owns: validating a JSON document as encoding/json does (same grammar,
// same nesting limit), splitting an object into its members, and
// unquoting strings exactly as encoding/json does (invalid UTF-8 and lone
// surrogates become U+FFFD).
//
// It must not: know MCP or the envelope's members (package kadu does), or
// copy values: members are views into the input, valid as long as it is.
package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// maxDepth is encoding/json's nesting limit.
const maxDepth = 10000

// ErrType is the error of a value that is valid JSON of the wrong type.
var ErrType = errors.New("wrong JSON type")

func syntaxError(what string, i int) error {
	return fmt.Errorf("invalid JSON: %s at offset %d", what, i)
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// TrimSpace returns b without JSON whitespace around it.
func TrimSpace(b []byte) []byte {
	i, j := 0, len(b)
	for i < j && isSpace(b[i]) {
		i++
	}
	for j > i && isSpace(b[j-1]) {
		j--
	}
	return b[i:j]
}

// IsNull reports whether b, trimmed, is the literal null.
func IsNull(b []byte) bool { return string(TrimSpace(b)) == "null" }

// Valid reports whether b is one JSON value, as json.Valid does.
func Valid(b []byte) bool {
	i := skipSpace(b, 0)
	end, err := skipValue(b, i, 0)
	return err == nil && skipSpace(b, end) == len(b)
}

// skipValue returns the end of the JSON value at b[i].
func skipValue(b []byte, i, depth int) (int, error) {
	if i >= len(b) {
		return i, syntaxError("unexpected end", i)
	}
	switch c := b[i]; {
	case c == '{':
		return skipObject(b, i, depth+1, nil)
	case c == '[':
		return skipArray(b, i, depth+1)
	case c == '"':
		return skipString(b, i)
	case c == '-' || (c >= '0' && c <= '9'):
		return skipNumber(b, i)
	case c == 't':
		return skipLiteral(b, i, "true")
	case c == 'f':
		return skipLiteral(b, i, "false")
	case c == 'n':
		return skipLiteral(b, i, "null")
	}
	return i, syntaxError("unexpected character", i)
}

func skipLiteral(b []byte, i int, lit string) (int, error) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return i, syntaxError("bad literal", i)
	}
	return i + len(lit), nil
}

func skipNumber(b []byte, i int) (int, error) {
	start := i
	if b[i] == '-' {
		i++
	}
	digits := func() bool {
		s := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i > s
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case !digits():
		return i, syntaxError("bad number", start)
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			return i, syntaxError("bad number", start)
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			return i, syntaxError("bad number", start)
		}
	}
	return i, nil
}

// IsNumber reports whether b is exactly one JSON number.
func IsNumber(b []byte) bool {
	if len(b) == 0 || (b[0] != '-' && (b[0] < '0' || b[0] > '9')) {
		return false
	}
	end, err := skipNumber(b, 0)
	return err == nil && end == len(b)
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// skipString returns the end of the string at b[i] (after its closing
// quote). Invalid UTF-8 is accepted, as encoding/json accepts it.
func skipString(b []byte, i int) (int, error) {
	start := i
	for i++; i < len(b); i++ {
		for i+8 <= len(b) && !stringStops(load8(b, i)) {
			i += 8
		}
		if i >= len(b) {
			break
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, nil
		case c == '\\':
			i++
			if i >= len(b) {
				return i, syntaxError("unterminated string", start)
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if len(b)-i < 5 || !isHex(b[i+1]) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) {
					return i, syntaxError("bad \\u escape", i)
				}
				i += 4
			default:
				return i, syntaxError("bad escape", i)
			}
		case c < 0x20:
			return i, syntaxError("control character in string", i)
		}
	}
	return i, syntaxError("unterminated string", start)
}

func skipArray(b []byte, i, depth int) (int, error) {
	if depth > maxDepth {
		return i, syntaxError("nested too deep", i)
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, nil
	}
	for {
		var err error
		if i, err = skipValue(b, i, depth); err != nil {
			return i, err
		}
		i = skipSpace(b, i)
		if i >= len(b) {
			return i, syntaxError("unexpected end", i)
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case ']':
			return i + 1, nil
		default:
			return i, syntaxError("want , or ]", i)
		}
	}
}

// skipObject returns the end of the object at b[i], calling member (when
// not nil) with each member's quoted key and raw value.
func skipObject(b []byte, i, depth int, member func(key, value []byte) error) (int, error) {
	if depth > maxDepth {
		return i, syntaxError("nested too deep", i)
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return i, syntaxError("want a member name", i)
		}
		kEnd, err := skipString(b, i)
		if err != nil {
			return i, err
		}
		key := b[i:kEnd]
		i = skipSpace(b, kEnd)
		if i >= len(b) || b[i] != ':' {
			return i, syntaxError("want :", i)
		}
		i = skipSpace(b, i+1)
		vStart := i
		if i, err = skipValue(b, i, depth); err != nil {
			return i, err
		}
		if member != nil {
			if err := member(key, b[vStart:i]); err != nil {
				return i, err
			}
		}
		i = skipSpace(b, i)
		if i >= len(b) {
			return i, syntaxError("unexpected end", i)
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return i + 1, nil
		default:
			return i, syntaxError("want , or }", i)
		}
	}
}

// Object checks that doc is one JSON value and calls member for each
// member, in order, with the quoted key (see Key) and the raw value. A doc
// that is valid JSON but not an object is ErrType; null is an object with
// no members only when nullOK.
func Object(doc []byte, nullOK bool, member func(key, value []byte) error) error {
	i := skipSpace(doc, 0)
	if i >= len(doc) {
		return syntaxError("unexpected end", i)
	}
	var end int
	var err error
	if doc[i] == '{' {
		end, err = skipObject(doc, i, 1, member)
	} else {
		end, err = skipValue(doc, i, 0)
		if err == nil && !(nullOK && string(doc[i:end]) == "null") {
			err = ErrType
		}
	}
	if err != nil {
		return err
	}
	if j := skipSpace(doc, end); j != len(doc) {
		return syntaxError("data after the value", j)
	}
	return nil
}

// plain reports whether the quoted string q needs no rewriting: no escape
// and only valid UTF-8.
func plain(q []byte) bool {
	s := q[1 : len(q)-1]
	for i := 0; i < len(s); {
		if i+8 <= len(s) && !escapeStops(load8(s, i)) {
			i += 8
			continue
		}
		c := s[i]
		if c == '\\' {
			return false
		}
		if c < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			return false
		}
		i += size
	}
	return true
}

// UnquoteString returns the string of raw when raw is exactly one JSON
// string token, as encoding/json decodes it.
func UnquoteString(raw []byte) (string, bool) {
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	if end, err := skipString(raw, 0); err != nil || end != len(raw) {
		return "", false
	}
	return Unquote(raw), true
}

// Unquote returns the string of q, a JSON string token as the scanners
// checked it (quotes included), as encoding/json decodes it.
func Unquote(q []byte) string {
	if plain(q) {
		return string(q[1 : len(q)-1])
	}
	return string(unquoteSlow(q))
}

// Key returns the member name of the quoted key q without allocating when
// it needs no rewriting; the result aliases q then.
func Key(q []byte) []byte {
	if plain(q) {
		return q[1 : len(q)-1]
	}
	return unquoteSlow(q)
}

func unquoteSlow(q []byte) []byte {
	s := q[1 : len(q)-1]
	out := make([]byte, 0, len(s)+8)
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\':
			switch e := s[i+1]; e {
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r := hex4(s[i+2:])
				i += 6
				if utf16.IsSurrogate(r) {
					if len(s)-i >= 6 && s[i] == '\\' && s[i+1] == 'u' {
						if dec := utf16.DecodeRune(r, hex4(s[i+2:])); dec != unicode.ReplacementChar {
							out = utf8.AppendRune(out, dec)
							i += 6
							continue
						}
					}
					r = unicode.ReplacementChar
				}
				out = utf8.AppendRune(out, r)
				continue
			default: // '"', '\\', '/'
				out = append(out, e)
			}
			i += 2
		case c < utf8.RuneSelf:
			out = append(out, c)
			i++
		default:
			r, size := utf8.DecodeRune(s[i:])
			out = utf8.AppendRune(out, r) // RuneError for an invalid byte, as encoding/json
			i += size
		}
	}
	return out
}

// hex4 reads four hex digits the scanner checked.
func hex4(s []byte) rune {
	var r rune
	for _, c := range s[:4] {
		switch {
		case c <= '9':
			c -= '0'
		case c <= 'F':
			c = c - 'A' + 10
		default:
			c = c - 'a' + 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

// String decodes value, a checked JSON value, into *s as encoding/json
// does: a string sets it, null leaves it alone, anything else is ErrType.
func String(value []byte, s *string) error {
	switch value[0] {
	case '"':
		*s = Unquote(value)
	case 'n':
	default:
		return ErrType
	}
	return nil
}

// Raw sets *m to value, as a json.RawMessage member: null included.
func Raw(value []byte, m *json.RawMessage) { *m = value }

// RawMap decodes value, a checked JSON value, into *m as encoding/json
// decodes into a map[string]json.RawMessage: null sets nil, an object adds
// its members to the map (made when nil), the last of duplicate names
// winning; anything else is ErrType. The values alias value.
func RawMap(value []byte, m *map[string]json.RawMessage) error {
	switch value[0] {
	case 'n':
		*m = nil
		return nil
	case '{':
	default:
		return ErrType
	}
	if *m == nil {
		*m = make(map[string]json.RawMessage, 4)
	}
	_, err := skipObject(value, 0, 1, func(key, v []byte) error {
		(*m)[string(Key(key))] = v
		return nil
	})
	return err
}

// Match reports whether the member name key names field as encoding/json
// matches it: exactly, or else equal under Unicode case folding.
func Match(key []byte, field string) bool {
	return string(key) == field || bytes.EqualFold(key, []byte(field))
}

// Compact appends value, a checked JSON value, to dst without the
// whitespace between tokens.
func Compact(dst, value []byte) []byte {
	inString := false
	start := 0
	for i := 0; i < len(value); i++ {
		c := value[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		if c == '"' {
			inString = true
		} else if isSpace(c) {
			dst = append(dst, value[start:i]...)
			start = i + 1
		}
	}
	return append(dst, value[start:]...)
}

// AppendString appends s as a JSON string, as encoding/json does with
// HTML escaping off: quotes, backslashes and control characters escaped,
// U+2028 and U+2029 escaped, invalid UTF-8 replaced by U+FFFD.
func AppendString(dst, s []byte) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if i+8 <= len(s) && !escapeStops(load8(s, i)) {
			i += 8
			continue
		}
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

// Array calls elem with each element of value, a checked JSON array, in
// order. A value that is not an array is ErrType.
func Array(value []byte, elem func(v []byte) error) error {
	if len(value) == 0 || value[0] != '[' {
		return ErrType
	}
	i := skipSpace(value, 1)
	if i < len(value) && value[i] == ']' {
		return nil
	}
	for {
		end, err := skipValue(value, i, 1)
		if err != nil {
			return err
		}
		if err := elem(value[i:end]); err != nil {
			return err
		}
		i = skipSpace(value, end)
		if i >= len(value) || value[i] != ',' {
			return nil
		}
		i = skipSpace(value, i+1)
	}
}
