package page

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"
)

// Bounds on what the page shows of an operation's result. The full result
// stays available to the model through kadu_approvals_get.
const (
	maxFields     = 8
	maxFieldLen   = 200
	maxMessageLen = 2000
	maxRawLen     = 16 << 10
)

// field is one line of a result summary.
type field struct{ Name, Value string }

// summary is what the page shows of a CallToolResult. Every string is data
// from the operation: templates escape it and never treat it as markup or
// instructions.
type summary struct {
	Failed  bool
	Fields  []field // scalar members of the result object, id and status first
	Message string  // an error's title and detail, or a result that is not an object
	Raw     string  // the result, indented, for the "full result" disclosure
}

// callToolResult is the part of an MCP CallToolResult the page reads.
type callToolResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
}

// apiErrorBody is the Kadu API's error body (docs/reference/rest.md#conventions), which a failed
// tool returns as text.
type apiErrorBody struct {
	Errors []struct {
		Code   string `json:"code"`
		Title  string `json:"title"`
		Detail string `json:"detail"`
		Param  string `json:"param"`
	} `json:"errors"`
}

// summarize reads an approval's outcome. A missing or unreadable outcome
// gives an empty summary, with Failed as given.
func summarize(outcome json.RawMessage, failed bool) summary {
	s := summary{Failed: failed}
	if len(outcome) == 0 {
		return s
	}
	var r callToolResult
	if err := json.Unmarshal(outcome, &r); err != nil {
		s.Message = clip(string(outcome), maxMessageLen)
		return s
	}
	s.Failed = s.Failed || r.IsError

	// The structured result is the authoritative one; the text is its
	// serialisation, or the API's JSON body, or plain words.
	body := []byte(nil)
	if isObject(r.StructuredContent) {
		body = r.StructuredContent
	}
	var texts []string
	for _, c := range r.Content {
		if c.Type == "text" && c.Text != "" {
			texts = append(texts, c.Text)
		}
	}
	if body == nil && len(texts) == 1 && isObject([]byte(texts[0])) {
		body = []byte(texts[0])
	}
	if body == nil {
		s.Message = clip(strings.Join(texts, "\n\n"), maxMessageLen)
		return s
	}
	s.Raw = indent(body)

	if s.Failed {
		var eb apiErrorBody
		if json.Unmarshal(body, &eb) == nil && len(eb.Errors) > 0 {
			var lines []string
			for _, e := range eb.Errors {
				line := strings.TrimSpace(e.Title + " " + e.Detail)
				if e.Param != "" {
					line = e.Param + ": " + line
				}
				if line == "" {
					line = e.Code
				}
				lines = append(lines, line)
			}
			s.Message = clip(strings.Join(lines, "\n"), maxMessageLen)
			return s
		}
	}
	s.Fields = scalarFields(body)
	return s
}

// scalarFields lists the string, number and boolean members of a JSON
// object: id and status first, then the others in name order, at most
// maxFields.
func scalarFields(obj []byte) []field {
	var m map[string]json.RawMessage
	if json.Unmarshal(obj, &m) != nil {
		return nil
	}
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	rank := func(k string) int {
		switch k {
		case "id":
			return 0
		case "status":
			return 1
		}
		return 2
	}
	slices.SortFunc(names, func(a, b string) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra - rb
		}
		return strings.Compare(a, b)
	})
	var out []field
	for _, k := range names {
		if len(out) == maxFields {
			break
		}
		v := bytes.TrimSpace(m[k])
		if len(v) == 0 {
			continue
		}
		switch v[0] {
		case '"':
			var str string
			if json.Unmarshal(v, &str) != nil || str == "" {
				continue
			}
			out = append(out, field{Name: clip(k, maxFieldLen), Value: clip(str, maxFieldLen)})
		case '{', '[', 'n':
			// Objects, arrays and nulls stay in the full result.
		default:
			out = append(out, field{Name: clip(k, maxFieldLen), Value: clip(string(v), maxFieldLen)})
		}
	}
	return out
}

// indent returns JSON indented for reading, clipped.
func indent(raw []byte) string {
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return clip(string(raw), maxRawLen)
	}
	return clip(buf.String(), maxRawLen)
}

func isObject(raw []byte) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{' && json.Valid(raw)
}

// clip shortens s to at most n runes, marking the cut, and replaces
// invalid UTF-8.
func clip(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
