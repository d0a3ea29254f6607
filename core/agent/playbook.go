package agent

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
)

// Playbook limits.
const (
	maxSteps    = 50
	maxStepID   = 40
	maxTitleLen = 200
)

// PlaybookError lists what is wrong with a playbook. Each Problem names the
// offending member with a path such as "steps[2].params.source".
type PlaybookError struct {
	Problems []Problem
}

// Problem is one defect of a playbook.
type Problem struct {
	Path    string `json:"path"` // "" for the playbook itself
	Message string `json:"message"`
}

func (e *PlaybookError) Error() string {
	var b strings.Builder
	b.WriteString("invalid playbook: ")
	for i, p := range e.Problems {
		if i == 5 {
			fmt.Fprintf(&b, "; and %d more", len(e.Problems)-5)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		if p.Path != "" {
			b.WriteString(p.Path)
			b.WriteString(": ")
		}
		b.WriteString(p.Message)
	}
	return b.String()
}

// ValidatePlaybook checks a playbook (format in PLAYBOOKS.md) without running
// it and returns the sum of its steps' fixed costs in centavos, the most one
// execution of it can cost. A defective playbook yields a *PlaybookError
// listing every problem found. Safe for concurrent use.
func ValidatePlaybook(raw json.RawMessage) (costCents int64, err error) {
	pb, err := parsePlaybook(raw)
	if err != nil {
		return 0, err
	}
	for _, s := range pb.steps {
		costCents += s.def.cost
	}
	return costCents, nil
}

// playbook is a validated playbook. Immutable after parsePlaybook.
type playbook struct {
	steps  []*step
	digest string // sha256 of the raw playbook, to refuse a resume after an edit
}

// step is one validated step of a playbook.
type step struct {
	ID     string
	Type   string
	Title  string
	def    stepType
	action action
}

// action is the behaviour of a step type, its params decoded into it.
type action interface {
	// validate checks params against the steps before this one; at is the
	// path of the params ("steps[2].params").
	validate(v *validation, at string)
	// run does the step's work on ex and returns the step summary. An
	// *inputError fails the execution with FailureInvalidInput; any other
	// error aborts the run.
	run(ctx context.Context, ex *execution) (summary string, err error)
}

// pauser is an action that waits for an answer instead of running.
type pauser interface {
	action
	pending(ex *execution, s *step) *PendingInput
	// answer applies a resume answer. A non-empty reprompt means the answer
	// was unusable and the step asks again; a non-nil failure ends the run.
	answer(ex *execution, s *step, answer json.RawMessage) (summary, reprompt string, failure *Failure)
}

// stepType describes a step type: its name, fixed cost in centavos, and its
// params with their defaults.
type stepType struct {
	name    string
	cost    int64
	produce string // what it makes available to later steps, "" for nothing
	newArgs func() action
}

// stepTypes lists the step types in the order PLAYBOOKS.md documents them.
// The costs here are the ones PLAYBOOKS.md publishes; a test keeps them equal.
func stepTypes() []stepType {
	return []stepType{
		{name: "parse_statement", cost: 5, produce: "transactions", newArgs: func() action { return &parseStatement{} }},
		{name: "categorize", cost: 2, produce: "categories", newArgs: func() action { return &categorizeStep{} }},
		{name: "reconcile", cost: 10, produce: "reconciliation", newArgs: func() action { return &reconcileStep{} }},
		{name: "summarize", cost: 2, produce: "summary", newArgs: func() action { return &summarizeStep{} }},
		{name: "write_output", cost: 3, newArgs: func() action { return &writeOutput{} }},
		{name: "ask", cost: 0, produce: "answer", newArgs: func() action { return &askStep{} }},
		{name: "approve", cost: 0, newArgs: func() action { return &approveStep{} }},
	}
}

func lookupStepType(name string) (stepType, bool) {
	for _, t := range stepTypes() {
		if t.name == name {
			return t, true
		}
	}
	return stepType{}, false
}

// validation collects problems and knows what earlier steps produce.
type validation struct {
	problems []Problem
	produced map[string]bool   // "transactions", "categories", "reconciliation", "summary"
	types    map[string]string // step id → type, for the steps before the current one
	index    int               // of the current step
	count    int               // steps in the playbook
}

func (v *validation) addf(path, format string, args ...any) {
	v.problems = append(v.problems, Problem{Path: path, Message: fmt.Sprintf(format, args...)})
}

// needs reports a problem at path unless an earlier step produced what.
func (v *validation) needs(path, what, producer string) {
	if !v.produced[what] {
		v.addf(path, "needs an earlier %s step", producer)
	}
}

type rawPlaybook struct {
	Version     *int              `json:"version"`
	Description string            `json:"description"`
	Steps       []json.RawMessage `json:"steps"`
}

type rawStep struct {
	ID     string          `json:"id"`
	Type   string          `json:"type"`
	Title  string          `json:"title"`
	Params json.RawMessage `json:"params"`
}

func parsePlaybook(raw json.RawMessage) (*playbook, error) {
	v := &validation{produced: map[string]bool{}, types: map[string]string{}}
	fail := func() (*playbook, error) { return nil, &PlaybookError{Problems: v.problems} }
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		v.addf("", "the task has no playbook")
		return fail()
	}
	var rp rawPlaybook
	if err := decodeStrict(trimmed, &rp); err != nil {
		v.addf(jsonErrPath("", err), "%s", jsonErrMessage(err))
		return fail()
	}
	if rp.Version != nil && *rp.Version != 1 {
		v.addf("version", "unsupported version %d (want 1)", *rp.Version)
	}
	switch {
	case len(rp.Steps) == 0:
		v.addf("steps", "at least one step")
	case len(rp.Steps) > maxSteps:
		v.addf("steps", "at most %d steps, got %d", maxSteps, len(rp.Steps))
	}
	if len(v.problems) > 0 {
		return fail()
	}
	sum := sha256.Sum256(trimmed)
	pb := &playbook{digest: hex.EncodeToString(sum[:])}
	v.count = len(rp.Steps)
	for i, rawS := range rp.Steps {
		at := fmt.Sprintf("steps[%d]", i)
		v.index = i
		var rs rawStep
		if err := decodeStrict(rawS, &rs); err != nil {
			v.addf(jsonErrPath(at, err), "%s", jsonErrMessage(err))
			continue
		}
		def, ok := lookupStepType(rs.Type)
		if !ok {
			if rs.Type == "" {
				v.addf(at+".type", "required (one of %s)", typeNames())
			} else {
				v.addf(at+".type", "unknown step type %q (want one of %s)", rs.Type, typeNames())
			}
			continue
		}
		s := &step{ID: rs.ID, Type: rs.Type, Title: rs.Title, def: def}
		if s.ID == "" {
			s.ID = fmt.Sprintf("%s_%d", rs.Type, i+1)
		}
		switch {
		case !validStepID(s.ID):
			v.addf(at+".id", "want 1 to %d lower-case letters, digits and underscores, starting with a letter; got %q", maxStepID, s.ID)
		case v.types[s.ID] != "":
			v.addf(at+".id", "%q is the id of an earlier step", s.ID)
		}
		if len(s.Title) > maxTitleLen {
			v.addf(at+".title", "at most %d characters", maxTitleLen)
		}
		s.action = def.newArgs()
		params := rs.Params
		if len(bytes.TrimSpace(params)) == 0 || bytes.Equal(bytes.TrimSpace(params), []byte("null")) {
			params = json.RawMessage("{}")
		}
		if err := decodeStrict(params, s.action); err != nil {
			v.addf(jsonErrPath(at+".params", err), "%s", jsonErrMessage(err))
		} else {
			s.action.validate(v, at+".params")
		}
		v.types[s.ID] = s.Type
		if def.produce != "" {
			v.produced[def.produce] = true
		}
		pb.steps = append(pb.steps, s)
	}
	if len(v.problems) > 0 {
		return fail()
	}
	return pb, nil
}

func typeNames() string {
	var names []string
	for _, t := range stepTypes() {
		names = append(names, t.name)
	}
	return strings.Join(names, ", ")
}

func validStepID(id string) bool {
	if id == "" || len(id) > maxStepID || id[0] < 'a' || id[0] > 'z' {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}
