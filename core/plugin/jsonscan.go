package plugin

import (
	"encoding/json"
	"unicode/utf8"
)

// A small reader of valid JSON, for the checks the host makes on every
// result (each content block has a "type"): encoding/json decoding a
// struct per block was a tenth of a warm call's allocations. Callers pass
// bytes json.Valid accepted; on anything else the answer is only "not
// found", never a panic (FuzzObjectString holds it).

// objectString returns the string value of key in the JSON object b, as
// decoding b into a map and the value into a string would: the last
// occurrence wins, and a value that is not a string is not found.
func objectString(b []byte, key string) (string, bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return "", false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return "", false
	}
	var val string
	found := false
	for i < len(b) && b[i] == '"' {
		ks := i
		ke, kesc := skipString(b, i)
		if ke < 0 {
			return "", false
		}
		i = skipSpace(b, ke)
		if i >= len(b) || b[i] != ':' {
			return "", false
		}
		vs := skipSpace(b, i+1)
		ve := skipValue(b, vs)
		if ve < 0 {
			return "", false
		}
		if keyIs(b[ks:ke], kesc, key) {
			val, found = stringValue(b[vs:ve])
		}
		i = skipSpace(b, ve)
		if i >= len(b) {
			return "", false
		}
		if b[i] == '}' {
			return val, found
		}
		if b[i] != ',' {
			return "", false
		}
		i = skipSpace(b, i+1)
	}
	return "", false
}

// keyIs reports whether the JSON string s (quotes included) is key.
func keyIs(s []byte, escaped bool, key string) bool {
	if !escaped {
		return string(s[1:len(s)-1]) == key
	}
	var k string
	return json.Unmarshal(s, &k) == nil && k == key
}

// stringValue decodes a JSON string value; false for any other value.
func stringValue(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' {
		return "", false
	}
	if _, esc := skipString(v, 0); !esc && utf8.Valid(v[1:len(v)-1]) {
		return string(v[1 : len(v)-1]), true
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return "", false
	}
	return s, true
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] (a
// quote) and whether it holds escapes; -1 when it does not end.
func skipString(b []byte, i int) (int, bool) {
	esc := false
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			esc = true
			i++
		case '"':
			return i + 1, esc
		}
	}
	return -1, esc
}

// skipValue returns the index after the value starting at b[i], or -1.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		end, _ := skipString(b, i)
		return end
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				end, _ := skipString(b, i)
				if end < 0 {
					return -1
				}
				i = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return -1
	}
	for ; i < len(b); i++ { // number, true, false, null
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
	}
	return i
}

// decodeValue decodes valid JSON into the values jsonschema validates:
// map[string]any, []any, string, json.Number, bool and nil, as
// jsonschema.UnmarshalJSON does (encoding/json with UseNumber) but
// without its reflection and token buffering, which were half the cost of
// checking a result against its outputSchema. false when b is not one
// valid JSON value; the caller then takes the slow path, which says why.
// FuzzDecodeValue holds it to jsonschema.UnmarshalJSON.
func decodeValue(b []byte) (any, bool) {
	if !json.Valid(b) {
		return nil, false
	}
	v, end := decodeAt(b, skipSpace(b, 0))
	if end < 0 || skipSpace(b, end) != len(b) {
		return nil, false
	}
	return v, true
}

// decodeAt decodes the value at b[i] of valid JSON, returning it and the
// index after it, or -1.
func decodeAt(b []byte, i int) (any, int) {
	if i >= len(b) {
		return nil, -1
	}
	switch c := b[i]; c {
	case '{':
		m := map[string]any{}
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == '}' {
			return m, i + 1
		}
		for i < len(b) && b[i] == '"' {
			ke, _ := skipString(b, i)
			if ke < 0 {
				return nil, -1
			}
			k, ok := stringValue(b[i:ke])
			if !ok {
				return nil, -1
			}
			i = skipSpace(b, ke)
			if i >= len(b) || b[i] != ':' {
				return nil, -1
			}
			var v any
			if v, i = decodeAt(b, skipSpace(b, i+1)); i < 0 {
				return nil, -1
			}
			m[k] = v
			if i = skipSpace(b, i); i < len(b) && b[i] == '}' {
				return m, i + 1
			}
			if i >= len(b) || b[i] != ',' {
				return nil, -1
			}
			i = skipSpace(b, i+1)
		}
		return nil, -1
	case '[':
		a := []any{}
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == ']' {
			return a, i + 1
		}
		for {
			var v any
			if v, i = decodeAt(b, i); i < 0 {
				return nil, -1
			}
			a = append(a, v)
			if i = skipSpace(b, i); i < len(b) && b[i] == ']' {
				return a, i + 1
			}
			if i >= len(b) || b[i] != ',' {
				return nil, -1
			}
			i = skipSpace(b, i+1)
		}
	case '"':
		end, _ := skipString(b, i)
		if end < 0 {
			return nil, -1
		}
		s, ok := stringValue(b[i:end])
		if !ok {
			return nil, -1
		}
		return s, end
	case 't':
		return true, i + len("true")
	case 'f':
		return false, i + len("false")
	case 'n':
		return nil, i + len("null")
	default:
		end := skipValue(b, i)
		if end < 0 {
			return nil, -1
		}
		return json.Number(b[i:end]), end
	}
}
