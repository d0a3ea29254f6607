package jobs

import (
	"encoding/json"
	"fmt"
)

// RunnerState is what an execution's runner_state column holds: the
// runner's opaque state from its last pause.
type RunnerState struct {
	Runner json.RawMessage `json:"runner,omitempty"` // agent.Outcome.State
}

// ResumeAnswer is the answer to a waiting_input execution. It travels in
// the job that resumes the execution, so a retried job still carries it.
type ResumeAnswer struct {
	StepID string          `json:"step_id"`
	Answer json.RawMessage `json:"answer"`
}

// ParseRunnerState decodes a runner_state column; empty is the zero state.
func ParseRunnerState(raw json.RawMessage) (RunnerState, error) {
	var s RunnerState
	if len(raw) == 0 || string(raw) == "null" {
		return s, nil
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return s, fmt.Errorf("runner state: %w", err)
	}
	return s, nil
}

// Encode returns the column value.
func (s RunnerState) Encode() json.RawMessage {
	b, _ := json.Marshal(s) // plain structs of JSON values: cannot fail
	return b
}
