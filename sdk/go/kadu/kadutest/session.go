package kadutest

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/kobana/kadu/sdk/go/kadu/internal/abi"
)

// phase is which export is running (sdk/ABI.md §4: what host functions
// do outside kadu_handle).
type phase int

const (
	phaseInit     phase = iota // _initialize
	phaseDescribe              // kadu_describe
	phaseHandle                // kadu_handle
)

func (p phase) String() string {
	return [...]string{"_initialize", "kadu_describe", "kadu_handle"}[p]
}

// session is one export call's host state: the invocation's input and
// output, the last API response and the count of api calls. It is the
// abi.Host of a native call; the wasm host functions call the same methods
// with slices of guest memory.
type session struct {
	h      *Host
	routes []string // manifest ∩ grant
	phase  phase

	input     []byte
	output    []byte
	outputSet bool
	tooLarge  bool

	resp  []byte // the last API response body; nil before the first call
	calls int
}

var _ abi.Host = (*session)(nil)

// maxManifest caps kadu_describe's output, and kadu_handle's when the Host
// sets no OutputCap (sdk/ABI.md §11).
const maxManifest = 1 << 20

// trap is what a host function panics with where the ABI says the guest
// traps (memory out of range): under wazero it is a trap.
type trap string

func (s *session) InputRead(buf []byte) int32 {
	if len(buf) < len(s.input) {
		return -1
	}
	return int32(copy(buf, s.input))
}

func (s *session) OutputWrite(b []byte) int32 {
	if s.phase == phaseInit {
		return 0 // accepted and ignored
	}
	limit := maxManifest
	if s.phase == phaseHandle && s.h.OutputCap > 0 {
		limit = s.h.OutputCap
	}
	if len(b) > limit {
		s.tooLarge, s.output, s.outputSet = true, nil, false
		return -1
	}
	s.output, s.outputSet = bytes.Clone(b), len(b) > 0
	return 0
}

func (s *session) API(method, path string, body []byte) int64 {
	var status int
	var resp []byte
	if s.phase == phaseHandle {
		s.calls++
		status, resp = s.h.serve(s.routes, s.calls, method, path, body)
	} else {
		status, resp = refusal(403, "route_not_granted", "No caller",
			"api() is only available in kadu_handle.", "Call the API from a handler.")
	}
	s.resp = resp
	return int64(status)<<32 | int64(uint32(len(resp)))
}

func (s *session) APIRead(buf []byte) int32 {
	if len(buf) < len(s.resp) {
		return -1
	}
	return int32(copy(buf, s.resp))
}

func (s *session) CallerInfo(buf []byte) int32 {
	b := []byte("null")
	if s.phase == phaseHandle {
		b = s.h.callerJSON()
	}
	if len(buf) >= len(b) {
		copy(buf, b)
	}
	return int32(len(b))
}

func (s *session) ConfigGet(key string, buf []byte) int32 {
	v, ok := s.h.Config[key]
	if !ok {
		return -1
	}
	if len(buf) >= len(v) {
		copy(buf, v)
	}
	return int32(len(v))
}

func (s *session) Log(level int32, msg []byte) { s.h.log(level, msg) }

// Outcome is how an export call ended, as the host sees it.
type Outcome struct {
	// Status is what the export returned (0 ok, 1 protocol error, other:
	// fault); -1 when it trapped.
	Status int32
	// Output is the output JSON when the call did not fault.
	Output json.RawMessage
	// Fault says why the host counts the call as a fault; "" when it does
	// not.
	Fault string
}

// outcome judges a finished export call by sdk/ABI.md §5.
func (s *session) outcome(status int32, trapped error) Outcome {
	switch {
	case trapped != nil:
		return Outcome{Status: -1, Fault: "trap: " + trapped.Error()}
	case s.tooLarge:
		return Outcome{Status: status, Fault: "output too large"}
	case status != 0 && status != 1:
		return Outcome{Status: status, Fault: fmt.Sprintf("status %d", status)}
	case !s.outputSet:
		return Outcome{Status: status, Fault: "no output"}
	case !json.Valid(s.output):
		return Outcome{Status: status, Fault: "output is not valid JSON"}
	}
	if status == 1 {
		var e struct {
			Code    *int    `json:"code"`
			Message *string `json:"message"`
		}
		if json.Unmarshal(s.output, &e) != nil || e.Code == nil || e.Message == nil {
			return Outcome{Status: status, Fault: `status 1 without {"code": int, "message": string}`}
		}
	}
	return Outcome{Status: status, Output: s.output}
}
