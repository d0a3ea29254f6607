package kadu

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/kobana/kadu/sdk/go/kadu/manifest"
)

// MaxStateBytes is the most state InputRequired may carry, as JSON.
const MaxStateBytes = 16 << 10

// Methods of an input request.
const (
	MethodElicit    = "elicitation/create"
	MethodSample    = "sampling/createMessage"
	MethodListRoots = "roots/list"
)

// InputRequest is one thing a handler asks the client for: an MCP request
// (Method and its Params) that the client answers before retrying.
type InputRequest struct {
	Method string `json:"method"`
	Params any    `json:"params"`
}

// Elicit returns a form elicitation: message for the person, and the
// JSON Schema of the answer (a flat object of primitive properties, as
// MCP requires).
func Elicit(message string, requestedSchema json.RawMessage) InputRequest {
	return InputRequest{Method: MethodElicit, Params: map[string]any{
		"mode":            "form",
		"message":         message,
		"requestedSchema": requestedSchema,
	}}
}

// InputRequired returns the error a handler returns to ask the client for
// input first. requests maps keys (^[a-zA-Z0-9_.-]{1,64}$) to requests;
// state is any JSON-encodable value of at most MaxStateBytes, handed back
// unchanged on the retry (Call.State) with the answers by key
// (Call.InputResponse). The host seals state: the client can neither read
// nor change it.
//
// The host answers -32021 instead when the client did not declare the
// capability a request needs; see Call.HasCapability.
func InputRequired(requests map[string]InputRequest, state any) error {
	return &inputRequired{requests: requests, state: state}
}

type inputRequired struct {
	requests map[string]InputRequest
	state    any
}

func (e *inputRequired) Error() string {
	return "kadu: input required: " + fmt.Sprint(slices.Sorted(maps.Keys(e.requests)))
}

// inputRequiredResult is the wire form (sdk/ABI.md §9).
type inputRequiredResult struct {
	ResultType    string                  `json:"resultType"`
	InputRequests map[string]InputRequest `json:"inputRequests"`
	State         json.RawMessage         `json:"state"`
}

// encode checks e and returns its result JSON. An error is a bug in the
// bundle.
func (e *inputRequired) encode() ([]byte, error) {
	if len(e.requests) == 0 {
		return nil, errors.New("InputRequired: no requests")
	}
	reqs := make(map[string]InputRequest, len(e.requests))
	for _, k := range slices.Sorted(maps.Keys(e.requests)) {
		r := e.requests[k]
		if r.Params == nil {
			r.Params = struct{}{} // roots/list takes no params: send {}, not null
		}
		reqs[k] = r
		if !manifest.IsEntryName(k) {
			return nil, fmt.Errorf("InputRequired: key %q: want ^[a-zA-Z0-9_.-]{1,64}$", k)
		}
		switch m := e.requests[k].Method; m {
		case MethodElicit, MethodSample, MethodListRoots:
		default:
			return nil, fmt.Errorf("InputRequired: request %q: method %q: want %s, %s or %s", k, m, MethodElicit, MethodSample, MethodListRoots)
		}
	}
	state, err := marshal(e.state)
	if err != nil {
		return nil, fmt.Errorf("InputRequired: encoding state: %w", err)
	}
	if len(state) > MaxStateBytes {
		return nil, fmt.Errorf("InputRequired: state is %d bytes; the most is %d", len(state), MaxStateBytes)
	}
	return marshal(inputRequiredResult{ResultType: "input_required", InputRequests: reqs, State: state})
}
