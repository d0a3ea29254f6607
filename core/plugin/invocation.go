package plugin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"unicode/utf8"
)

// The invocation JSON, the input of kadu_handle (sdk/ABI.md), is written
// by hand: encoding/json's reflection over interface values was a fifth of
// the host's cost of a warm call. The bytes are what json.Marshal wrote
// for the same values (keys in the same order, maps sorted, raw values
// compacted and checked), except that <, > and & inside raw values are
// not turned into \u escapes: the same JSON. TestInvocationMatchesEncodingJSON
// and FuzzToolParams hold it.

// invocationJSON is the input of kadu_handle, as encoding/json would write
// it; appendInvocation is the encoder used on calls.
type invocationJSON struct {
	Op             string                     `json:"op"`
	Params         json.RawMessage            `json:"params"`
	InputResponses map[string]json.RawMessage `json:"input_responses,omitempty"`
	State          json.RawMessage            `json:"state,omitempty"`
	Client         clientJSON                 `json:"client"`
}

type clientJSON struct {
	Capabilities    map[string]json.RawMessage `json:"capabilities"`
	ProtocolVersion string                     `json:"protocol_version"`
}

// appendInvocation appends the invocation JSON of inv to buf. params must
// be one JSON value (it is compacted, and refused when it is not JSON), as
// must every raw value of the maps.
func appendInvocation(buf []byte, inv *invocationJSON) ([]byte, error) {
	var err error
	buf = append(buf, `{"op":`...)
	buf = appendString(buf, inv.Op)
	buf = append(buf, `,"params":`...)
	if buf, err = appendRaw(buf, inv.Params); err != nil {
		return nil, fmt.Errorf("params: %w", err)
	}
	if len(inv.InputResponses) > 0 {
		buf = append(buf, `,"input_responses":`...)
		if buf, err = appendRawMap(buf, inv.InputResponses); err != nil {
			return nil, fmt.Errorf("input_responses: %w", err)
		}
	}
	if len(inv.State) > 0 {
		buf = append(buf, `,"state":`...)
		if buf, err = appendRaw(buf, inv.State); err != nil {
			return nil, fmt.Errorf("state: %w", err)
		}
	}
	buf = append(buf, `,"client":{"capabilities":`...)
	if buf, err = appendRawMap(buf, inv.Client.Capabilities); err != nil {
		return nil, fmt.Errorf("client capabilities: %w", err)
	}
	buf = append(buf, `,"protocol_version":`...)
	buf = appendString(buf, inv.Client.ProtocolVersion)
	return append(buf, "}}"...), nil
}

// appendToolParams appends the params of tools/call: the tool's name and
// its arguments, one JSON value.
func appendToolParams(buf []byte, name string, args json.RawMessage) ([]byte, error) {
	buf = append(buf, `{"name":`...)
	buf = appendString(buf, name)
	buf = append(buf, `,"arguments":`...)
	buf, err := appendRaw(buf, args)
	if err != nil {
		return nil, fmt.Errorf("arguments: %w", err)
	}
	return append(buf, '}'), nil
}

// appendRaw appends one JSON value compacted, "null" for an empty one,
// as encoding/json writes a json.RawMessage.
func appendRaw(buf []byte, raw json.RawMessage) ([]byte, error) {
	if len(raw) == 0 {
		return append(buf, "null"...), nil
	}
	b := bytes.NewBuffer(buf)
	if err := json.Compact(b, raw); err != nil {
		return buf, err
	}
	return b.Bytes(), nil
}

// appendRawMap appends a map of raw values with its keys sorted; nil is
// "null".
func appendRawMap(buf []byte, m map[string]json.RawMessage) ([]byte, error) {
	if m == nil {
		return append(buf, "null"...), nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	buf = append(buf, '{')
	for i, k := range keys {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = appendString(buf, k)
		buf = append(buf, ':')
		var err error
		if buf, err = appendRaw(buf, m[k]); err != nil {
			return nil, fmt.Errorf("%q: %w", k, err)
		}
	}
	return append(buf, '}'), nil
}

// appendString appends s as a JSON string. Plain ASCII, the usual case,
// is copied; anything else is left to encoding/json, so escapes are its
// own (HTML-safe, invalid UTF-8 replaced).
func appendString(buf []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(buf, q...)
		}
	}
	buf = append(buf, '"')
	buf = append(buf, s...)
	return append(buf, '"')
}
