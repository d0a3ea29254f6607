//go:build wasip1

// Command echo is the well-behaved test bundle: a trivial echo tool, api()
// round trips, caller_info, config_get, a resource, a template, a prompt
// and completions.
//
// The api() round trips are made by three tools that differ only in their
// annotations — fetch (read-only), fetch_write (neither read-only nor
// destructive) and fetch_destructive — and, when the config key "op_api"
// is "METHOD PATH", by resources/read, prompts/get and completion/complete,
// so tests can check which operation may call which route class.
package main

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/kobana/kadu/core/plugin/testdata/guests/rawabi"
)

// version is set with -ldflags "-X main.version=2.0.0" to build a second
// version of the same bundle for the hot-swap tests.
var version = "1.0.0"

func main() {}

var readOnly = map[string]bool{"readOnlyHint": true}

//go:wasmexport kadu_abi_v1
func abiV1() {}

//go:wasmexport kadu_describe
func describe(n int32) int32 {
	rawabi.Input(n)
	name := "echo"
	if v, ok := rawabi.Config("bundle_name"); ok {
		name = v
	}
	prefix := ""
	if v, ok := rawabi.Config("tool_prefix"); ok {
		prefix = v
	}
	completions := true
	if v, ok := rawabi.Config("completions"); ok {
		completions = v == "true"
	}
	return rawabi.JSON(rawabi.StatusOK, map[string]any{
		"abi": "kadu/v1", "name": name, "version": version, "description": "Echoes for tests.",
		"tools": []any{
			map[string]any{
				"name": prefix + "echo", "title": "Echo", "description": "Returns its text.",
				"inputSchema": json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","maxLength":64},` +
					`"region":{"type":"string","x-mcp-header":"Region"}},"required":["text"],"additionalProperties":false}`),
				"outputSchema": json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"},"version":{"type":"string"}}}`),
				"annotations":  map[string]bool{"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false},
				"access":       rawabi.Access("viewer", "read"),
			},
			map[string]any{
				"name": prefix + "fetch", "title": "Fetch", "description": "Calls the API once per path.",
				"inputSchema": json.RawMessage(`{"type":"object","properties":{"method":{"type":"string"},` +
					`"paths":{"type":"array","items":{"type":"string"}},"body":{"type":"string"}},"required":["paths"]}`),
				"annotations": readOnly, "access": rawabi.Access("member", "read"),
			},
			fetchTool(prefix+"fetch_write", map[string]bool{"readOnlyHint": false, "destructiveHint": false}),
			fetchTool(prefix+"fetch_destructive", map[string]bool{"destructiveHint": true}),
			map[string]any{
				"name": prefix + "whoami", "description": "Returns caller_info and a config value.",
				"inputSchema": rawabi.ObjectSchema, "annotations": readOnly, "access": rawabi.Access("viewer", "read"),
			},
			map[string]any{
				"name": prefix + "fail", "description": "Answers with a protocol error.",
				"inputSchema": json.RawMessage(`{"type":"object","properties":{"code":{"type":"integer"}}}`),
				"annotations": readOnly, "access": rawabi.Access("viewer", "read"),
			},
		},
		"resources": []any{map[string]any{"uri": "test://" + name + "/readme", "name": "readme", "mimeType": "text/plain",
			"access": rawabi.Access("viewer", "read")}},
		"resourceTemplates": []any{map[string]any{"uriTemplate": "test://" + name + "/items/{id}", "name": "item",
			"mimeType": "application/json", "access": rawabi.Access("viewer", "read")}},
		"prompts": []any{map[string]any{"name": prefix + "greet", "description": "Greets someone.",
			"arguments": []any{map[string]any{"name": "who", "required": true}}, "access": rawabi.Access("viewer", "read")}},
		"completions": completions,
		"routes":      []string{"GET /api/v1/tasks", "GET /api/v1/tasks/{id}", "PATCH /api/v1/tasks/{id}", "POST /api/v1/tasks/{id}/run"},
	})
}

