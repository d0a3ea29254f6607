package kadu

import (
	"encoding/json"
	"testing"
)

// BenchmarkHandleAPITool measures the SDK's own work for one tools/call
// that makes one API request: decoding the invocation and arguments,
// building the request, copying the response, encoding the result. The
// host's side and wasm are not included (see kadutest's
// BenchmarkWasmToolCall).
func BenchmarkHandleAPITool(b *testing.B) {
	task := []byte(`{"id":"tsk_0193a5c4e1f27c3a9b1d2e4f5a6b7c8d","name":"Conciliação diária","description":"","instructions":"",` +
		`"input_schema":{"type":"object"},"playbook":null,"launch_policy":{"roles":[],"user_ids":[]},"destinations":[],` +
		`"max_cost_cents":500,"timeout_seconds":900,"version":1,"created_at":"2026-03-01T12:00:00.000000Z","updated_at":"2026-03-01T12:00:00.000000Z"}` + "\n")
	type in struct {
		ID string `json:"id"`
	}
	s := mustServer(b, Tool[in, json.RawMessage]{Name: "get", InputSchema: noInput, OutputSchema: noInput, Annotations: reads, Access: anyone,
		Handler: func(c *Call, in in) (json.RawMessage, error) {
			resp, err := c.API("GET", "/api/v1/tasks/"+in.ID, nil)
			if err != nil {
				return nil, err
			}
			return resp.Body, resp.Err()
		}})
	h := &fakeHost{api: func(string, string, []byte) (int, []byte) { return 200, task }}
	inv, _ := json.Marshal(map[string]any{"op": "tools/call", "params": map[string]any{"name": "get", "arguments": map[string]string{"id": "tsk_0193a5c4e1f27c3a9b1d2e4f5a6b7c8d"}},
		"client": map[string]any{"capabilities": map[string]any{}, "protocol_version": "2026-07-28"}})
	h.input = inv
	b.ReportAllocs()
	for b.Loop() {
		if s.Handle(h, int32(len(inv))) != 0 {
			b.Fatal(string(h.output))
		}
	}
}

// BenchmarkHandleRawArgsTool is BenchmarkHandleAPITool for a tool whose
// arguments are raw members, as route tools' are: no reflection at all.
func BenchmarkHandleRawArgsTool(b *testing.B) {
	task := []byte(`{"id":"tsk_0193a5c4e1f27c3a9b1d2e4f5a6b7c8d","name":"Conciliação diária","description":"","instructions":"",` +
		`"input_schema":{"type":"object"},"playbook":null,"launch_policy":{"roles":[],"user_ids":[]},"destinations":[],` +
		`"max_cost_cents":500,"timeout_seconds":900,"version":1,"created_at":"2026-03-01T12:00:00.000000Z","updated_at":"2026-03-01T12:00:00.000000Z"}` + "\n")
	s := mustServer(b, Tool[map[string]json.RawMessage, json.RawMessage]{Name: "get", InputSchema: noInput, OutputSchema: noInput, Annotations: reads, Access: anyone,
		Handler: func(c *Call, in map[string]json.RawMessage) (json.RawMessage, error) {
			resp, err := c.API("GET", "/api/v1/tasks/"+string(in["id"][1:len(in["id"])-1]), nil)
			if err != nil {
				return nil, err
			}
			return resp.Body, resp.Err()
		}})
	h := &fakeHost{api: func(string, string, []byte) (int, []byte) { return 200, task }}
	h.input = []byte(`{"op":"tools/call","params":{"name":"get","arguments":{"id":"tsk_0193a5c4e1f27c3a9b1d2e4f5a6b7c8d"}},"client":{"capabilities":{},"protocol_version":"2026-07-28"}}`)
	b.ReportAllocs()
	for b.Loop() {
		if s.Handle(h, int32(len(h.input))) != 0 {
			b.Fatal(string(h.output))
		}
	}
}
