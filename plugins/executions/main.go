// Command executions is Kadu's executions bundle: the tools that follow,
// answer, cancel and delete executions, and read approvals (docs/reference/bundles.md#tool-catalogue,
// group executions), plus the execution resources, the prompts about failed
// and waiting executions and the completion of execution ids (docs/reference/mcp.md#resources-prompts-and-completions).
//
// Each tool mirrors one /api/v1 route through the api host function, as the
// caller; the business rules live in core/api, never here. Execution output
// and step summaries are untrusted data, and every description says so.
// Build it with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o bin/plugins/executions.wasm ./plugins/executions
package main

import (
	"github.com/kobana/kadu/sdk/go/kadu"
	"github.com/kobana/kadu/sdk/go/kadu/route"
)

// bundle names the bundle and the routes its tools and resources call.
var bundle = kadu.Bundle{
	Name:        "executions",
	Version:     "1.0.0",
	Description: "Kadu executions: follow, answer, cancel and delete the runs of tasks; read approvals of destructive calls.",
	Routes:      route.Routes(tools...),
}

// A c-shared module never runs main: init is where a bundle registers
// (sdk/go/kadu documents why).
func init() {
	features := append(route.Tools(tools...), resources...)
	features = append(features, prompts...)
	kadu.Register(bundle, append(features, completion)...)
}

func main() {}
