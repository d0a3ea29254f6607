//go:build wasip1

// Command remember keeps the last value it was given in a global and
// answers with the previous one: if an instance ever served two
// organisations, the second would see the first's value.
package main

import (
	"encoding/json"

	"github.com/kobana/kadu/core/plugin/testdata/guests/rawabi"
)

func main() {}

//go:wasmexport kadu_abi_v1
func abiV1() {}

var last string

//go:wasmexport kadu_describe
func describe(n int32) int32 {
	rawabi.Input(n)
	return rawabi.JSON(rawabi.StatusOK, map[string]any{
		"abi": "kadu/v1", "name": "remember", "version": "1.0.0",
		"tools": []any{map[string]any{
			"name": "remember", "description": "Stores value, returns the previous one.",
			"inputSchema": json.RawMessage(`{"type":"object","properties":{"value":{"type":"string"}},"required":["value"]}`),
			"annotations": map[string]bool{"readOnlyHint": false, "destructiveHint": false},
			"access":      rawabi.Access("viewer", "read"),
		}},
		"routes": []string{},
	})
}

//go:wasmexport kadu_handle
func handle(n int32) int32 {
	inv := rawabi.ReadInvocation(n)
	var args struct {
		Value string `json:"value"`
	}
	_ = json.Unmarshal(inv.Params.Arguments, &args)
	prev := last
	last = args.Value
	return rawabi.JSON(rawabi.StatusOK, rawabi.Text(prev, map[string]string{"previous": prev}))
}
