// Package api serves the Kadu REST API at /api/v1 (SPEC §7): tasks,
// executions, usage — the single implementation of the business rules that
// every MCP tool dispatches to in-process.
//
// It owns: the handlers and their conventions (error bodies, signed cursors,
// idempotency, validation against JSON Schema, role × scope per route, the
// plan and cost cap at launch).
//
// It must not: know MCP (core/mcp and the bundles call it through HTTP
// semantics only), verify tokens (the auth middleware puts the Principal in
// the request context), or reach another organisation's rows (every store
// call takes the caller's organisation).
package api
