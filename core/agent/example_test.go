package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/kobana/kadu/core/agent"
)

// printSink is the smallest Sink: a worker would persist steps, meter cost
// against the plan and store files instead.
type printSink struct{ files int }

func (s *printSink) RecordStep(_ context.Context, st agent.Step) error {
	if st.Status != agent.StepRunning {
		fmt.Printf("step %s: %s (%d centavos)\n", st.ID, st.Status, st.CostCents)
	}
	return nil
}

func (s *printSink) Charge(context.Context, int64) error { return nil }

func (s *printSink) WriteFile(_ context.Context, name, _ string, data []byte) (string, error) {
	s.files++
	fmt.Printf("file %s: %d bytes\n", name, len(data))
	return fmt.Sprintf("file_%d", s.files), nil
}

// A worker runs an execution with the built-in runner, then answers the
// approval it pauses for.
func ExampleBuiltinRunner() {
	playbook := json.RawMessage(`{"steps": [
		{"id": "statement", "type": "parse_statement", "params": {"source": {"pointer": "/input/statement"}}},
		{"id": "summary", "type": "summarize", "params": {"top_categories": 0}},
		{"id": "confirm", "type": "approve", "params": {"prompt": "Write the file?"}},
		{"id": "file", "type": "write_output", "params": {"content": "transactions"}}
	]}`)
	input := json.RawMessage(`{"statement": "Data;Histórico;Valor\n02/03/2026;PIX RECEBIDO ACME;1.500,00\n05/03/2026;TARIFA PACOTE;-45,90\n"}`)
	runner := agent.NewBuiltinRunner(nil)
	sink := &printSink{}
	job := &agent.Job{ExecutionID: "exe_1", Playbook: playbook, Input: input}

	out, err := runner.Run(context.Background(), job, sink)
	if err != nil {
		panic(err)
	}
	fmt.Println(out.Status, out.Pending.Kind, out.Pending.Prompt)
	fmt.Println(out.Output.Summary)

	// Later: the person approved. The worker hands back the saved state.
	job.State = out.State
	job.Resume = &agent.Resume{StepID: out.Pending.StepID, Answer: json.RawMessage(`{"approved": true}`)}
	out, err = runner.Run(context.Background(), job, sink)
	if err != nil {
		panic(err)
	}
	fmt.Println(out.Status, out.CostCents, out.Output.FileIDs)
	// Output:
	// step statement: succeeded (5 centavos)
	// step summary: succeeded (2 centavos)
	// step confirm: waiting_input (0 centavos)
	// waiting_input approval Write the file?
	// 2 transactions from 2026-03-02 to 2026-03-05: inflow R$ 1.500,00, outflow R$ 45,90, net R$ 1.454,10.
	// step confirm: succeeded (0 centavos)
	// file transactions.csv: 178 bytes
	// step file: succeeded (3 centavos)
	// succeeded 10 [file_1]
}

// The API checks a playbook when a task is saved, and learns the most one
// execution of it can cost.
func ExampleValidatePlaybook() {
	_, err := agent.ValidatePlaybook(json.RawMessage(`{"steps": [{"type": "categorize"}, {"type": "teleport"}]}`))
	var pe *agent.PlaybookError
	if errors.As(err, &pe) {
		for _, p := range pe.Problems {
			fmt.Printf("%s: %s\n", p.Path, p.Message)
		}
	}
	cost, err := agent.ValidatePlaybook(json.RawMessage(`{"steps": [
		{"type": "parse_statement", "params": {"source": {"file_index": 0}}},
		{"type": "summarize"}]}`))
	fmt.Println(cost, err)
	// Output:
	// steps[0].params: needs an earlier parse_statement step
	// steps[1].type: unknown step type "teleport" (want one of parse_statement, categorize, reconcile, summarize, write_output, ask, approve)
	// 7 <nil>
}
