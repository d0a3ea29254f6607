// Package canonjson serialises JSON in the JSON Canonicalization Scheme
// (RFC 8785), so that equal documents digest alike: object members sorted
// by their UTF-16 code units, no insignificant whitespace, numbers in their
// shortest ECMAScript form (1 and 1.0 are both "1"), strings with the
// minimal escapes.
//
// It owns nothing but that transformation; callers hash its output
// (idempotency keys, confirmation of destructive tools).
package canonjson

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// ErrInvalid reports input that is not a single valid JSON value, or that
// holds a number JSON cannot carry exactly as an IEEE 754 double.
var ErrInvalid = errors.New("canonjson: invalid JSON")

// Transform returns the canonical form of the JSON value in data.
func Transform(data []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if _, err := dec.Token(); err == nil {
		return nil, fmt.Errorf("%w: more than one value", ErrInvalid)
	}
	var buf bytes.Buffer
	if err := write(&buf, v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func write(buf *bytes.Buffer, v any) error {
	switch v := v.(type) {
	case nil:
		buf.WriteString("null")
	case bool:
		buf.WriteString(strconv.FormatBool(v))
	case json.Number:
		s, err := number(v)
		if err != nil {
			return err
		}
		buf.WriteString(s)
	case string:
		writeString(buf, v)
	case []any:
		buf.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := write(buf, e); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, compareUTF16)
		buf.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			writeString(buf, k)
			buf.WriteByte(':')
			if err := write(buf, v[k]); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	default:
		return fmt.Errorf("%w: unexpected %T", ErrInvalid, v)
	}
	return nil
}

// number formats a JSON number as ECMAScript's Number.prototype.toString
// does (RFC 8785 §3.2.2.3).
func number(n json.Number) (string, error) {
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return "", fmt.Errorf("%w: number %s is out of range", ErrInvalid, n)
	}
	if f == 0 {
		return "0", nil // -0 too
	}
	abs := math.Abs(f)
	if abs >= 1e-6 && abs < 1e21 {
		return strconv.FormatFloat(f, 'f', -1, 64), nil
	}
	s := strconv.FormatFloat(f, 'e', -1, 64) // e.g. 1.5e-07, 1e+21
	mant, exp, _ := strings.Cut(s, "e")
	sign := exp[0]
	exp = strings.TrimLeft(exp[1:], "0")
	return mant + "e" + string(sign) + exp, nil
}

// writeString escapes only what JSON requires: quote, backslash and control
// characters, with the short forms where they exist (RFC 8785 §3.2.2.2).
func writeString(buf *bytes.Buffer, s string) {
	buf.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			buf.WriteString(`\"`)
		case '\\':
			buf.WriteString(`\\`)
		case '\b':
			buf.WriteString(`\b`)
		case '\f':
			buf.WriteString(`\f`)
		case '\n':
			buf.WriteString(`\n`)
		case '\r':
			buf.WriteString(`\r`)
		case '\t':
			buf.WriteString(`\t`)
		default:
			if r < 0x20 {
				fmt.Fprintf(buf, `\u%04x`, r)
			} else {
				buf.WriteRune(r)
			}
		}
	}
	buf.WriteByte('"')
}

// compareUTF16 orders strings by their UTF-16 code units, as RFC 8785
// requires (it differs from byte order for characters above U+FFFF). It
// walks both strings without converting them: it runs for every pair of
// keys sorted, and the audit trail hashes each event's canonical form on
// the path of every write.
func compareUTF16(a, b string) int {
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		a, b = a[na:], b[nb:]
		if ra == rb {
			continue
		}
		a1, a2 := utf16Units(ra)
		b1, b2 := utf16Units(rb)
		if a1 != b1 {
			return cmp.Compare(a1, b1)
		}
		return cmp.Compare(a2, b2) // the same high surrogate: the low ones differ
	}
	return cmp.Compare(len(a), len(b)) // a prefix comes first
}

// utf16Units returns r's UTF-16 code units (the second 0 for one unit),
// mapping what utf16.Encode maps to U+FFFD the same way.
func utf16Units(r rune) (uint16, uint16) {
	if r < 0x10000 {
		if utf16.IsSurrogate(r) || r < 0 {
			return utf8.RuneError, 0
		}
		return uint16(r), 0
	}
	r1, r2 := utf16.EncodeRune(r)
	return uint16(r1), uint16(r2)
}
