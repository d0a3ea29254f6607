package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// askStep pauses the execution with a question (waiting_input, kind
// "question"); the answer is kept under /answers/<step id> for later steps.
type askStep struct {
	Prompt       string        `json:"prompt"`
	AnswerSchema *answerSchema `json:"answer_schema"` // default: {"answer": string}, required
}

// approveStep pauses the execution for an approval (waiting_input, kind
// "approval") of the steps after it. {"approved": false} ends the execution
// with FailureNotApproved.
type approveStep struct {
	Prompt string `json:"prompt"`
}

const maxPrompt = 2000

func validatePrompt(v *validation, at, prompt string) {
	switch {
	case strings.TrimSpace(prompt) == "":
		v.addf(at+".prompt", "required")
	case len(prompt) > maxPrompt:
		v.addf(at+".prompt", "at most %d bytes", maxPrompt)
	}
}

func (a *askStep) validate(v *validation, at string) {
	validatePrompt(v, at, a.Prompt)
	if a.AnswerSchema != nil {
		a.AnswerSchema.validate(v, at+".answer_schema")
	}
}

func (a *askStep) schema() *answerSchema {
	if a.AnswerSchema != nil {
		return a.AnswerSchema
	}
	return &answerSchema{
		Type:       "object",
		Properties: map[string]*propertySchema{"answer": {Type: "string", Title: "Answer"}},
		Required:   []string{"answer"},
	}
}

func (a *askStep) run(context.Context, *execution) (string, error) {
	return "", errors.New("ask: runs only as a pause") // the runner never calls it
}

func (a *askStep) pending(_ *execution, s *step) *PendingInput {
	schema, _ := json.Marshal(a.schema())
	return &PendingInput{Kind: PendingQuestion, Prompt: a.Prompt, InputSchema: schema, StepID: s.ID}
}

func (a *askStep) answer(ex *execution, s *step, answer json.RawMessage) (string, string, *Failure) {
	if err := a.schema().check(answer); err != nil {
		return "", err.Error(), nil
	}
	if ex.st.Answers == nil {
		ex.st.Answers = map[string]json.RawMessage{}
	}
	ex.st.Answers[s.ID] = compactJSON(answer)
	return "answered", "", nil
}

func (a *approveStep) validate(v *validation, at string) {
	validatePrompt(v, at, a.Prompt)
	if v.index == v.count-1 {
		v.addf(at, "an approval guards the steps after it: it cannot be the last step")
	}
}

func (a *approveStep) schema() *answerSchema {
	return &answerSchema{
		Type: "object",
		Properties: map[string]*propertySchema{
			"approved": {Type: "boolean", Title: "Approve?"},
			"comment":  {Type: "string", Title: "Comment", MaxLength: ptr(500)},
		},
		Required: []string{"approved"},
	}
}

func ptr[T any](v T) *T { return &v }

func (a *approveStep) run(context.Context, *execution) (string, error) {
	return "", errors.New("approve: runs only as a pause") // the runner never calls it
}

func (a *approveStep) pending(_ *execution, s *step) *PendingInput {
	schema, _ := json.Marshal(a.schema())
	return &PendingInput{Kind: PendingApproval, Prompt: a.Prompt, InputSchema: schema, StepID: s.ID}
}

func (a *approveStep) answer(_ *execution, s *step, answer json.RawMessage) (string, string, *Failure) {
	if err := a.schema().check(answer); err != nil {
		return "", err.Error(), nil
	}
	var v struct {
		Approved bool   `json:"approved"`
		Comment  string `json:"comment"`
	}
	_ = json.Unmarshal(answer, &v) // checked above
	if v.Approved {
		return "approved", "", nil
	}
	msg := fmt.Sprintf("step %q was not approved", s.ID)
	if v.Comment != "" {
		msg += ": " + v.Comment
	}
	return "not approved", "", &Failure{Code: FailureNotApproved, Message: msg}
}

func compactJSON(raw json.RawMessage) json.RawMessage {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return raw
	}
	return buf.Bytes()
}
