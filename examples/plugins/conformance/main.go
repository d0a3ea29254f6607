// Command conformance is a test-only bundle: the fixtures the official MCP
// conformance suite (npm @modelcontextprotocol/conformance) calls by name
// when it tests a server — test_* tools, test://… resources and a template,
// test_* prompts and their completions, and the tools that ask the client
// for input (SEP-2322 input_required results) — as a WebAssembly bundle
// served by the real host (docs/reference/mcp.md#conformance).
//
// It owns: answering those fixtures as the suite's reference
// everything-server does, with what a stateless server without streams can
// give (docs/reference/mcp.md#endpoint-and-transport). Tools that would log, report progress or close a stream
// mid-call only run; tools that need the client answer input_required, and
// the host turns that into -32021 when the client did not declare the
// capability (every era-2025 client, since nothing is remembered from
// initialize).
//
// It must not: be enabled anywhere but config/conformance.yaml (never in
// config/kadu.yaml or the built-in defaults), call the Kadu API (it
// declares no routes), or keep anything between invocations: the state of
// a multi-round tool travels in the requestState the host seals.
//
// Build it as `go tool task build:conformance` does:
//
//	GOOS=wasip1 GOARCH=wasm go build -trimpath -buildvcs=false -buildmode=c-shared \
//	    -o bin/plugins/conformance.wasm ./examples/plugins/conformance
package main

import "github.com/kobana/kadu/sdk/go/kadu"

// bundle names the bundle. It calls no API route: every answer is fixed
// or built from the request.
var bundle = kadu.Bundle{
	Name:        "conformance",
	Version:     "1.0.0",
	Description: "Test-only fixtures of the official MCP conformance suite (docs/reference/mcp.md#conformance); never enable in production.",
	Routes:      []string{},
}

// features are everything the bundle offers, in the order tools/list,
// resources/list and prompts/list show them.
func features() []kadu.Feature {
	var fs []kadu.Feature
	fs = append(fs, contentTools()...)
	fs = append(fs, inputTools()...)
	fs = append(fs, resources()...)
	fs = append(fs, prompts()...)
	return append(fs, completion)
}

// A c-shared module never runs main: init is where a bundle registers
// (sdk/go/kadu documents why).
func init() { kadu.Register(bundle, features()...) }

func main() {}
