package agent

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
)

// FuzzValidatePlaybook checks that the playbook parser never panics, that
// it reports defects as *PlaybookError, and that a playbook it accepts runs
// (on an empty job) to an Outcome without panicking.
func FuzzValidatePlaybook(f *testing.F) {
	for _, s := range []string{
		reconciliationPlaybook, approvalPlaybook,
		`{"steps": [{"type": "ask", "params": {"prompt": "x", "answer_schema": {"type": "object", "properties": {"a": {"type": "string"}}}}}]}`,
		`{"steps": [{"type": "parse_statement", "params": {"source": {"pointer": "/input/s"}, "period": {"from": "2026-01-01"}}}, {"type": "categorize", "params": {"rules": [{"category": "x", "keywords": ["A*"]}]}}]}`,
		`{"version": 2}`, `[]`, `null`, `{"steps": [{}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cost, err := ValidatePlaybook(data)
		if err != nil {
			var pe *PlaybookError
			if !errors.As(err, &pe) || len(pe.Problems) == 0 {
				t.Fatalf("error %v is not a *PlaybookError with problems", err)
			}
			return
		}
		if cost < 0 {
			t.Fatalf("negative cost %d", cost)
		}
		out, err := NewBuiltinRunner(&BuiltinOptions{MaxInputBytes: 1 << 16}).Run(context.Background(),
			&Job{Playbook: data, Input: json.RawMessage(`{"s": "Data;Valor\n01/01/2026;1,00\n"}`)}, newMemSink())
		if err != nil || out == nil {
			t.Fatalf("Run() = %v, %v", out, err)
		}
		if out.CostCents > cost {
			t.Fatalf("charged %d, more than the playbook's %d", out.CostCents, cost)
		}
	})
}

// FuzzWireRun checks that decoding and validating an agent service answer
// never panics and that an accepted answer is self-consistent.
func FuzzWireRun(f *testing.F) {
	for _, s := range []string{
		`{"run_id":"r","status":"running","cost_cents":0}`,
		`{"run_id":"r","status":"waiting_input","cost_cents":1,"pending_input":{"kind":"question","prompt":"p","input_schema":{},"step_id":"s"}}`,
		`{"run_id":"r","status":"failed","cost_cents":1,"failure":{"code":"error","message":"m"},"steps":[{"id":"a","type":"t","status":"failed","cost_cents":0,"started_at":"2026-01-01T00:00:00Z"}]}`,
		`{"run_id":"r","status":"succeeded","cost_cents":1,"output":{"summary":"s","data":[1],"files":[{"id":"f","filename":"a.csv","content_type":"text/csv","size_bytes":3}]}}`,
		`{"run_id":"","status":""}`, `{`, `[]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var run wireRun
		if decodeStrict(data, &run) != nil {
			return
		}
		if run.validate(1<<20) != nil {
			return
		}
		if (run.Status == wireWaitingInput) != (run.PendingInput != nil) || (run.Status == wireFailed) != (run.Failure != nil) || run.CostCents < 0 {
			t.Fatalf("accepted an inconsistent run: %+v", run)
		}
	})
}
