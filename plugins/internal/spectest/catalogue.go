// Package spectest holds the tool catalogue of docs/reference/bundles.md#tool-catalogue as data, and the
// checks the tests of every first-party bundle run against it: the tools a
// group must have, their hints, access and schemas, and the request each
// one makes.
//
// It owns: the catalogue rows and realistic API answers to test against.
// It must not: be imported outside tests.
package spectest

import (
	"strings"

	"github.com/kobana/kadu/core/api/routeclass"
)

// Row is one tool of the catalogue, with the access and hints of its route
// (core/api/routeclass) and a call that tests it.
type Row struct {
	Group   string // tasks, executions, files or webhooks (the admin bundle, audit trail included)
	Tool    string
	Method  string
	Path    string // under /api/v1, with {id}
	R, D, I bool   // readOnlyHint, destructiveHint, idempotentHint

	MinRole string
	Scope   string

	// Args are arguments that make a valid call besides id, which is
	// generated with the right prefix.
	Args map[string]any
	// Query is the query string Args produce on a GET ("" for none).
	Query string
	// Body is the JSON body Args produce on a write ("" for none).
	Body string
}

// Route returns the row's route as a manifest lists it.
func (r Row) Route() string { return r.Method + " /api/v1" + r.Path }

// HasID reports whether the route takes an id.
func (r Row) HasID() bool { return strings.Contains(r.Path, "{id}") }

const key = "key-1"

// Catalogue is the tool catalogue, in the order the bundles offer the
// tools: each first-party tool of the route table with a call to test it.
var Catalogue = catalogue(calls)

// calls are, in catalogue order, the tools and the arguments the tests call
// them with; everything else of a row comes from the route table.
var calls = []Row{
	{Tool: "kadu_tasks_list",
		Args: map[string]any{"q": "conciliação diária", "limit": 5}, Query: "limit=5&q=concilia%C3%A7%C3%A3o+di%C3%A1ria"},
	{Tool: "kadu_tasks_get"},
	{Tool: "kadu_tasks_create",
		Args: map[string]any{"name": "Daily", "idempotency_key": key}, Body: `{"idempotency_key":"key-1","name":"Daily"}`},
	{Tool: "kadu_tasks_update",
		Args: map[string]any{"max_cost_cents": 500}, Body: `{"max_cost_cents":500}`},
	{Tool: "kadu_tasks_delete",
		Args: map[string]any{"idempotency_key": key}, Body: `{"idempotency_key":"key-1"}`},
	{Tool: "kadu_tasks_set_launch_policy",
		Args: map[string]any{"roles": []string{"member"}, "user_ids": []string{}}, Body: `{"roles":["member"],"user_ids":[]}`},
	{Tool: "kadu_tasks_set_destinations",
		Args: map[string]any{"destinations": []any{}}, Body: `{"destinations":[]}`},
	{Tool: "kadu_tasks_run",
		Args: map[string]any{"input": map[string]any{"month": "2026-03"}, "input_file_ids": []string{"file_0193a5c4e1f27c3a9b1d2e4f5a6b7c8d"}, "idempotency_key": key},
		Body: `{"idempotency_key":"key-1","input":{"month":"2026-03"},"input_file_ids":["file_0193a5c4e1f27c3a9b1d2e4f5a6b7c8d"]}`},
	{Tool: "kadu_usage_get"},
	{Tool: "kadu_executions_list",
		Args:  map[string]any{"status": "failed", "limit": 10, "created_after": "2026-03-01T00:00:00-03:00"},
		Query: "created_after=2026-03-01T00%3A00%3A00-03%3A00&limit=10&status=failed"},
	{Tool: "kadu_executions_get"},
	{Tool: "kadu_executions_steps_list",
		Args: map[string]any{"cursor": "c1"}, Query: "cursor=c1"},
	{Tool: "kadu_executions_continue",
		Args: map[string]any{"answer": map[string]any{"approved": true}}, Body: `{"answer":{"approved":true}}`},
	{Tool: "kadu_executions_cancel"},
	{Tool: "kadu_executions_delete"},
	{Tool: "kadu_approvals_get"},
	{Tool: "kadu_files_create",
		Args: map[string]any{"filename": "extrato.csv", "content_type": "text/csv", "size_bytes": 1234},
		Body: `{"content_type":"text/csv","filename":"extrato.csv","size_bytes":1234}`},
	{Tool: "kadu_files_confirm"},
	{Tool: "kadu_files_get"},
	{Tool: "kadu_files_list",
		Args: map[string]any{"purpose": "output", "status": "ready"}, Query: "purpose=output&status=ready"},
	{Tool: "kadu_files_download"},
	{Tool: "kadu_files_delete"},
	{Tool: "kadu_webhooks_list"},
	{Tool: "kadu_webhooks_get"},
	{Tool: "kadu_webhooks_create",
		Args: map[string]any{"url": "https://hooks.example.com/kadu", "event_codes": []string{"execution.failed"}},
		Body: `{"event_codes":["execution.failed"],"url":"https://hooks.example.com/kadu"}`},
	{Tool: "kadu_webhooks_update",
		Args: map[string]any{"enabled": false}, Body: `{"enabled":false}`},
	{Tool: "kadu_webhooks_delete"},
	{Tool: "kadu_webhooks_rotate_secret",
		Args: map[string]any{"overlap_seconds": 3600}, Body: `{"overlap_seconds":3600}`},
	{Tool: "kadu_webhook_deliveries_list",
		Args:  map[string]any{"webhook_id": "whk_0193a5c4e1f27c3a9b1d2e4f5a6b7c8d", "status": "failed"},
		Query: "status=failed&webhook_id=whk_0193a5c4e1f27c3a9b1d2e4f5a6b7c8d"},
	{Tool: "kadu_webhook_deliveries_get"},
	{Tool: "kadu_webhook_deliveries_replay"},
	{Tool: "kadu_audit_events_list",
		Args:  map[string]any{"since": "2026-03-01T00:00:00Z", "route": "POST /api/v1/tasks/{id}/run", "outcome": "declined"},
		Query: "outcome=declined&route=POST+%2Fapi%2Fv1%2Ftasks%2F%7Bid%7D%2Frun&since=2026-03-01T00%3A00%3A00Z"},
}

