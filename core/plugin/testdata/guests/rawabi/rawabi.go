//go:build wasip1

// Package rawabi is the smallest possible kadu v1 guest runtime for the
// host's own tests: the host imports declared with //go:wasmimport and thin
// helpers over them. It is not the Go SDK (sdk/go is); it exists so the host
// can be tested before, and independently of, the SDK.
package rawabi

import (
	"encoding/json"
	"runtime"
	"unsafe"
)

//go:wasmimport kadu input_read
func inputRead(buf unsafe.Pointer, capacity int32) int32

//go:wasmimport kadu output_write
func outputWrite(ptr unsafe.Pointer, n int32) int32

//go:wasmimport kadu api
func apiCall(mPtr unsafe.Pointer, mLen int32, pPtr unsafe.Pointer, pLen int32, bPtr unsafe.Pointer, bLen int32) int64

//go:wasmimport kadu api_read
func apiRead(buf unsafe.Pointer, capacity int32) int32

//go:wasmimport kadu caller_info
func callerInfo(buf unsafe.Pointer, capacity int32) int32

//go:wasmimport kadu config_get
func configGet(kPtr unsafe.Pointer, kLen int32, buf unsafe.Pointer, capacity int32) int32

//go:wasmimport kadu log
func logMsg(level int32, ptr unsafe.Pointer, n int32)

// Status values an export returns.
const (
	StatusOK       int32 = 0
	StatusProtocol int32 = 1
)

func ptr(b []byte) unsafe.Pointer {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Pointer(&b[0])
}

// Input returns this invocation's input of length n.
func Input(n int32) []byte {
	buf := make([]byte, n)
	if got := inputRead(ptr(buf), n); got != n {
		panic("input_read returned an unexpected length")
	}
	return buf
}

// Output hands b to the host; it reports false when b is over the cap.
func Output(b []byte) bool { return outputWrite(ptr(b), int32(len(b))) == 0 }

// JSON marshals v and hands it to the host, returning status.
func JSON(status int32, v any) int32 {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	Output(b)
	return Return(status)
}

// Return yields to the Go scheduler before an export returns: without it a
// Go reactor's memory grows on every call.
func Return(status int32) int32 {
	runtime.Gosched()
	return status
}

// API performs one api() host call and reads its response.
func API(method, path string, body []byte) (int, []byte) {
	m, p := []byte(method), []byte(path)
	r := apiCall(ptr(m), int32(len(m)), ptr(p), int32(len(p)), ptr(body), int32(len(body)))
	status, n := int(r>>32), int32(uint32(r))
	resp := make([]byte, n)
	if n > 0 && apiRead(ptr(resp), n) != n {
		panic("api_read returned an unexpected length")
	}
	return status, resp
}

// CallerInfo returns the caller JSON, calling once to learn its length.
func CallerInfo() []byte {
	n := callerInfo(nil, 0)
	buf := make([]byte, n)
	callerInfo(ptr(buf), n)
	return buf
}

// Config returns the operator's value for key.
func Config(key string) (string, bool) {
	k := []byte(key)
	n := configGet(ptr(k), int32(len(k)), nil, 0)
	if n < 0 {
		return "", false
	}
	buf := make([]byte, n)
	configGet(ptr(k), int32(len(k)), ptr(buf), n)
	return string(buf), true
}

// Log sends a message to the host log at level (0 debug … 3 error).
func Log(level int32, msg string) {
	b := []byte(msg)
	logMsg(level, ptr(b), int32(len(b)))
}

// Invocation is the input of kadu_handle.
type Invocation struct {
	Op     string `json:"op"`
	Params struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		URI       string          `json:"uri"`
		Ref       json.RawMessage `json:"ref"`
		Argument  struct {
			Name  string `json:"name"`
			Value string `json:"value"`
		} `json:"argument"`
	} `json:"params"`
	InputResponses map[string]json.RawMessage `json:"input_responses"`
	State          json.RawMessage            `json:"state"`
	Client         json.RawMessage            `json:"client"`
}

// ReadInvocation reads and decodes the invocation of length n.
func ReadInvocation(n int32) *Invocation {
	var inv Invocation
	if err := json.Unmarshal(Input(n), &inv); err != nil {
		panic(err)
	}
	return &inv
}

// Text returns a CallToolResult with one text block and structured content.
func Text(text string, structured any) map[string]any {
	out := map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}}
	if structured != nil {
		out["structuredContent"] = structured
	}
	return out
}

// Access is a manifest access object.
func Access(role, scope string) map[string]string {
	return map[string]string{"min_role": role, "scope": scope}
}

// ObjectSchema is the schema of a tool without arguments.
var ObjectSchema = json.RawMessage(`{"type":"object"}`)
