// Command goroute is a bundle built with sdk/go whose one tool mirrors an
// API route with route.Tool, as plugins/executions' kadu_executions_get
// does: what a partner's route-mirroring tool costs per call.
// BenchmarkWarmCall builds it with kadutest.BuildWasm, so that a change
// to sdk/go rebuilds it.
package main

import (
	"github.com/kobana/kadu/sdk/go/kadu"
	"github.com/kobana/kadu/sdk/go/kadu/route"
)

// executionSchema is plugins/executions' outputSchema of an execution,
// trimmed to what the benchmark's API answer holds.
const executionSchema = `{"type":"object","properties":{
	"id":{"type":"string"},
	"task_id":{"type":"string"},
	"status":{"enum":["queued","running","waiting_input","cancelling","succeeded","failed","cancelled","expired"]},
	"input":{"type":"object"},
	"output":{"type":["object","null"]},
	"failure":{"type":["object","null"]},
	"created_at":{"type":"string"}},
	"required":["id"]}`

var get = route.Spec{
	Name:         "goroute_executions_get",
	Title:        "Get an execution",
	Description:  "Gets one execution.",
	Route:        "GET /api/v1/executions/{id}",
	InputSchema:  kadu.ObjectSchema(route.ID("id", "exe_", "The execution's id")),
	OutputSchema: []byte(executionSchema),
	Annotations:  &kadu.Annotations{ReadOnly: true, Idempotent: true},
	Access:       kadu.Access{MinRole: kadu.RoleViewer, Scope: kadu.ScopeRead},
}

func init() {
	kadu.Register(kadu.Bundle{Name: "goroute", Version: "1.0.0", Routes: route.Routes(get)}, route.Tools(get)...)
}

func main() {}
