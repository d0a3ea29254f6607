package mcp

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"strings"
	"unicode/utf8"
)

// Request headers of the era 2026-07-28 header contract (docs/reference/mcp.md#era-2026-07-28-headers).
const (
	HeaderProtocolVersion = "MCP-Protocol-Version"
	HeaderMethod          = "Mcp-Method"
	HeaderName            = "Mcp-Name"
	HeaderParamPrefix     = "Mcp-Param-"
)

const (
	sentinelPrefix = "=?base64?"
	sentinelSuffix = "?="
)

var errBadSentinel = errors.New("invalid =?base64?…?= value")

// DecodeHeaderValue decodes an Mcp-Name or Mcp-Param-* value: surrounding
// whitespace is trimmed, and a value of the form =?base64?…?= (lowercase
// markers, case-sensitive) is decoded strictly — padded standard base64 of
// valid UTF-8 — while anything else is returned as it is.
func DecodeHeaderValue(v string) (string, error) {
	v = strings.TrimSpace(v)
	if len(v) < len(sentinelPrefix)+len(sentinelSuffix) ||
		!strings.HasPrefix(v, sentinelPrefix) || !strings.HasSuffix(v, sentinelSuffix) {
		return v, nil
	}
	inner := v[len(sentinelPrefix) : len(v)-len(sentinelSuffix)]
	// The standard decoder skips \r and \n; a strict decoder must not.
	if strings.ContainsAny(inner, "\r\n") {
		return "", errBadSentinel
	}
	b, err := base64.StdEncoding.Strict().DecodeString(inner)
	if err != nil || !utf8.Valid(b) {
		return "", errBadSentinel
	}
	return string(b), nil
}

// EncodeHeaderValue is the inverse of DecodeHeaderValue: it returns s
// unchanged when it is safe as a plain header value, and the base64
// sentinel form otherwise (non-ASCII or control characters, surrounding
// whitespace, or a value that itself looks like the sentinel).
func EncodeHeaderValue(s string) string {
	safe := s == strings.TrimSpace(s) &&
		!(strings.HasPrefix(s, sentinelPrefix) && strings.HasSuffix(s, sentinelSuffix))
	for i := 0; safe && i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e {
			safe = false
		}
	}
	if safe {
		return s
	}
	return sentinelPrefix + base64.StdEncoding.EncodeToString([]byte(s)) + sentinelSuffix
}

// singleHeader returns the one value of header name. present is false
// when the header is missing; repeated is true when it occurs more than once.
func singleHeader(h http.Header, name string) (value string, present, repeated bool) {
	vs := h.Values(name)
	switch len(vs) {
	case 0:
		return "", false, false
	case 1:
		return vs[0], true, false
	default:
		return vs[0], true, true
	}
}

// checkHeaderContract applies rung 7(b) of docs/reference/mcp.md#order-of-checks to an era-2026 request:
// the headers must mirror the envelope version, the method and, where the
// method has one, the name or URI.
func checkHeaderContract(h http.Header, m *message, envelopeVersion string) *Error {
	if v, ok, rep := singleHeader(h, HeaderProtocolVersion); !ok {
		return headerMismatch("%s header is required in era 2026-07-28", HeaderProtocolVersion)
	} else if rep {
		return headerMismatch("%s header is repeated", HeaderProtocolVersion)
	} else if v != envelopeVersion {
		return headerMismatch("%s header %q does not match the protocol version %q in params._meta", HeaderProtocolVersion, v, envelopeVersion)
	}
	if v, ok, rep := singleHeader(h, HeaderMethod); !ok {
		return headerMismatch("%s header is required in era 2026-07-28", HeaderMethod)
	} else if rep {
		return headerMismatch("%s header is repeated", HeaderMethod)
	} else if v != m.method {
		return headerMismatch("%s header %q does not match the body method %q", HeaderMethod, v, m.method)
	}
	field := nameField(m.method)
	if field == "" {
		return nil
	}
	raw, ok, rep := singleHeader(h, HeaderName)
	switch {
	case !ok:
		return headerMismatch("%s header is required on %s", HeaderName, m.method)
	case rep:
		return headerMismatch("%s header is repeated", HeaderName)
	}
	got, err := DecodeHeaderValue(raw)
	if err != nil {
		return headerMismatch("%s header is not a valid =?base64?…?= value", HeaderName)
	}
	var want string
	if v := m.param(field); v == nil || json.Unmarshal(v, &want) != nil {
		return headerMismatch("%s header is set but params.%s is missing or not a string", HeaderName, field)
	}
	if got != want {
		return headerMismatch("%s header does not match params.%s", HeaderName, field)
	}
	return nil
}

// nameField is the params member Mcp-Name mirrors for method, or "".
func nameField(method string) string {
	switch method {
	case "tools/call", "prompts/get":
		return "name"
	case "resources/read":
		return "uri"
	}
	return ""
}

// checkParamHeaders applies rung 13: each x-mcp-header parameter of the
// tool is mirrored by an Mcp-Param-{Name} header when the argument is
// present and not null, and absent otherwise.
func checkParamHeaders(h http.Header, params []HeaderParam, args json.RawMessage) *Error {
	for _, p := range params {
		name := HeaderParamPrefix + p.Header
		raw, present, repeated := singleHeader(h, name)
		if repeated {
			return headerMismatch("%s header is repeated", name)
		}
		val := argumentAt(args, p.Path)
		if val == nil || string(val) == "null" {
			if present {
				return headerMismatch("%s header is set but argument %s is absent", name, strings.Join(p.Path, "."))
			}
			continue
		}
		if !present {
			return headerMismatch("%s header is required when argument %s is set", name, strings.Join(p.Path, "."))
		}
		got, err := DecodeHeaderValue(raw)
		if err != nil {
			return headerMismatch("%s header is not a valid =?base64?…?= value", name)
		}
		if !paramMatches(p.Type, got, val) {
			return headerMismatch("%s header does not match argument %s", name, strings.Join(p.Path, "."))
		}
	}
	return nil
}

func argumentAt(args json.RawMessage, path []string) json.RawMessage {
	cur := args
	for _, key := range path {
		if len(cur) == 0 || cur[0] != '{' {
			return nil
		}
		ms, err := objectMembers(cur)
		if err != nil {
			return nil
		}
		cur = lookup(ms, key)
	}
	return cur
}

func paramMatches(typ, header string, val json.RawMessage) bool {
	switch typ {
	case "boolean":
		return (header == "true" || header == "false") && header == string(bytes.TrimSpace(val))
	case "integer":
		h, ok1 := new(big.Int).SetString(header, 10)
		b, ok2 := new(big.Float).SetString(string(bytes.TrimSpace(val)))
		return ok1 && ok2 && b.IsInt() && new(big.Float).SetInt(h).Cmp(b) == 0
	default:
		var s string
		return json.Unmarshal(val, &s) == nil && s == header
	}
}
