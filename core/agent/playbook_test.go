package agent

import (
	"encoding/json"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestValidatePlaybookRejects(t *testing.T) {
	tests := []struct {
		name     string
		playbook string
		wantPath string // path of one expected problem
		wantMsg  string // part of its message
	}{
		{name: "absent", playbook: ``, wantPath: "", wantMsg: "no playbook"},
		{name: "null", playbook: `null`, wantPath: "", wantMsg: "no playbook"},
		{name: "not JSON", playbook: `{"steps": [`, wantPath: "", wantMsg: "unexpected end"},
		{name: "not an object", playbook: `[1]`, wantPath: "", wantMsg: "want an object"},
		{name: "trailing data", playbook: `{"steps":[{"type":"ask","params":{"prompt":"x"}}]} {}`, wantPath: "", wantMsg: "after the JSON value"},
		{name: "unknown top-level member", playbook: `{"steps": [], "stpes": []}`, wantPath: "stpes", wantMsg: "unknown member"},
		{name: "wrong version", playbook: `{"version": 2, "steps": [{"type":"ask","params":{"prompt":"x"}}]}`, wantPath: "version", wantMsg: "unsupported version 2"},
		{name: "no steps", playbook: `{"steps": []}`, wantPath: "steps", wantMsg: "at least one step"},
		{name: "too many steps", playbook: `{"steps": [` + strings.Repeat(`{"type":"ask","params":{"prompt":"x"}},`, 50) + `{"type":"ask","params":{"prompt":"x"}}]}`, wantPath: "steps", wantMsg: "at most 50"},
		{name: "unknown step type", playbook: `{"steps": [{"type": "send_email"}]}`, wantPath: "steps[0].type", wantMsg: `unknown step type "send_email"`},
		{name: "missing type", playbook: `{"steps": [{"id": "a"}]}`, wantPath: "steps[0].type", wantMsg: "required"},
		{name: "bad id", playbook: `{"steps": [{"id": "Read-It", "type": "ask", "params": {"prompt": "x"}}]}`, wantPath: "steps[0].id", wantMsg: "lower-case"},
		{name: "duplicate id", playbook: `{"steps": [{"id": "a", "type": "ask", "params": {"prompt": "x"}}, {"id": "a", "type": "ask", "params": {"prompt": "y"}}]}`, wantPath: "steps[1].id", wantMsg: "earlier step"},
		{name: "unknown param", playbook: `{"steps": [{"type": "parse_statement", "params": {"source": {"file_index": 0}, "fromat": "csv"}}]}`, wantPath: "steps[0].params.fromat", wantMsg: "unknown member"},
		{name: "param of the wrong type", playbook: `{"steps": [{"type": "parse_statement", "params": {"source": {"file_index": "0"}}}]}`, wantPath: "steps[0].params.source.file_index", wantMsg: "want an integer"},
		{name: "missing source", playbook: `{"steps": [{"type": "parse_statement"}]}`, wantPath: "steps[0].params.source", wantMsg: "exactly one"},
		{name: "two sources", playbook: `{"steps": [{"type": "parse_statement", "params": {"source": {"file_index": 0, "file_name": "*.csv"}}}]}`, wantPath: "steps[0].params.source", wantMsg: "exactly one"},
		{name: "pointer outside input", playbook: `{"steps": [{"type": "parse_statement", "params": {"source": {"pointer": "/statement"}}}]}`, wantPath: "steps[0].params.source.pointer", wantMsg: `starting with "/input"`},
		{name: "pointer syntax", playbook: `{"steps": [{"type": "parse_statement", "params": {"source": {"pointer": "input/x"}}}]}`, wantPath: "steps[0].params.source.pointer", wantMsg: `starts with "/"`},
		{name: "pointer escape", playbook: `{"steps": [{"type": "parse_statement", "params": {"source": {"pointer": "/input/a~2"}}}]}`, wantPath: "steps[0].params.source.pointer", wantMsg: "bad escape"},
		{name: "answer of a later ask", playbook: `{"steps": [{"type": "parse_statement", "params": {"source": {"pointer": "/answers/q/text"}}}, {"id": "q", "type": "ask", "params": {"prompt": "x"}}]}`, wantPath: "steps[0].params.source.pointer", wantMsg: "earlier ask step"},
		{name: "bad glob", playbook: `{"steps": [{"type": "parse_statement", "params": {"source": {"file_name": "[a"}}}]}`, wantPath: "steps[0].params.source.file_name", wantMsg: "pattern"},
		{name: "bad format", playbook: `{"steps": [{"type": "parse_statement", "params": {"source": {"file_index": 0}, "format": "xlsx"}}]}`, wantPath: "steps[0].params.format", wantMsg: `"xlsx"`},
		{name: "bad separator", playbook: `{"steps": [{"type": "parse_statement", "params": {"source": {"file_index": 0}, "separator": "::"}}]}`, wantPath: "steps[0].params.separator", wantMsg: "tab"},
		{name: "period backwards", playbook: `{"steps": [{"type": "parse_statement", "params": {"source": {"file_index": 0}, "period": {"from": "2026-03-31", "to": "2026-03-01"}}}]}`, wantPath: "steps[0].params.period", wantMsg: "after"},
		{name: "categorize first", playbook: `{"steps": [{"type": "categorize"}]}`, wantPath: "steps[0].params", wantMsg: "earlier parse_statement"},
		{name: "bad rule", playbook: `{"steps": [{"type": "parse_statement", "params": {"source": {"file_index": 0}}}, {"type": "categorize", "params": {"rules": [{"category": "x", "keywords": []}]}}]}`, wantPath: "steps[1].params.rules[0].keywords", wantMsg: "at least one"},
		{name: "rule with unknown member", playbook: `{"steps": [{"type": "parse_statement", "params": {"source": {"file_index": 0}}}, {"type": "categorize", "params": {"rules": [{"category": "x", "keywords": ["A"], "regex": "."}]}}]}`, wantPath: "steps[1].params.rules[0].regex", wantMsg: "unknown member"},
		{name: "reconcile without receivables", playbook: `{"steps": [{"type": "parse_statement", "params": {"source": {"file_index": 0}}}, {"type": "reconcile"}]}`, wantPath: "steps[1].params.receivables", wantMsg: "exactly one"},
		{name: "reconcile window", playbook: `{"steps": [{"type": "parse_statement", "params": {"source": {"file_index": 0}}}, {"type": "reconcile", "params": {"receivables": {"file_index": 1}, "date_window_days": 400}}]}`, wantPath: "steps[1].params.date_window_days", wantMsg: "0 to 90"},
		{name: "reconcile percent", playbook: `{"steps": [{"type": "parse_statement", "params": {"source": {"file_index": 0}}}, {"type": "reconcile", "params": {"receivables": {"file_index": 1}, "tolerance_percent": 2.555}}]}`, wantPath: "steps[1].params.tolerance_percent", wantMsg: "two decimals"},
		{name: "summarize language", playbook: `{"steps": [{"type": "parse_statement", "params": {"source": {"file_index": 0}}}, {"type": "summarize", "params": {"language": "fr"}}]}`, wantPath: "steps[1].params.language", wantMsg: `"fr"`},
		{name: "write without content", playbook: `{"steps": [{"type": "parse_statement", "params": {"source": {"file_index": 0}}}, {"type": "write_output"}]}`, wantPath: "steps[1].params.content", wantMsg: "required"},
		{name: "write reconciliation before reconcile", playbook: `{"steps": [{"type": "parse_statement", "params": {"source": {"file_index": 0}}}, {"type": "write_output", "params": {"content": "reconciliation"}}]}`, wantPath: "steps[1].params.content", wantMsg: "earlier reconcile"},
		{name: "write all as CSV", playbook: `{"steps": [{"type": "parse_statement", "params": {"source": {"file_index": 0}}}, {"type": "write_output", "params": {"content": "all"}}]}`, wantPath: "steps[1].params.format", wantMsg: "JSON only"},
		{name: "write path in filename", playbook: `{"steps": [{"type": "parse_statement", "params": {"source": {"file_index": 0}}}, {"type": "write_output", "params": {"content": "transactions", "filename": "../x.csv"}}]}`, wantPath: "steps[1].params.filename", wantMsg: "letters"},
		{name: "ask without prompt", playbook: `{"steps": [{"type": "ask"}]}`, wantPath: "steps[0].params.prompt", wantMsg: "required"},
		{name: "ask nested schema", playbook: `{"steps": [{"type": "ask", "params": {"prompt": "x", "answer_schema": {"type": "object", "properties": {"a": {"type": "object"}}}}}]}`, wantPath: "steps[0].params.answer_schema.properties.a.type", wantMsg: `"string"`},
		{name: "ask required unknown", playbook: `{"steps": [{"type": "ask", "params": {"prompt": "x", "answer_schema": {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["b"]}}}]}`, wantPath: "steps[0].params.answer_schema.required[0]", wantMsg: "not a property"},
		{name: "ask schema keyword", playbook: `{"steps": [{"type": "ask", "params": {"prompt": "x", "answer_schema": {"type": "object", "properties": {"a": {"type": "string", "pattern": "x"}}}}}]}`, wantPath: "steps[0].params.answer_schema.properties.a.pattern", wantMsg: "unknown member"},
		{name: "approve last", playbook: `{"steps": [{"type": "approve", "params": {"prompt": "ok?"}}]}`, wantPath: "steps[0].params", wantMsg: "cannot be the last step"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := ValidatePlaybook(json.RawMessage(tt.playbook))
			var pe *PlaybookError
			if !errors.As(err, &pe) {
				t.Fatalf("ValidatePlaybook() error = %v, want a *PlaybookError", err)
			}
			for _, p := range pe.Problems {
				if p.Path == tt.wantPath && strings.Contains(p.Message, tt.wantMsg) {
					return
				}
			}
			t.Fatalf("ValidatePlaybook() problems = %+v; want %q at %q", pe.Problems, tt.wantMsg, tt.wantPath)
		})
	}
}

