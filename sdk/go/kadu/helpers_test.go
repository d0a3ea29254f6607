package kadu

import (
	"encoding/json"
	"testing"

	"github.com/kobana/kadu/sdk/go/kadu/internal/abi"
)

// fakeHost is a minimal host for the package's own tests: one invocation,
// API answers from a function. kadutest has the full one.
type fakeHost struct {
	input  []byte
	output []byte
	api    func(method, path string, body []byte) (int, []byte)
	resp   []byte
	caller []byte
	config map[string]string
	logs   []string
}

var _ abi.Host = (*fakeHost)(nil)

func (h *fakeHost) InputRead(buf []byte) int32 {
	if len(buf) < len(h.input) {
		return -1
	}
	return int32(copy(buf, h.input))
}

func (h *fakeHost) OutputWrite(b []byte) int32 {
	h.output = append([]byte(nil), b...)
	return 0
}

func (h *fakeHost) API(method, path string, body []byte) int64 {
	status, resp := 404, []byte(`{"status":404,"errors":[{"code":"not_found"}]}`)
	if h.api != nil {
		status, resp = h.api(method, path, body)
	}
	h.resp = resp
	return int64(status)<<32 | int64(len(resp))
}

func (h *fakeHost) APIRead(buf []byte) int32 {
	if len(buf) < len(h.resp) {
		return -1
	}
	return int32(copy(buf, h.resp))
}

func (h *fakeHost) CallerInfo(buf []byte) int32 {
	if len(buf) >= len(h.caller) {
		copy(buf, h.caller)
	}
	return int32(len(h.caller))
}

func (h *fakeHost) ConfigGet(key string, buf []byte) int32 {
	v, ok := h.config[key]
	if !ok {
		return -1
	}
	if len(buf) >= len(v) {
		copy(buf, v)
	}
	return int32(len(v))
}

func (h *fakeHost) Log(level int32, msg []byte) { h.logs = append(h.logs, string(msg)) }

// handle runs one kadu_handle of s with the invocation inv (encoded as
// JSON) and returns the status and output.
func handle(t testing.TB, s *server, h *fakeHost, inv any) (int32, string) {
	t.Helper()
	in, err := json.Marshal(inv)
	if err != nil {
		t.Fatal(err)
	}
	h.input, h.output = in, nil
	status := s.Handle(h, int32(len(in)))
	return status, string(h.output)
}

// mustServer builds a server or fails t.
func mustServer(t testing.TB, features ...Feature) *server {
	t.Helper()
	s, err := newServer(Bundle{Name: "test", Version: "1.0.0", Routes: []string{"GET /api/v1/tasks/{id}"}}, features)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var (
	anyone  = Access{MinRole: RoleViewer, Scope: ScopeRead}
	reads   = &Annotations{ReadOnly: true, Idempotent: true}
	noInput = json.RawMessage(`{"type":"object"}`)
)

// installForTest makes h the host of Config and Log until restore runs.
// Tests that use it must not run in parallel.
func installForTest(h abi.Host) (restore func()) { return abi.Install(h) }
