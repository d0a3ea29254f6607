package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"unicode/utf8"
)

// message is one parsed JSON-RPC request or notification. Raw fields alias
// the request body and are valid only while the request is served.
type message struct {
	id      json.RawMessage // nil for a notification; else a JSON string or integer
	method  string
	params  json.RawMessage // nil when absent
	members []member        // members of params when it is an object
	meta    []member        // members of params._meta when it is an object
}

// notification reports whether the message has no id member.
func (m *message) notification() bool { return m.id == nil }

// param returns the raw value of the params member name, or nil.
func (m *message) param(name string) json.RawMessage { return lookup(m.members, name) }

// metaValue returns the raw value of params._meta[key], or nil.
func (m *message) metaValue(key string) json.RawMessage { return lookup(m.meta, key) }

// envelopeMembers are the params members whose duplicates make a request
// ambiguous (docs/reference/mcp.md#order-of-checks rung 5); other params members follow JSON's
// last-one-wins like any decoder.
var envelopeMembers = map[string]bool{"name": true, "uri": true, "_meta": true}

// parseMessage applies rung 5 of docs/reference/mcp.md#order-of-checks: the JSON shape of one message.
// On error the returned id is the request id when it could be read, else nil.
func parseMessage(body []byte) (*message, *Error) {
	if !json.Valid(body) {
		return nil, parseError()
	}
	body = bytes.TrimLeft(body, " \t\r\n")
	switch body[0] {
	case '{':
	case '[':
		return nil, invalidRequest("Invalid Request: batch requests are not supported; send one JSON-RPC message per POST")
	default:
		return nil, invalidRequest("Invalid Request: the body must be a JSON-RPC request object")
	}
	top, err := objectMembers(body)
	if err != nil {
		return nil, invalidRequest("Invalid Request: " + err.Error())
	}
	m := &message{}
	var idErr *Error
	if raw := lookup(top, "id"); raw != nil {
		switch {
		case isString(raw), isInteger(raw):
			m.id = raw
		default:
			idErr = invalidRequest("Invalid Request: id must be a string or an integer")
		}
	}
	fail := func(e *Error) (*message, *Error) {
		if m.id != nil {
			return m, e
		}
		return nil, e
	}
	if d := duplicate(top, nil); d != "" {
		return fail(invalidRequest("Invalid Request: duplicate member " + quote(d)))
	}
	if idErr != nil {
		return nil, idErr
	}
	if v := lookup(top, "jsonrpc"); v == nil || string(v) != `"2.0"` {
		return fail(invalidRequest(`Invalid Request: jsonrpc must be "2.0"`))
	}
	method := lookup(top, "method")
	if method == nil {
		if lookup(top, "result") != nil || lookup(top, "error") != nil {
			return fail(invalidRequest("Invalid Request: clients must not send JSON-RPC responses"))
		}
		return fail(invalidRequest("Invalid Request: method is missing"))
	}
	if !isString(method) {
		return fail(invalidRequest("Invalid Request: method must be a string"))
	}
	if err := json.Unmarshal(method, &m.method); err != nil {
		return fail(invalidRequest("Invalid Request: method must be a string"))
	}
	if p := lookup(top, "params"); p != nil {
		m.params = p
		if p[0] == '{' {
			m.members, _ = objectMembers(p) // valid JSON object: cannot fail
			if d := duplicate(m.members, envelopeMembers); d != "" {
				return fail(invalidRequest("Invalid Request: duplicate member params." + d))
			}
			if meta := lookup(m.members, "_meta"); meta != nil && meta[0] == '{' {
				m.meta, _ = objectMembers(meta)
				if d := duplicate(m.meta, nil); d != "" {
					return fail(invalidRequest("Invalid Request: duplicate member params._meta." + quote(d)))
				}
			}
		}
	}
	return m, nil
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

func isString(raw json.RawMessage) bool { return len(raw) > 0 && raw[0] == '"' }

// isInteger reports whether raw is a JSON number without fraction or
// exponent: an id of 1.5 or 1e3 is not a valid request id.
func isInteger(raw json.RawMessage) bool {
	if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
		return false
	}
	return !bytes.ContainsAny(raw, ".eE")
}

// member is one name/value pair of a JSON object, in document order.
type member struct {
	name  string
	value json.RawMessage
}

func lookup(ms []member, name string) json.RawMessage {
	// Last one wins, as in encoding/json, for members duplicates are allowed for.
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].name == name {
			return ms[i].value
		}
	}
	return nil
}

// duplicate returns the first member name that occurs twice, considering
// only names in only (all names when only is nil), or "".
func duplicate(ms []member, only map[string]bool) string {
	for i := 1; i < len(ms); i++ {
		if only != nil && !only[ms[i].name] {
			continue
		}
		for j := 0; j < i; j++ {
			if ms[j].name == ms[i].name {
				return ms[i].name
			}
		}
	}
	return ""
}

var errNotObject = errors.New("not a JSON object")

// objectMembers splits a JSON object into its members without decoding the
// values. data must be valid JSON (checked by the caller); names are
// unescaped so that "\u006dethod" and "method" are the same member.
func objectMembers(data []byte) ([]member, error) {
	s := scanner{data: data}
	s.space()
	if !s.eat('{') {
		return nil, errNotObject
	}
	var out []member
	s.space()
	if s.eat('}') {
		return out, nil
	}
	for {
		s.space()
		start := s.i
		s.skipString()
		name, err := unquote(data[start:s.i])
		if err != nil {
			return nil, err
		}
		s.space()
		s.eat(':')
		s.space()
		vstart := s.i
		s.skipValue()
		out = append(out, member{name: name, value: json.RawMessage(data[vstart:s.i])})
		s.space()
		if s.eat(',') {
			continue
		}
		s.eat('}')
		return out, nil
	}
}

func unquote(q []byte) (string, error) {
	if bytes.IndexByte(q, '\\') < 0 && utf8.Valid(q) {
		return string(q[1 : len(q)-1]), nil
	}
	var s string
	err := json.Unmarshal(q, &s)
	return s, err
}

// scanner walks valid JSON. It does no validation of its own.
type scanner struct {
	data []byte
	i    int
}

func (s *scanner) space() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) eat(c byte) bool {
	if s.i < len(s.data) && s.data[s.i] == c {
		s.i++
		return true
	}
	return false
}

func (s *scanner) skipString() {
	s.i++ // opening quote
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case '\\':
			s.i += 2
		case '"':
			s.i++
			return
		default:
			s.i++
		}
	}
}

func (s *scanner) skipValue() {
	if s.i >= len(s.data) {
		return
	}
	switch s.data[s.i] {
	case '"':
		s.skipString()
	case '{', '[':
		depth := 0
		for s.i < len(s.data) {
			switch s.data[s.i] {
			case '"':
				s.skipString()
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					s.i++
					return
				}
			}
			s.i++
		}
	default: // number, true, false, null
		for s.i < len(s.data) {
			switch s.data[s.i] {
			case ',', '}', ']', ' ', '\t', '\r', '\n':
				return
			}
			s.i++
		}
	}
}
