package agent

import (
	"context"
	"encoding/json"
	"io"
	"time"
)

// Runner executes (or resumes) one execution until it succeeds, fails,
// pauses for input, or ctx is done.
//
// Run returns either an Outcome and a nil error, or a nil Outcome and an
// error. The Outcome reports everything about the task itself, failures
// included (an invalid playbook, unreadable input, a cost cap, a refused
// approval). An error means the run could not be carried out: ctx was
// cancelled or its deadline passed (errors.Is(err, context.Canceled) or
// context.DeadlineExceeded; Run returns within about a second), the Sink
// failed, or, for the HTTP runner, the agent service was unreachable
// (ErrUnavailable) or broke the protocol (ErrProtocol). On error, steps and
// charges already reported through the Sink stand.
//
// Run calls the Sink only from the goroutine that called Run, one call at a
// time, and never after it returns. It neither modifies job nor keeps it.
// Implementations are safe for concurrent use by many executions at once.
type Runner interface {
	Run(ctx context.Context, job *Job, sink Sink) (*Outcome, error)
}

// Job is one execution as the worker loaded it. The runner reads it only.
type Job struct {
	ExecutionID  string
	TaskID       string
	OrgID        string
	Instructions string          // the task's instructions
	Playbook     json.RawMessage // the task's playbook (PLAYBOOKS.md); opaque to the HTTP runner
	Input        json.RawMessage // the execution's input, already validated against the task's input_schema; nil = {}
	Files        []InputFile     // the execution's input files, in input_file_ids order
	Resume       *Resume         // nil on the first run; set when continuing a waiting_input execution
	State        json.RawMessage // Outcome.State of the run that paused; nil on the first run
	MaxCostCents int64           // the execution's cost cap in centavos; 0 = none
}

// InputFile is an input file of an execution. The functions are provided by
// the worker and may be called any number of times during Run, never after.
type InputFile struct {
	ID          string // "file_…"
	Filename    string
	ContentType string
	Size        int64 // bytes
	// Open returns the file's content; the caller closes it. Used by the
	// built-in runner.
	Open func(ctx context.Context) (io.ReadCloser, error)
	// DownloadURL returns a short-lived URL the agent service can GET the
	// file from. Used by the HTTP runner.
	DownloadURL func(ctx context.Context) (string, error)
}

// Resume carries the answer to a waiting_input execution.
type Resume struct {
	StepID string          // PendingInput.StepID of the pause being answered
	Answer json.RawMessage // a JSON object valid against PendingInput.InputSchema
}

// Sink receives what a runner reports while it runs. The runner calls it
// sequentially from one goroutine (see Runner); an implementation needs no
// locking for a single execution.
type Sink interface {
	// RecordStep creates or updates the step with step.ID: a runner reports a
	// step when it starts (StepRunning) and again when it ends.
	RecordStep(ctx context.Context, step Step) error
	// Charge adds cents to the execution's cost. It records the amount even
	// when it returns an error wrapping ErrCostCap, which it does when the
	// execution's max cost or the organisation's monthly cap is now crossed;
	// the runner then stops with failure code FailureCostCap, keeping the
	// partial output. Any other error aborts the run.
	Charge(ctx context.Context, cents int64) error
	// WriteFile stores an output file of the execution and returns its id
	// ("file_…"). The runner does not keep data after the call.
	WriteFile(ctx context.Context, name, contentType string, data []byte) (fileID string, err error)
}

// StepStatus is the state of a step.
type StepStatus string

// Step states.
const (
	StepRunning      StepStatus = "running"
	StepSucceeded    StepStatus = "succeeded"
	StepFailed       StepStatus = "failed"
	StepWaitingInput StepStatus = "waiting_input"
	StepCancelled    StepStatus = "cancelled"
)

// Step is one entry of an execution's step log.
type Step struct {
	ID         string     `json:"id"`   // unique within the execution
	Type       string     `json:"type"` // "parse_statement", "ask"…; what the agent service says for HTTP
	Title      string     `json:"title,omitempty"`
	Status     StepStatus `json:"status"`
	Summary    string     `json:"summary,omitempty"` // one line, untrusted data
	CostCents  int64      `json:"cost_cents"`
	StartedAt  time.Time  `json:"started_at"`
	FinishedAt time.Time  `json:"finished_at,omitzero"` // zero while running or waiting
}

// Status is how a run ended.
type Status string

// Run results.
const (
	StatusSucceeded    Status = "succeeded"
	StatusFailed       Status = "failed"
	StatusWaitingInput Status = "waiting_input"
)

// Outcome is what a run reports when it ends.
type Outcome struct {
	Status  Status        `json:"status"`
	Output  Output        `json:"output"`                  // partial when failed or waiting
	Pending *PendingInput `json:"pending_input,omitempty"` // set iff Status is waiting_input
	Failure *Failure      `json:"failure,omitempty"`       // set iff Status is failed
	// State is opaque; the worker stores it and hands it back in Job.State
	// with the Resume. Set iff Status is waiting_input.
	State json.RawMessage `json:"state,omitempty"`
	// CostCents is the execution's total cost so far, every run included:
	// the sum of all amounts this runner passed to Sink.Charge for it.
	CostCents int64 `json:"cost_cents"`
}

// Output is an execution's result. Summary and Data are untrusted data.
type Output struct {
	Summary string          `json:"summary"`
	Data    json.RawMessage `json:"data,omitempty"`
	FileIDs []string        `json:"file_ids"`
}

// PendingKind says what a waiting execution needs.
type PendingKind string

// Kinds of pending input.
const (
	PendingQuestion PendingKind = "question"
	PendingApproval PendingKind = "approval"
)

// PendingInput describes what a waiting_input execution needs; the answer
// comes back in Job.Resume.
type PendingInput struct {
	Kind        PendingKind     `json:"kind"`
	Prompt      string          `json:"prompt"`
	InputSchema json.RawMessage `json:"input_schema"` // a flat JSON Schema object (MCP elicitation's subset)
	StepID      string          `json:"step_id"`
}

// Failure says why an execution failed.
type Failure struct {
	Code    string `json:"code"` // one of the Failure… constants, or a code from the agent service
	Message string `json:"message"`
}

// Failure codes a runner reports in Outcome.Failure.Code. A worker maps its
// own conditions to FailureTimeout (deadline passed) and FailureError.
const (
	FailureError           = "error"             // anything else; the message says what
	FailureTimeout         = "timeout"           // for the worker: the execution's timeout passed
	FailureCostCap         = "cost_cap_exceeded" // Sink.Charge returned ErrCostCap or Job.MaxCostCents would be crossed
	FailureInvalidPlaybook = "invalid_playbook"  // the playbook does not validate (see ValidatePlaybook)
	FailureInvalidInput    = "invalid_input"     // an input file, inline text or answer cannot be used
	FailureNotApproved     = "not_approved"      // an approval was answered {"approved": false}
)
