package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"strings"
	"time"
	"unicode"
)

// The wire types of the agent service protocol (HTTP_RUNNER.md). Requests
// are built from them; responses are decoded strictly into them and checked
// by validate before anything is believed.

type wireCreateRun struct {
	ExecutionID  string          `json:"execution_id"`
	TaskID       string          `json:"task_id"`
	OrgID        string          `json:"org_id"`
	Instructions string          `json:"instructions"`
	Playbook     json.RawMessage `json:"playbook"`
	Input        json.RawMessage `json:"input"`
	Files        []wireInputFile `json:"files"`
	Resume       *wireResume     `json:"resume"`
	State        json.RawMessage `json:"state"`
	MaxCostCents *int64          `json:"max_cost_cents"` // what this run may still spend; null = no cap
}

type wireInputFile struct {
	ID          string `json:"id"`
	Filename    string `json:"filename"`
	ContentType string `json:"content_type"`
	SizeBytes   int64  `json:"size_bytes"`
	DownloadURL string `json:"download_url"`
}

type wireResume struct {
	StepID string          `json:"step_id"`
	Answer json.RawMessage `json:"answer"`
}

// wireRun is the service's view of a run, answered by create and by get.
type wireRun struct {
	RunID        string          `json:"run_id"`
	Status       string          `json:"status"`
	Steps        []wireStep      `json:"steps"`
	Output       *wireOutput     `json:"output"`
	PendingInput *wirePending    `json:"pending_input"`
	Failure      *wireFailure    `json:"failure"`
	CostCents    int64           `json:"cost_cents"`
	State        json.RawMessage `json:"state"`
}

type wireStep struct {
	ID         string    `json:"id"`
	Type       string    `json:"type"`
	Title      string    `json:"title"`
	Status     string    `json:"status"`
	Summary    string    `json:"summary"`
	CostCents  int64     `json:"cost_cents"`
	StartedAt  time.Time `json:"started_at"`
	FinishedAt time.Time `json:"finished_at"`
}

type wireOutput struct {
	Summary string            `json:"summary"`
	Data    json.RawMessage   `json:"data"`
	Files   []wireOutputFiles `json:"files"`
}

type wireOutputFiles struct {
	ID          string `json:"id"`
	Filename    string `json:"filename"`
	ContentType string `json:"content_type"`
	SizeBytes   int64  `json:"size_bytes"`
}

type wirePending struct {
	Kind        string          `json:"kind"`
	Prompt      string          `json:"prompt"`
	InputSchema json.RawMessage `json:"input_schema"`
	StepID      string          `json:"step_id"`
}

type wireFailure struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// wireRejection is the body of a 422 answer to create: the service refuses
// the execution itself (not a protocol problem).
type wireRejection struct {
	Failure wireFailure `json:"failure"`
}

// Limits on what the service may say.
const (
	maxWireSteps     = 200
	maxWireFiles     = 20
	maxWireText      = 4000  // step summaries, prompts, failure messages
	maxWireSummary   = 16384 // output summary
	maxWireCostCents = 1_000_000_000_000
)

// Run statuses of the protocol.
const (
	wireQueued       = "queued"
	wireRunning      = "running"
	wireSucceeded    = "succeeded"
	wireFailed       = "failed"
	wireWaitingInput = "waiting_input"
	wireCancelled    = "cancelled"
)

func (r *wireRun) done() bool { return r.Status != wireQueued && r.Status != wireRunning }

