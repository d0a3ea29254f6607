// Command tasks is Kadu's tasks bundle: the tools that list, read, create,
// edit, delete and run tasks, and read the organisation's usage (docs/reference/bundles.md#tool-catalogue,
// group tasks), plus the task, usage, guide and playbooks resources, the
// run_task prompt and the completion of task ids and names (docs/reference/mcp.md#resources-prompts-and-completions).
//
// Each tool mirrors one /api/v1 route through the api host function, as the
// caller; the business rules live in core/api, never here. Build it with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o bin/plugins/tasks.wasm ./plugins/tasks
package main

import (
	"github.com/kobana/kadu/sdk/go/kadu"
	"github.com/kobana/kadu/sdk/go/kadu/route"
)

// bundle names the bundle and the routes its tools and resources call.
var bundle = kadu.Bundle{
	Name:        "tasks",
	Version:     "1.0.0",
	Description: "Kadu tasks: list, read, create, edit, delete and run tasks; read the organisation's usage.",
	Routes:      append(route.Routes(tools...), playbooksRoute),
}

// A c-shared module never runs main: init is where a bundle registers
// (sdk/go/kadu documents why).
func init() {
	features := append(route.Tools(tools...), resources...)
	features = append(features, docs...)
	kadu.Register(bundle, append(features, runTaskPrompt, completion)...)
}

func main() {}
