package plugin

import (
	"encoding/json"
	"strings"
)

// decodeToolOutputFast decodes a tools/call output that is a plain
// CallToolResult — the shape every call that completes has — without
// encoding/json, whose reflection and re-validation of the raw members
// cost more than the rest of the host's work on a warm call. out is valid
// JSON (instance.call checked it). It reports false for anything it does
// not decode exactly as json.Unmarshal into toolOutput would — a member
// spelled in another case, an escaped key, a resultType, a member of the
// wrong type — and the caller then takes encoding/json, which also says
// what is wrong. FuzzDecodeToolOutput holds the two to the same answer.
func decodeToolOutputFast(out []byte, tr *toolOutput) bool {
	i := skipSpace(out, 0)
	if i >= len(out) || out[i] != '{' {
		return false
	}
	i = skipSpace(out, i+1)
	if i < len(out) && out[i] == '}' {
		return true
	}
	for i < len(out) && out[i] == '"' {
		ke, esc := skipString(out, i)
		if ke < 0 || esc {
			return false
		}
		key := string(out[i+1 : ke-1])
		i = skipSpace(out, ke)
		if i >= len(out) || out[i] != ':' {
			return false
		}
		vs := skipSpace(out, i+1)
		ve := skipValue(out, vs)
		if ve < 0 {
			return false
		}
		v := out[vs:ve]
		switch key {
		case "content":
			if !contentBlocks(v, tr) {
				return false
			}
		case "structuredContent":
			tr.StructuredContent = json.RawMessage(v)
		case "isError":
			switch string(v) {
			case "true":
				tr.IsError = true
			case "false":
				tr.IsError = false
			case "null":
			default:
				return false
			}
		default:
			// Any spelling of a member toolOutput decodes (encoding/json
			// matches names without regard to case) goes the slow way.
			for _, known := range []string{"resultType", "content", "structuredContent", "isError", "inputRequests", "state"} {
				if strings.EqualFold(key, known) {
					return false
				}
			}
		}
		i = skipSpace(out, ve)
		if i < len(out) && out[i] == ',' {
			i = skipSpace(out, i+1)
			continue
		}
		return i < len(out) && out[i] == '}' && skipSpace(out, i+1) == len(out)
	}
	return false
}

// contentBlocks splits the JSON array v into tr.Content, as decoding it
// into []json.RawMessage would; null leaves tr.Content as it is.
func contentBlocks(v []byte, tr *toolOutput) bool {
	if string(v) == "null" {
		return true
	}
	if len(v) == 0 || v[0] != '[' {
		return false
	}
	blocks := tr.Content[:0]
	if blocks == nil {
		blocks = []json.RawMessage{}
	}
	i := skipSpace(v, 1)
	if i < len(v) && v[i] == ']' {
		tr.Content = blocks
		return true
	}
	for i < len(v) {
		end := skipValue(v, i)
		if end < 0 {
			return false
		}
		blocks = append(blocks, json.RawMessage(v[i:end]))
		i = skipSpace(v, end)
		if i < len(v) && v[i] == ',' {
			i = skipSpace(v, i+1)
			continue
		}
		tr.Content = blocks
		return i < len(v) && v[i] == ']'
	}
	return false
}