// validate checks a run the service sent; maxFile bounds declared file sizes.
func (r *wireRun) validate(maxFile int64) error {
	if !validWireID(r.RunID) {
		return fmt.Errorf("run_id %q: want 1 to 128 of A-Z a-z 0-9 . _ -", truncateText(r.RunID, 40))
	}
	switch r.Status {
	case wireQueued, wireRunning, wireSucceeded, wireFailed, wireWaitingInput, wireCancelled:
	default:
		return fmt.Errorf("status %q: unknown", truncateText(r.Status, 40))
	}
	if r.CostCents < 0 || r.CostCents > maxWireCostCents {
		return fmt.Errorf("cost_cents %d: out of range", r.CostCents)
	}
	if (r.Status == wireWaitingInput) != (r.PendingInput != nil) {
		return fmt.Errorf("pending_input must be present exactly when status is waiting_input (status %s)", r.Status)
	}
	if (r.Status == wireFailed) != (r.Failure != nil) {
		return fmt.Errorf("failure must be present exactly when status is failed (status %s)", r.Status)
	}
	if len(r.Steps) > maxWireSteps {
		return fmt.Errorf("steps: more than %d", maxWireSteps)
	}
	seen := map[string]bool{}
	for i, s := range r.Steps {
		if err := s.validate(); err != nil {
			return fmt.Errorf("steps[%d]: %w", i, err)
		}
		if seen[s.ID] {
			return fmt.Errorf("steps[%d]: id %q repeated", i, s.ID)
		}
		seen[s.ID] = true
	}
	if p := r.PendingInput; p != nil {
		if p.Kind != string(PendingQuestion) && p.Kind != string(PendingApproval) {
			return fmt.Errorf("pending_input.kind %q: want question or approval", truncateText(p.Kind, 40))
		}
		if err := checkText("pending_input.prompt", p.Prompt, maxWireText, true); err != nil {
			return err
		}
		if !isJSONObject(p.InputSchema) {
			return fmt.Errorf("pending_input.input_schema: want a JSON object")
		}
		if !validWireID(p.StepID) {
			return fmt.Errorf("pending_input.step_id %q: want 1 to 128 of A-Z a-z 0-9 . _ -", truncateText(p.StepID, 40))
		}
	}
	if f := r.Failure; f != nil {
		if !validFailureCode(f.Code) {
			return fmt.Errorf("failure.code %q: want 1 to 64 of a-z and _", truncateText(f.Code, 40))
		}
		if err := checkText("failure.message", f.Message, maxWireText, false); err != nil {
			return err
		}
	}
	if o := r.Output; o != nil {
		if err := checkText("output.summary", o.Summary, maxWireSummary, false); err != nil {
			return err
		}
		if len(o.Files) > maxWireFiles {
			return fmt.Errorf("output.files: more than %d", maxWireFiles)
		}
		for i, f := range o.Files {
			switch {
			case !validWireID(f.ID):
				return fmt.Errorf("output.files[%d].id: want 1 to 128 of A-Z a-z 0-9 . _ -", i)
			case !validOutputName(f.Filename):
				return fmt.Errorf("output.files[%d].filename %q: want 1 to 255 characters, no path separators or control characters", i, truncateText(f.Filename, 40))
			case f.SizeBytes < 0 || f.SizeBytes > maxFile:
				return fmt.Errorf("output.files[%d].size_bytes %d: want 0 to %d", i, f.SizeBytes, maxFile)
			}
			if _, _, err := mime.ParseMediaType(f.ContentType); err != nil {
				return fmt.Errorf("output.files[%d].content_type %q: %v", i, truncateText(f.ContentType, 40), err)
			}
		}
	}
	return nil
}

func (s *wireStep) validate() error {
	if !validWireID(s.ID) {
		return fmt.Errorf("id %q: want 1 to 128 of A-Z a-z 0-9 . _ -", truncateText(s.ID, 40))
	}
	switch StepStatus(s.Status) {
	case StepRunning, StepSucceeded, StepFailed, StepWaitingInput, StepCancelled:
	default:
		return fmt.Errorf("status %q: unknown", truncateText(s.Status, 40))
	}
	if s.CostCents < 0 || s.CostCents > maxWireCostCents {
		return fmt.Errorf("cost_cents %d: out of range", s.CostCents)
	}
	if err := checkText("type", s.Type, 64, true); err != nil {
		return err
	}
	if err := checkText("title", s.Title, 200, false); err != nil {
		return err
	}
	return checkText("summary", s.Summary, maxWireText, false)
}

func validWireID(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '.' && c != '_' && c != '-' {
			return false
		}
	}
	return s != "." && s != ".."
}

func validFailureCode(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 'a' || c > 'z') && c != '_' {
			return false
		}
	}
	return true
}

func validOutputName(s string) bool {
	if s == "" || len(s) > 255 || s == "." || s == ".." {
		return false
	}
	for _, r := range s {
		if r == '/' || r == '\\' || unicode.IsControl(r) {
			return false
		}
	}
	return true
}

// checkText rejects text that is too long or carries control characters
// other than newlines and tabs.
func checkText(name, s string, limit int, required bool) error {
	if required && strings.TrimSpace(s) == "" {
		return fmt.Errorf("%s: required", name)
	}
	if len(s) > limit {
		return fmt.Errorf("%s: longer than %d bytes", name, limit)
	}
	for _, r := range s {
		if unicode.IsControl(r) && r != '\n' && r != '\t' {
			return fmt.Errorf("%s: control character %U", name, r)
		}
	}
	return nil
}

func isJSONObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{' && json.Valid(raw)
}

func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
