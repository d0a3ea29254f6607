// Package spectest holds the tool catalogue of docs/reference/bundles.md#tool-catalogue as data, and the
// checks the tests of every first-party bundle run against it: the tools a
// group must have, their hints, access and schemas, and the request each
// one makes.
//
// It owns: the catalogue rows and realistic API answers to test against.
// It must not: be imported outside tests.
package spectest

import "strings"

// Row is one tool of docs/reference/bundles.md#tool-catalogue, with the access of its route
// (docs/reference/rest.md#routes).
type Row struct {
	Group   string // tasks, executions, files or webhooks
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

// Catalogue is docs/reference/bundles.md#tool-catalogue, in its order.
var Catalogue = []Row{
	{Group: "tasks", Tool: "kadu_tasks_list", Method: "GET", Path: "/tasks", R: true, I: true, MinRole: "viewer", Scope: "read",
		Args: map[string]any{"q": "conciliação diária", "limit": 5}, Query: "limit=5&q=concilia%C3%A7%C3%A3o+di%C3%A1ria"},
	{Group: "tasks", Tool: "kadu_tasks_get", Method: "GET", Path: "/tasks/{id}", R: true, I: true, MinRole: "viewer", Scope: "read"},
	{Group: "tasks", Tool: "kadu_tasks_create", Method: "POST", Path: "/tasks", MinRole: "admin", Scope: "admin",
		Args: map[string]any{"name": "Daily", "idempotency_key": key}, Body: `{"idempotency_key":"key-1","name":"Daily"}`},
	{Group: "tasks", Tool: "kadu_tasks_update", Method: "PATCH", Path: "/tasks/{id}", I: true, MinRole: "admin", Scope: "write",
		Args: map[string]any{"max_cost_cents": 500}, Body: `{"max_cost_cents":500}`},
	{Group: "tasks", Tool: "kadu_tasks_delete", Method: "DELETE", Path: "/tasks/{id}", D: true, I: true, MinRole: "admin", Scope: "admin",
		Args: map[string]any{"idempotency_key": key}, Body: `{"idempotency_key":"key-1"}`},
	{Group: "tasks", Tool: "kadu_tasks_set_launch_policy", Method: "PUT", Path: "/tasks/{id}/launch_policy", D: true, I: true, MinRole: "admin", Scope: "admin",
		Args: map[string]any{"roles": []string{"member"}, "user_ids": []string{}}, Body: `{"roles":["member"],"user_ids":[]}`},
	{Group: "tasks", Tool: "kadu_tasks_set_destinations", Method: "PUT", Path: "/tasks/{id}/destinations", D: true, I: true, MinRole: "admin", Scope: "admin",
		Args: map[string]any{"destinations": []any{}}, Body: `{"destinations":[]}`},
	{Group: "tasks", Tool: "kadu_tasks_run", Method: "POST", Path: "/tasks/{id}/run", D: true, MinRole: "member", Scope: "run",
		Args: map[string]any{"input": map[string]any{"month": "2026-03"}, "input_file_ids": []string{"file_0193a5c4e1f27c3a9b1d2e4f5a6b7c8d"}, "idempotency_key": key},
		Body: `{"idempotency_key":"key-1","input":{"month":"2026-03"},"input_file_ids":["file_0193a5c4e1f27c3a9b1d2e4f5a6b7c8d"]}`},
	{Group: "tasks", Tool: "kadu_usage_get", Method: "GET", Path: "/usage", R: true, I: true, MinRole: "viewer", Scope: "read"},

	{Group: "executions", Tool: "kadu_executions_list", Method: "GET", Path: "/executions", R: true, I: true, MinRole: "viewer", Scope: "read",
		Args:  map[string]any{"status": "failed", "limit": 10, "created_after": "2026-03-01T00:00:00-03:00"},
		Query: "created_after=2026-03-01T00%3A00%3A00-03%3A00&limit=10&status=failed"},
	{Group: "executions", Tool: "kadu_executions_get", Method: "GET", Path: "/executions/{id}", R: true, I: true, MinRole: "viewer", Scope: "read"},
	{Group: "executions", Tool: "kadu_executions_steps_list", Method: "GET", Path: "/executions/{id}/steps", R: true, I: true, MinRole: "viewer", Scope: "read",
		Args: map[string]any{"cursor": "c1"}, Query: "cursor=c1"},
	{Group: "executions", Tool: "kadu_executions_continue", Method: "POST", Path: "/executions/{id}/continue", D: true, MinRole: "member", Scope: "run",
		Args: map[string]any{"answer": map[string]any{"approved": true}}, Body: `{"answer":{"approved":true}}`},
	{Group: "executions", Tool: "kadu_executions_cancel", Method: "POST", Path: "/executions/{id}/cancel", D: true, I: true, MinRole: "member", Scope: "run"},
	{Group: "executions", Tool: "kadu_executions_delete", Method: "DELETE", Path: "/executions/{id}", D: true, I: true, MinRole: "admin", Scope: "admin"},
	{Group: "executions", Tool: "kadu_approvals_get", Method: "GET", Path: "/approvals/{id}", R: true, I: true, MinRole: "viewer", Scope: "read"},

	{Group: "files", Tool: "kadu_files_create", Method: "POST", Path: "/files", MinRole: "member", Scope: "write",
		Args: map[string]any{"filename": "extrato.csv", "content_type": "text/csv", "size_bytes": 1234},
		Body: `{"content_type":"text/csv","filename":"extrato.csv","size_bytes":1234}`},
	{Group: "files", Tool: "kadu_files_confirm", Method: "POST", Path: "/files/{id}/confirm", I: true, MinRole: "member", Scope: "write"},
	{Group: "files", Tool: "kadu_files_get", Method: "GET", Path: "/files/{id}", R: true, I: true, MinRole: "viewer", Scope: "read"},
	{Group: "files", Tool: "kadu_files_list", Method: "GET", Path: "/files", R: true, I: true, MinRole: "viewer", Scope: "read",
		Args: map[string]any{"purpose": "output", "status": "ready"}, Query: "purpose=output&status=ready"},
	{Group: "files", Tool: "kadu_files_download", Method: "GET", Path: "/files/{id}/download", R: true, I: true, MinRole: "viewer", Scope: "read"},
	{Group: "files", Tool: "kadu_files_delete", Method: "DELETE", Path: "/files/{id}", D: true, I: true, MinRole: "member", Scope: "write"},

	{Group: "webhooks", Tool: "kadu_webhooks_list", Method: "GET", Path: "/webhooks", R: true, I: true, MinRole: "admin", Scope: "admin"},
	{Group: "webhooks", Tool: "kadu_webhooks_get", Method: "GET", Path: "/webhooks/{id}", R: true, I: true, MinRole: "admin", Scope: "admin"},
	{Group: "webhooks", Tool: "kadu_webhooks_create", Method: "POST", Path: "/webhooks", D: true, MinRole: "admin", Scope: "admin",
		Args: map[string]any{"url": "https://hooks.example.com/kadu", "event_codes": []string{"execution.failed"}},
		Body: `{"event_codes":["execution.failed"],"url":"https://hooks.example.com/kadu"}`},
	{Group: "webhooks", Tool: "kadu_webhooks_update", Method: "PATCH", Path: "/webhooks/{id}", D: true, I: true, MinRole: "admin", Scope: "admin",
		Args: map[string]any{"enabled": false}, Body: `{"enabled":false}`},
	{Group: "webhooks", Tool: "kadu_webhooks_delete", Method: "DELETE", Path: "/webhooks/{id}", D: true, I: true, MinRole: "admin", Scope: "admin"},
	{Group: "webhooks", Tool: "kadu_webhooks_rotate_secret", Method: "POST", Path: "/webhooks/{id}/rotate_secret", D: true, MinRole: "admin", Scope: "admin",
		Args: map[string]any{"overlap_seconds": 3600}, Body: `{"overlap_seconds":3600}`},
	{Group: "webhooks", Tool: "kadu_webhook_deliveries_list", Method: "GET", Path: "/webhook_deliveries", R: true, I: true, MinRole: "admin", Scope: "admin",
		Args:  map[string]any{"webhook_id": "whk_0193a5c4e1f27c3a9b1d2e4f5a6b7c8d", "status": "failed"},
		Query: "status=failed&webhook_id=whk_0193a5c4e1f27c3a9b1d2e4f5a6b7c8d"},
	{Group: "webhooks", Tool: "kadu_webhook_deliveries_get", Method: "GET", Path: "/webhook_deliveries/{id}", R: true, I: true, MinRole: "admin", Scope: "admin"},
	{Group: "webhooks", Tool: "kadu_webhook_deliveries_replay", Method: "POST", Path: "/webhook_deliveries/{id}/replay", D: true, MinRole: "admin", Scope: "admin"},
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
	"webhook_deliveries": "dlv_", "approvals": "apr_",
}

// SampleID returns a well-formed id for the row's path.
func (r Row) SampleID() string {
	collection := strings.Split(strings.TrimPrefix(r.Path, "/"), "/")[0]
	return idPrefixes[collection] + "0193a5c4e1f27c3a9b1d2e4f5a6b7c8d"
}
