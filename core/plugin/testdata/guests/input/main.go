//go:build wasip1

// Command input asks the client for input before answering: the first call
// returns input_required with its own state; the retry gets the state and
// the client's responses back.
package main

import (
	"encoding/json"

	"github.com/kobana/kadu/core/plugin/testdata/guests/rawabi"
)

func main() {}

//go:wasmexport kadu_abi_v1
func abiV1() {}

//go:wasmexport kadu_describe
func describe(n int32) int32 {
	rawabi.Input(n)
	tool := func(name string) map[string]any {
		return map[string]any{"name": name, "description": "Asks first.",
			"inputSchema": json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"}}}`),
			"annotations": map[string]bool{"readOnlyHint": true}, "access": rawabi.Access("viewer", "read")}
	}
	return rawabi.JSON(rawabi.StatusOK, map[string]any{
		"abi": "kadu/v1", "name": "input", "version": "1.0.0",
		"tools":  []any{tool("ask"), tool("ask_sampling")},
		"routes": []string{},
	})
}

//go:wasmexport kadu_handle
func handle(n int32) int32 {
	inv := rawabi.ReadInvocation(n)
	if inv.State == nil {
		method, params := "elicitation/create", `{"mode":"form","message":"Which colour?","requestedSchema":{"type":"object"}}`
		if inv.Params.Name == "ask_sampling" {
			method, params = "sampling/createMessage", `{"messages":[],"maxTokens":10}`
		}
		return rawabi.JSON(rawabi.StatusOK, map[string]any{
			"resultType":    "input_required",
			"inputRequests": map[string]any{"colour": map[string]any{"method": method, "params": json.RawMessage(params)}},
			"state":         map[string]any{"step": 1, "arguments": inv.Params.Arguments},
		})
	}
	return rawabi.JSON(rawabi.StatusOK, rawabi.Text("done", map[string]any{
		"state": inv.State, "responses": inv.InputResponses,
	}))
}
