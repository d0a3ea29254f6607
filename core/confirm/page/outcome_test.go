package page

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSummarize(t *testing.T) {
	tests := []struct {
		name        string
		outcome     string
		failed      bool
		wantFailed  bool
		wantFields  []field
		wantMessage string
		wantRaw     bool
	}{
		{
			name:       "execution enqueued, as text",
			outcome:    `{"content":[{"type":"text","text":"{\"task_id\":\"tsk_1\",\"status\":\"queued\",\"id\":\"exe_1\",\"input\":{\"a\":1},\"cost\":null}"}]}`,
			wantFields: []field{{"id", "exe_1"}, {"status", "queued"}, {"task_id", "tsk_1"}},
			wantRaw:    true,
		},
		{
			name:       "structured content wins over text",
			outcome:    `{"content":[{"type":"text","text":"{\"id\":\"from-text\"}"}],"structuredContent":{"id":"from-structured","deleted":true,"count":3}}`,
			wantFields: []field{{"id", "from-structured"}, {"count", "3"}, {"deleted", "true"}},
			wantRaw:    true,
		},
		{
			name:        "API error body",
			outcome:     `{"content":[{"type":"text","text":"{\"status\":422,\"errors\":[{\"code\":\"validation_error\",\"title\":\"Invalid input.\",\"detail\":\"must be an object\",\"param\":\"input\"},{\"code\":\"x\"}]}"}],"isError":true}`,
			wantFailed:  true,
			wantMessage: "input: Invalid input. must be an object\nx",
			wantRaw:     true,
		},
		{
			name:        "plain text error",
			outcome:     `{"content":[{"type":"text","text":"the task was deleted"}],"isError":true}`,
			wantFailed:  true,
			wantMessage: "the task was deleted",
		},
		{
			name:       "failed status without isError",
			outcome:    `{"content":[{"type":"text","text":"{\"reason\":\"tool_unavailable\"}"}]}`,
			failed:     true,
			wantFailed: true,
			wantFields: []field{{"reason", "tool_unavailable"}},
			wantRaw:    true,
		},
		{
			name:        "several text blocks",
			outcome:     `{"content":[{"type":"text","text":"one"},{"type":"image","data":"…"},{"type":"text","text":"two"}]}`,
			wantMessage: "one\n\ntwo",
		},
		{name: "no outcome", outcome: ``},
		{name: "not JSON", outcome: `<html>`, wantMessage: "<html>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := summarize(json.RawMessage(tt.outcome), tt.failed)
			if got.Failed != tt.wantFailed || got.Message != tt.wantMessage || !reflect.DeepEqual(got.Fields, tt.wantFields) ||
				(got.Raw != "") != tt.wantRaw {
				t.Errorf("summarize() = %+v\nwant failed %v, fields %v, message %q, raw %v", got, tt.wantFailed, tt.wantFields, tt.wantMessage, tt.wantRaw)
			}
		})
	}
}

func TestSummarizeBoundsWhatItShows(t *testing.T) {
	obj := map[string]any{"id": strings.Repeat("é", 500)}
	for i := range 20 {
		obj[string(rune('a'+i))] = i
	}
	raw, _ := json.Marshal(map[string]any{"structuredContent": obj, "content": []any{}})
	s := summarize(raw, false)
	if len(s.Fields) != maxFields || s.Fields[0].Name != "id" || utf8.RuneCountInString(s.Fields[0].Value) != maxFieldLen {
		t.Errorf("fields = %d, first %q (%d runes); want %d fields, id first, clipped to %d runes",
			len(s.Fields), s.Fields[0].Name, utf8.RuneCountInString(s.Fields[0].Value), maxFields, maxFieldLen)
	}
	long, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": strings.Repeat("x", 10*maxMessageLen)}}})
	if s := summarize(long, false); utf8.RuneCountInString(s.Message) != maxMessageLen || !strings.HasSuffix(s.Message, "…") {
		t.Errorf("a long message is %d runes, want clipped to %d with a mark", utf8.RuneCountInString(s.Message), maxMessageLen)
	}
}

func FuzzSummarize(f *testing.F) {
	for _, s := range []string{
		`{"content":[{"type":"text","text":"{\"id\":\"exe_1\"}"}]}`,
		`{"structuredContent":{"a":[1,2],"b":"x"},"isError":true}`,
		`{"content":[{"type":"text","text":"{\"errors\":[{}]}"}],"isError":true}`,
		`{"content":null}`, `[]`, `"x"`, `{"content":[{"type":"text","text":"\u0000\ud800"}]}`,
	} {
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, raw []byte, failed bool) {
		s := summarize(raw, failed)
		if failed && !s.Failed {
			t.Fatalf("a failed outcome summarized as success")
		}
		if len(s.Fields) > maxFields || utf8.RuneCountInString(s.Message) > maxMessageLen || utf8.RuneCountInString(s.Raw) > maxRawLen {
			t.Fatalf("summary exceeds its bounds: %d fields, message %d, raw %d", len(s.Fields), len(s.Message), len(s.Raw))
		}
		for _, str := range append([]string{s.Message, s.Raw}, fieldStrings(s.Fields)...) {
			if !utf8.ValidString(str) {
				t.Fatalf("summary holds invalid UTF-8: %q", str)
			}
		}
	})
}

func fieldStrings(fs []field) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Name, f.Value)
	}
	return out
}
