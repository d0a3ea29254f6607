package api

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/kobana/kadu/core/agent"
	"github.com/kobana/kadu/core/config"
	"github.com/kobana/kadu/core/store"
)

// TestExampleTasks checks that every example task is ready to run: its
// input_schema compiles, carries at least one example valid against it,
// its playbook validates, and the built-in runner takes the example input
// to the end (answering the pauses) with the numbers we expect.
func TestExampleTasks(t *testing.T) {
	plan := config.Defaults().Plans["developer"]
	tasks := exampleTasks(plan)
	if len(tasks) < 2 {
		t.Fatalf("%d example tasks, want at least 2", len(tasks))
	}
	// Answers to the pauses, by step id.
	answers := map[string]json.RawMessage{
		"periodo":   json.RawMessage(`{"from":"2026-03-01","to":"2026-03-31"}`),
		"aprovacao": json.RawMessage(`{"approved":true}`),
	}
	for _, task := range tasks {
		t.Run(task.Name, func(t *testing.T) {
			schema, err := compileSchema(task.InputSchema)
			if err != nil {
				t.Fatalf("input_schema: %v", err)
			}
			var doc struct {
				Examples []json.RawMessage `json:"examples"`
			}
			if err := json.Unmarshal(task.InputSchema, &doc); err != nil || len(doc.Examples) == 0 {
				t.Fatalf("input_schema has no examples (%v)", err)
			}
			cost, err := agent.ValidatePlaybook(task.Playbook)
			if err != nil {
				t.Fatalf("playbook: %v", err)
			}
			if cost > task.MaxCostCents {
				t.Errorf("playbook costs %d, more than max_cost_cents %d", cost, task.MaxCostCents)
			}
			for i, ex := range doc.Examples {
				if err := validateInput(schema, ex); err != nil {
					t.Fatalf("examples[%d] is not valid against the schema: %v", i, err)
				}
				out, files := runExample(t, task, ex, answers)
				if out.Status != agent.StatusSucceeded {
					t.Fatalf("examples[%d]: status %s, failure %+v", i, out.Status, out.Failure)
				}
				if out.CostCents != cost {
					t.Errorf("examples[%d]: cost %d, want the playbook's %d", i, out.CostCents, cost)
				}
				checkExampleOutput(t, task.Name, out, files)
			}
		})
	}
}

// runExample runs task on input with the built-in runner, answering each
// pause from answers, and returns the final outcome and the files written.
func runExample(t *testing.T, task store.Task, input json.RawMessage, answers map[string]json.RawMessage) (*agent.Outcome, map[string][]byte) {
	t.Helper()
	r := agent.NewBuiltinRunner(nil)
	sink := &exampleSink{files: map[string][]byte{}}
	job := &agent.Job{ExecutionID: "exe_example", TaskID: "tsk_example", OrgID: "org_example",
		Playbook: task.Playbook, Input: input, MaxCostCents: task.MaxCostCents}
	for i, f := range exampleFiles[task.Name] {
		job.Files = append(job.Files, agent.InputFile{
			ID: fmt.Sprintf("file_%032x", 1000+i), Filename: f.Name, ContentType: f.ContentType, Size: int64(len(f.Content)),
			Open: func(context.Context) (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(f.Content)), nil },
		})
	}
	for range 5 {
		out, err := r.Run(context.Background(), job, sink)
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		if out.Status != agent.StatusWaitingInput {
			return out, sink.files
		}
		ans, ok := answers[out.Pending.StepID]
		if !ok {
			t.Fatalf("pause at step %q has no answer in the test", out.Pending.StepID)
		}
		// The answer must satisfy the schema continue validates it with.
		s, err := compileSchema(out.Pending.InputSchema)
		if err != nil {
			t.Fatalf("pending input_schema: %v", err)
		}
		if err := validateAgainst(s, ans, "answer", ""); err != nil {
			t.Fatalf("answer to %s: %v", out.Pending.StepID, err)
		}
		job.State, job.Resume = out.State, &agent.Resume{StepID: out.Pending.StepID, Answer: ans}
	}
	t.Fatal("too many pauses")
	return nil, nil
}

