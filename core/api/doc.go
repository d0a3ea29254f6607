// Package api serves the Kadu REST API at /api/v1 (docs/reference/rest.md): tasks,
// executions, usage — the single implementation of the business rules that
// every MCP tool dispatches to in-process.
//
// The routes are the rows of core/api/routeclass (method, path, role, scope,
// class, bodies); this package gives each its handler, and
// core/api/openapi renders the reference from the same rows.
//
// It owns: the handlers and their conventions (error bodies, signed cursors,
// idempotency, validation against JSON Schema, role × scope per route, the
// launch policy, the plan and cost cap at launch), provisioning an
// organisation on first sight, and the example tasks a new organisation
// receives in the embedded setup (examples.go).
//
// It must not: know MCP (core/mcp and the bundles call it through HTTP
// semantics only), verify tokens (the auth middleware puts the Principal in
// the request context), run executions (it enqueues them through Queue), or
// reach another organisation's rows (every store call takes the caller's
// organisation).
//
// Wiring, once per process:
//
//	a, err := api.New(api.Options{Store: db, Plans: cfg.Plans, DefaultPlan: cfg.Orgs.DefaultPlan,
//		AutoProvision: cfg.AutoProvision(), ExampleTasks: cfg.ExampleTasks(), CursorKey: key,
//		Queue: jobs, Challenger: authn, ValidatePlaybook: agent.ValidatePlaybook, Logger: log})
//	a.Register(e.Group(api.BasePath, a.Middlewares(authn.Middleware())...))
//	a.RegisterDocument(e) // GET /api/v1/openapi.json, public
//
// RATIONALE.md records the decisions behind them.
package api