// catalogue completes each call with its route's row of the route table
// (core/api/routeclass): group, method, path, access and hints. A tool the
// table does not name is a programming error of this package.
func catalogue(calls []Row) []Row {
	byTool := map[string]routeclass.Route{}
	for _, r := range routeclass.Routes() {
		if r.Tool != "" {
			byTool[r.Tool] = r
		}
	}
	out := make([]Row, 0, len(calls))
	for _, c := range calls {
		r, ok := byTool[c.Tool]
		if !ok {
			panic("spectest: tool " + c.Tool + " mirrors no route of core/api/routeclass")
		}
		c.Group, c.Method, c.Path = r.Bundle, r.Method, strings.TrimPrefix(r.Path, routeclass.Prefix)
		c.R, c.D, c.I = r.Class == routeclass.Read, r.Class == routeclass.Destructive, r.Idempotent
		c.MinRole, c.Scope = r.Role, r.Scope
		out = append(out, c)
	}
	return out
}

// Group returns the rows of group, in catalogue order.
func Group(group string) []Row {
	var out []Row
	for _, r := range Catalogue {
		if r.Group == group {
			out = append(out, r)
		}
	}
	return out
}

// idPrefixes gives the id prefix of each collection (docs/reference/rest.md#wire-forms).
var idPrefixes = map[string]string{
	"tasks": "tsk_", "executions": "exe_", "files": "file_", "webhooks": "whk_",
	"webhook_deliveries": "dlv_", "approvals": "apr_", "audit_events": "aud_",
}

// SampleID returns a well-formed id for the row's path.
func (r Row) SampleID() string {
	collection := strings.Split(strings.TrimPrefix(r.Path, "/"), "/")[0]
	return idPrefixes[collection] + "0193a5c4e1f27c3a9b1d2e4f5a6b7c8d"
}
