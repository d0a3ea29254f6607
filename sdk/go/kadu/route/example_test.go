package route_test

import (
	"github.com/kobana/kadu/sdk/go/kadu"
	"github.com/kobana/kadu/sdk/go/kadu/route"
)

// A bundle of tools that mirror API routes: each tool's arguments are the
// route's path parameter, query parameters and body fields, and its result
// is the route's JSON. The bundle declares exactly the routes its tools use.
func ExampleTool() {
	specs := []route.Spec{{
		Name:        "acme_tasks_get",
		Title:       "Get a task",
		Description: "Gets one Kadu task with its input_schema. Use it before running the task.",
		Route:       "GET /api/v1/tasks/{id}",
		InputSchema: kadu.ObjectSchema(route.ID("id", "tsk_", "The task's id")),
		Annotations: &kadu.Annotations{ReadOnly: true, Idempotent: true},
		Access:      kadu.Access{MinRole: kadu.RoleViewer, Scope: kadu.ScopeRead},
	}}
	bundle := kadu.Bundle{Name: "acme", Version: "1.0.0", Routes: route.Routes(specs...)}
	// In the bundle's main package:
	//
	//	func init() { kadu.Register(bundle, route.Tools(specs...)...) }
	_ = bundle
}