func TestValidatePlaybookReportsEveryProblem(t *testing.T) {
	_, err := ValidatePlaybook(json.RawMessage(`{"steps": [{"type": "nope"}, {"type": "ask"}, {"type": "summarize"}]}`))
	var pe *PlaybookError
	if !errors.As(err, &pe) || len(pe.Problems) != 3 {
		t.Fatalf("ValidatePlaybook() = %v; want 3 problems", err)
	}
	if !strings.HasPrefix(err.Error(), "invalid playbook: steps[0].type: unknown step type") {
		t.Errorf("Error() = %q", err)
	}
}

func TestValidatePlaybookAccepts(t *testing.T) {
	tests := []struct {
		name     string
		playbook string
		wantCost int64
	}{
		{name: "reconciliation", playbook: reconciliationPlaybook, wantCost: 30},
		{name: "defaults everywhere", playbook: `{"steps": [{"type": "parse_statement", "params": {"source": {"pointer": "/input/csv"}}}, {"type": "categorize"}, {"type": "summarize"}]}`, wantCost: 9},
		{name: "ask and approve are free", playbook: `{"steps": [{"id": "q", "type": "ask", "params": {"prompt": "Qual período?", "answer_schema": {"type": "object", "properties": {"from": {"type": "string", "format": "date"}, "to": {"type": "string", "format": "date"}}, "required": ["from"]}}}, {"type": "approve", "params": {"prompt": "ok?"}}, {"type": "parse_statement", "params": {"source": {"pointer": "/answers/q/text"}, "period": {"pointer": "/answers/q"}}}]}`, wantCost: 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cost, err := ValidatePlaybook(json.RawMessage(tt.playbook))
			if err != nil || cost != tt.wantCost {
				t.Fatalf("ValidatePlaybook() = %d, %v; want %d, nil", cost, err, tt.wantCost)
			}
		})
	}
}

// TestPlaybooksReferenceCosts keeps the cost table of PLAYBOOKS.md equal to
// the costs the runner charges, and every step type documented.
func TestPlaybooksReferenceCosts(t *testing.T) {
	doc := PlaybooksReference()
	row := regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\| (\\d+) \\|$")
	documented := map[string]int64{}
	for _, m := range row.FindAllStringSubmatch(doc, -1) {
		n, _ := strconv.ParseInt(m[2], 10, 64)
		documented[m[1]] = n
	}
	types := stepTypes()
	if len(documented) != len(types) {
		t.Errorf("PLAYBOOKS.md cost table has %d rows, the runner %d step types", len(documented), len(types))
	}
	for _, st := range types {
		got, ok := documented[st.name]
		if !ok || got != st.cost {
			t.Errorf("PLAYBOOKS.md: %s costs %d (documented: %v), runner charges %d", st.name, got, ok, st.cost)
		}
		if !strings.Contains(doc, "### `"+st.name+"`") {
			t.Errorf("PLAYBOOKS.md has no section for %s", st.name)
		}
	}
}