// checkExampleOutput asserts the numbers of each example.
func checkExampleOutput(t *testing.T, name string, out *agent.Outcome, files map[string][]byte) {
	t.Helper()
	switch name {
	case "Conciliação diária", uploadedReconciliationTask: // the same data, inline or uploaded
		rows := readCSV(t, files["conciliacao.csv"])
		status := map[string]string{}
		for _, r := range rows[1:] {
			status[r["receivable_id"]+r["transaction_id"]] = r["status"]
		}
		var matched, unmatched, unexpected int
		for _, r := range rows[1:] {
			switch r["status"] {
			case "matched":
				matched++
			case "unmatched":
				unmatched++
				if r["receivable_id"] != "F-1004" {
					t.Errorf("unmatched %s, want F-1004", r["receivable_id"])
				}
			case "unexpected_credit":
				unexpected++
				if r["credit_cents"] != "30000" {
					t.Errorf("unexpected credit of %s cents, want 30000 (Delta's PIX)", r["credit_cents"])
				}
			}
		}
		if matched != 3 || unmatched != 1 || unexpected != 1 {
			t.Errorf("matched/unmatched/unexpected = %d/%d/%d, want 3/1/1\n%s", matched, unmatched, unexpected, files["conciliacao.csv"])
		}
	case "Resumo de extrato":
		rows := readCSV(t, files["resumo.csv"])
		byCat := map[string]map[string]string{}
		for _, r := range rows[1:] {
			byCat[r["category"]] = r
		}
		if got := byCat["aluguel"]["outflow_cents"]; got != "450000" {
			t.Errorf("aluguel outflow = %q, want 450000\n%s", got, files["resumo.csv"])
		}
		if got := byCat["TOTAL"]["inflow_cents"]; got != "604540" {
			t.Errorf("total inflow = %q, want 604540 (3215,40 + 850,00 + 1980,00)\n%s", got, files["resumo.csv"])
		}
		if len(readCSV(t, files["lancamentos.csv"])) != 11 {
			t.Errorf("lancamentos.csv: want a header and 10 transactions\n%s", files["lancamentos.csv"])
		}
	case "Fechamento do mês com aprovação":
		rows := readCSV(t, files["fechamento.csv"])
		if len(rows) != 7 { // header + the 6 March transactions; April's is outside the period
			t.Errorf("fechamento.csv has %d rows, want 7\n%s", len(rows), files["fechamento.csv"])
		}
	default:
		t.Errorf("no expectations for example %q", name)
	}
	if out.Output.Summary == "" {
		t.Error("empty summary")
	}
}

func readCSV(t *testing.T, data []byte) []map[string]string {
	t.Helper()
	if data == nil {
		t.Fatal("file not written")
	}
	r := csv.NewReader(bytes.NewReader(data))
	r.Comma = ';'
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatalf("reading CSV: %v\n%s", err, data)
	}
	out := make([]map[string]string, 0, len(recs))
	for _, rec := range recs {
		m := map[string]string{}
		for i, h := range recs[0] {
			if i < len(rec) {
				m[strings.TrimPrefix(h, "\ufeff")] = rec[i]
			}
		}
		out = append(out, m)
	}
	return out
}

// exampleSink keeps what the runner writes.
type exampleSink struct {
	files map[string][]byte
	n     int
}

func (s *exampleSink) RecordStep(context.Context, agent.Step) error { return nil }
func (s *exampleSink) Charge(context.Context, int64) error          { return nil }
func (s *exampleSink) WriteFile(_ context.Context, name, _ string, data []byte) (string, error) {
	s.n++
	s.files[name] = append([]byte(nil), data...)
	return fmt.Sprintf("file_%032x", s.n), nil
}