func fetchTool(name string, annotations map[string]bool) map[string]any {
	return map[string]any{
		"name": name, "description": "Calls the API once per path.",
		"inputSchema": json.RawMessage(`{"type":"object","properties":{"method":{"type":"string"},` +
			`"paths":{"type":"array","items":{"type":"string"}},"body":{"type":"string"}},"required":["paths"]}`),
		"annotations": annotations, "access": rawabi.Access("member", "read"),
	}
}

// opAPI makes the api() call the config key "op_api" names, if any, and
// describes its answer: " api=STATUS BODY".
func opAPI() string {
	spec, ok := rawabi.Config("op_api")
	if !ok {
		return ""
	}
	method, path, _ := strings.Cut(spec, " ")
	status, body := rawabi.API(method, path, nil)
	return " api=" + strconv.Itoa(status) + " " + string(body)
}

//go:wasmexport kadu_handle
func handle(n int32) int32 {
	inv := rawabi.ReadInvocation(n)
	switch inv.Op {
	case "tools/call":
		return callTool(inv)
	case "resources/read":
		return rawabi.JSON(rawabi.StatusOK, map[string]any{"contents": []any{
			map[string]string{"uri": inv.Params.URI, "mimeType": "text/plain", "text": "read " + inv.Params.URI + " at " + version + opAPI()},
		}})
	case "prompts/get":
		var args map[string]string
		_ = json.Unmarshal(inv.Params.Arguments, &args)
		return rawabi.JSON(rawabi.StatusOK, map[string]any{"description": "greeting", "messages": []any{
			map[string]any{"role": "user", "content": map[string]string{"type": "text", "text": "Hello, " + args["who"] + opAPI()}},
		}})
	case "completion/complete":
		values := []string{inv.Params.Argument.Value + "-1", inv.Params.Argument.Value + "-2"}
		if a := opAPI(); a != "" {
			values = append(values, a)
		}
		return rawabi.JSON(rawabi.StatusOK, map[string]any{"completion": map[string]any{"values": values}})
	}
	return rawabi.JSON(rawabi.StatusProtocol, map[string]any{"code": -32602, "message": "unknown op " + inv.Op})
}

func callTool(inv *rawabi.Invocation) int32 {
	name := inv.Params.Name
	if p, ok := rawabi.Config("tool_prefix"); ok {
		name = name[len(p):]
	}
	switch name {
	case "echo":
		var args struct {
			Text string `json:"text"`
		}
		_ = json.Unmarshal(inv.Params.Arguments, &args)
		return rawabi.JSON(rawabi.StatusOK, rawabi.Text(args.Text, map[string]string{"text": args.Text, "version": version}))
	case "fetch", "fetch_write", "fetch_destructive":
		var args struct {
			Method string   `json:"method"`
			Paths  []string `json:"paths"`
			Body   string   `json:"body"`
		}
		_ = json.Unmarshal(inv.Params.Arguments, &args)
		if args.Method == "" {
			args.Method = "GET"
		}
		type answer struct {
			Status int             `json:"status"`
			Body   json.RawMessage `json:"body"`
		}
		var out []answer
		for _, p := range args.Paths {
			status, body := rawabi.API(args.Method, p, []byte(args.Body))
			if !json.Valid(body) {
				body = []byte(strconv.Quote(string(body)))
			}
			out = append(out, answer{status, body})
		}
		return rawabi.JSON(rawabi.StatusOK, rawabi.Text("fetched", map[string]any{"answers": out}))
	case "whoami":
		greeting, ok := rawabi.Config("greeting")
		rawabi.Log(1, "whoami called")
		return rawabi.JSON(rawabi.StatusOK, rawabi.Text("whoami", map[string]any{
			"caller": json.RawMessage(rawabi.CallerInfo()), "greeting": greeting, "has_greeting": ok,
		}))
	case "fail":
		var args struct {
			Code int `json:"code"`
		}
		_ = json.Unmarshal(inv.Params.Arguments, &args)
		return rawabi.JSON(rawabi.StatusProtocol, map[string]any{"code": args.Code, "message": "failed on purpose", "data": map[string]int{"code": args.Code}})
	}
	return rawabi.JSON(rawabi.StatusProtocol, map[string]any{"code": -32602, "message": "unknown tool " + name})
}
