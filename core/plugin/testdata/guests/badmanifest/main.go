//go:build wasip1

// Command badmanifest answers kadu_describe with a manifest that breaks a
// rule; the operator's config key "variant" picks which.
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
	schema := json.RawMessage(`{"type":"object"}`)
	access := any(rawabi.Access("viewer", "read"))
	routes := []string{"GET /api/v1/tasks"}
	annotations := map[string]bool{"readOnlyHint": true}
	version := "1.0.0"
	switch v, _ := rawabi.Config("variant"); v {
	case "array_schema":
		schema = json.RawMessage(`{"type":"array"}`)
	case "header_in_array":
		schema = json.RawMessage(`{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string","x-mcp-header":"Tag"}}}}`)
	case "no_access":
		access = nil
	case "ungranted_route":
		routes = []string{"DELETE /api/v1/tasks/{id}"}
	case "readonly_destructive":
		annotations = map[string]bool{"readOnlyHint": true, "destructiveHint": true}
	case "bad_version":
		version = "one"
	case "not_json":
		rawabi.Output([]byte("manifest?"))
		return rawabi.Return(rawabi.StatusOK)
	}
	tool := map[string]any{"name": "broken", "description": "Never published.", "inputSchema": schema,
		"annotations": annotations}
	if access != nil {
		tool["access"] = access
	}
	return rawabi.JSON(rawabi.StatusOK, map[string]any{
		"abi": "kadu/v1", "name": "badmanifest", "version": version,
		"tools": []any{tool}, "routes": routes,
	})
}

//go:wasmexport kadu_handle
func handle(n int32) int32 {
	rawabi.Input(n)
	return rawabi.JSON(rawabi.StatusOK, rawabi.Text("unreachable", nil))
}
