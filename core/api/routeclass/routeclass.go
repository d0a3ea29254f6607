// Package routeclass is the route table of the Kadu API, as data: for each
// route its method and path, the role and scope it requires, what it can do
// — read, write, or something destructive — the first-party bundle and tool
// that mirror it, and the schemas of its bodies. The class lets the host,
// not a bundle, decide which of a bundle's operations may call a route
// (sdk/ABI.md, "Route classes"); the rest is what core/api serves and
// checks, what core/config grants the first-party bundles, and what
// core/api/openapi documents.
//
// A route is destructive exactly when the catalogue (sdk/ABI.md §6) marks the first-party tool
// that mirrors it destructiveHint: true — it deletes, spends money, sends
// the organisation's data somewhere, changes who may do what, or cannot be
// undone — so a partner's tool can never do without the person's
// confirmation what a first-party tool needs it for. Every other POST,
// PATCH and PUT is a write; every GET is a read.
//
// core/api registers exactly these routes (it refuses to start with a row
// and no handler, or a handler and no row); core/plugin enforces the
// classes on every api() call and in `kadu plugins validate`. It imports
// nothing of Kadu, so that all of them can use it.
package routeclass

import (
	"net/http"
	"strings"
)

// Prefix is where the API is mounted (core/api.BasePath; a test keeps
// them equal). Table paths start with it.
const Prefix = "/api/v1"

// Class is what a call of a route can do. Classes are ordered: an
// operation allowed a class may also call the routes of the classes below
// it.
type Class int

const (
	// Unknown is the class of a method and path that are no route of the
	// API. The host treats it as Destructive: it fails closed.
	Unknown Class = iota
	// Read only reads.
	Read
	// Write creates or changes data the organisation can change back.
	Write
	// Destructive deletes, spends money, sends data out of Kadu, changes
	// access, or cannot be undone: only a tool annotated destructiveHint:
	// true, which the person confirms before it runs, may call it.
	Destructive
)

// String returns "read", "write", "destructive" or "unknown".
func (c Class) String() string {
	switch c {
	case Read:
		return "read"
	case Write:
		return "write"
	case Destructive:
		return "destructive"
	}
	return "unknown"
}

// Route is one row of the table: a method and a path under Prefix whose
// {name} segments match any one segment, what a caller needs to call it,
// its class, the first-party tool that mirrors it, and the shape of its
// bodies. Everything that names a route (core/api's handlers and role ×
// scope checks, the first-party bundles' grants in core/config and
// config/kadu.yaml, the tool catalogue the bundles' tests check, the
// OpenAPI document) is derived from or checked against these rows.
type Route struct {
	Method string
	Path   string
	Class  Class

	// Role is the minimum role of the caller: viewer, member, admin or
	// owner (core/auth.Role). Scope is the access-token scope the call
	// needs: read, write, run or admin (core/auth.Scope*).
	Role  string
	Scope string

	// Query are the query parameters the route accepts; any other is a
	// 400. Nil for none.
	Query []string

	// Idempotent is true when repeating the call with the same arguments
	// has no further effect: the idempotentHint of its tool, and what a
	// client may retry without an idempotency key.
	Idempotent bool

	// Bundle is the first-party bundle granted the route (its name in
	// plugins.bundles), Tool the MCP tool of that bundle that mirrors the
	// route, "" when the bundle reaches it otherwise (a resource).
	Bundle string
	Tool   string

	// Summary says in a line what the route does (the OpenAPI summary).
	Summary string

	// Request names the schema of the JSON body (core/api/openapi's
	// components), "" when the route takes none; Response names the
	// schema of a successful answer, and Statuses are its statuses.
	Request  string
	Response string
	Statuses []int
}

// String returns the route in the manifest's syntax, "POST /api/v1/tasks/{id}/run".
func (r Route) String() string { return r.Method + " " + r.Path }

// list are the query parameters of every paginated list.
var list = []string{"limit", "cursor"}

func listAnd(more ...string) []string { return append(append([]string(nil), list...), more...) }

// Routes returns the table: every route the API serves, in the order of
// the route table of core/api. The slice is new on each call.
func Routes() []Route {
	const (
		get, post, patch, put, del = http.MethodGet, http.MethodPost, http.MethodPatch, http.MethodPut, http.MethodDelete
		read, write, destructive   = Read, Write, Destructive
		viewer, member, admin      = "viewer", "member", "admin"
		sRead, sWrite, sRun, sAdm  = "read", "write", "run", "admin"
		ok, created, accepted      = http.StatusOK, http.StatusCreated, http.StatusAccepted
	)
	rows := []Route{
		{Method: get, Path: "/tasks", Class: read, Role: viewer, Scope: sRead, Query: listAnd("q"), Idempotent: true,
			Bundle: "tasks", Tool: "kadu_tasks_list", Summary: "List tasks, newest first",
			Response: "TaskList", Statuses: []int{ok}},
		{Method: post, Path: "/tasks", Class: write, Role: admin, Scope: sAdm,
			Bundle: "tasks", Tool: "kadu_tasks_create", Summary: "Create a task",
			Request: "TaskCreate", Response: "Task", Statuses: []int{created}},
		{Method: get, Path: "/tasks/{id}", Class: read, Role: viewer, Scope: sRead, Idempotent: true,
			Bundle: "tasks", Tool: "kadu_tasks_get", Summary: "Get a task",
			Response: "Task", Statuses: []int{ok}},
		{Method: patch, Path: "/tasks/{id}", Class: write, Role: admin, Scope: sWrite, Idempotent: true,
			Bundle: "tasks", Tool: "kadu_tasks_update", Summary: "Change a task's fields",
			Request: "TaskUpdate", Response: "Task", Statuses: []int{ok}},
		{Method: del, Path: "/tasks/{id}", Class: destructive, Role: admin, Scope: sAdm, Idempotent: true,
			Bundle: "tasks", Tool: "kadu_tasks_delete", Summary: "Delete a task",
			Request: "Empty", Response: "Deleted", Statuses: []int{ok}},
		// Spends the organisation's money.
		{Method: post, Path: "/tasks/{id}/run", Class: destructive, Role: member, Scope: sRun,
			Bundle: "tasks", Tool: "kadu_tasks_run", Summary: "Run a task: queue an execution",
			Request: "TaskRun", Response: "Execution", Statuses: []int{accepted}},
		{Method: put, Path: "/tasks/{id}/launch_policy", Class: destructive, Role: admin, Scope: sAdm, Idempotent: true,
			Bundle: "tasks", Tool: "kadu_tasks_set_launch_policy", Summary: "Set who may run a task",
			Request: "LaunchPolicy", Response: "Task", Statuses: []int{ok}},
		// Where the organisation's data is sent.
		{Method: put, Path: "/tasks/{id}/destinations", Class: destructive, Role: admin, Scope: sAdm, Idempotent: true,
			Bundle: "tasks", Tool: "kadu_tasks_set_destinations", Summary: "Set the webhooks that receive a task's execution events",
			Request: "Destinations", Response: "Task", Statuses: []int{ok}},
		{Method: get, Path: "/executions", Class: read, Role: viewer, Scope: sRead,
			Query: listAnd("task_id", "status", "created_after", "created_before"), Idempotent: true,
			Bundle: "executions", Tool: "kadu_executions_list", Summary: "List executions, newest first",
			Response: "ExecutionList", Statuses: []int{ok}},
		{Method: get, Path: "/executions/{id}", Class: read, Role: viewer, Scope: sRead, Idempotent: true,
			Bundle: "executions", Tool: "kadu_executions_get", Summary: "Get an execution",
			Response: "Execution", Statuses: []int{ok}},
		{Method: get, Path: "/executions/{id}/steps", Class: read, Role: viewer, Scope: sRead, Query: listAnd(), Idempotent: true,
			Bundle: "executions", Tool: "kadu_executions_steps_list", Summary: "List an execution's steps, in order",
			Response: "StepList", Statuses: []int{ok}},
		// Answers questions and approvals; resumes spending.
		{Method: post, Path: "/executions/{id}/continue", Class: destructive, Role: member, Scope: sRun,
			Bundle: "executions", Tool: "kadu_executions_continue", Summary: "Answer a waiting execution and resume it",
			Request: "ExecutionContinue", Response: "Execution", Statuses: []int{accepted}},
		{Method: post, Path: "/executions/{id}/cancel", Class: destructive, Role: member, Scope: sRun, Idempotent: true,
			Bundle: "executions", Tool: "kadu_executions_cancel", Summary: "Cancel an execution",
			Request: "Empty", Response: "Execution", Statuses: []int{ok, accepted}},
		{Method: del, Path: "/executions/{id}", Class: destructive, Role: admin, Scope: sAdm, Idempotent: true,
			Bundle: "executions", Tool: "kadu_executions_delete", Summary: "Delete a finished execution",
			Request: "Empty", Response: "Deleted", Statuses: []int{ok}},
		{Method: get, Path: "/files", Class: read, Role: viewer, Scope: sRead,
			Query: listAnd("purpose", "execution_id", "status"), Idempotent: true,
			Bundle: "files", Tool: "kadu_files_list", Summary: "List files, newest first",
			Response: "FileList", Statuses: []int{ok}},
		{Method: post, Path: "/files", Class: write, Role: member, Scope: sWrite,
			Bundle: "files", Tool: "kadu_files_create", Summary: "Register an upload and get its presigned URL",
			Request: "FileCreate", Response: "FileCreated", Statuses: []int{created}},
		{Method: get, Path: "/files/{id}", Class: read, Role: viewer, Scope: sRead, Idempotent: true,
			Bundle: "files", Tool: "kadu_files_get", Summary: "Get a file",
			Response: "File", Statuses: []int{ok}},
		{Method: post, Path: "/files/{id}/confirm", Class: write, Role: member, Scope: sWrite, Idempotent: true,
			Bundle: "files", Tool: "kadu_files_confirm", Summary: "Confirm an upload: check its size and type and make it ready",
			Request: "Empty", Response: "File", Statuses: []int{ok}},
		{Method: get, Path: "/files/{id}/download", Class: read, Role: viewer, Scope: sRead, Idempotent: true,
			Bundle: "files", Tool: "kadu_files_download", Summary: "Get a presigned download URL of a ready file",
			Response: "Download", Statuses: []int{ok}},
		{Method: del, Path: "/files/{id}", Class: destructive, Role: member, Scope: sWrite, Idempotent: true,
			Bundle: "files", Tool: "kadu_files_delete", Summary: "Delete a file",
			Request: "Empty", Response: "Deleted", Statuses: []int{ok}},
		{Method: get, Path: "/webhooks", Class: read, Role: admin, Scope: sAdm, Query: listAnd(), Idempotent: true,
			Bundle: "webhooks", Tool: "kadu_webhooks_list", Summary: "List webhooks",
			Response: "WebhookList", Statuses: []int{ok}},
		// Sends the organisation's events to a new URL.
		{Method: post, Path: "/webhooks", Class: destructive, Role: admin, Scope: sAdm,
			Bundle: "webhooks", Tool: "kadu_webhooks_create", Summary: "Create a webhook; the answer shows its secret once",
			Request: "WebhookCreate", Response: "WebhookWithSecret", Statuses: []int{created}},
		{Method: get, Path: "/webhooks/{id}", Class: read, Role: admin, Scope: sAdm, Idempotent: true,
			Bundle: "webhooks", Tool: "kadu_webhooks_get", Summary: "Get a webhook",
			Response: "Webhook", Statuses: []int{ok}},
		{Method: patch, Path: "/webhooks/{id}", Class: destructive, Role: admin, Scope: sAdm, Idempotent: true,
			Bundle: "webhooks", Tool: "kadu_webhooks_update", Summary: "Change a webhook's URL, events or status",
			Request: "WebhookUpdate", Response: "Webhook", Statuses: []int{ok}},
		{Method: del, Path: "/webhooks/{id}", Class: destructive, Role: admin, Scope: sAdm, Idempotent: true,
			Bundle: "webhooks", Tool: "kadu_webhooks_delete", Summary: "Delete a webhook",
			Request: "Empty", Response: "Deleted", Statuses: []int{ok}},
		{Method: post, Path: "/webhooks/{id}/rotate_secret", Class: destructive, Role: admin, Scope: sAdm,
			Bundle: "webhooks", Tool: "kadu_webhooks_rotate_secret", Summary: "Rotate a webhook's secret; the answer shows the new one once",
			Request: "RotateSecret", Response: "WebhookWithSecret", Statuses: []int{ok}},
		{Method: get, Path: "/webhook_deliveries", Class: read, Role: admin, Scope: sAdm,
			Query: listAnd("webhook_id", "event_code", "status"), Idempotent: true,
			Bundle: "webhooks", Tool: "kadu_webhook_deliveries_list", Summary: "List webhook deliveries, newest first",
			Response: "DeliveryList", Statuses: []int{ok}},
		{Method: get, Path: "/webhook_deliveries/{id}", Class: read, Role: admin, Scope: sAdm, Idempotent: true,
			Bundle: "webhooks", Tool: "kadu_webhook_deliveries_get", Summary: "Get a delivery and its attempts",
			Response: "DeliveryDetail", Statuses: []int{ok}},
		// Sends data out again.
		{Method: post, Path: "/webhook_deliveries/{id}/replay", Class: destructive, Role: admin, Scope: sAdm,
			Bundle: "webhooks", Tool: "kadu_webhook_deliveries_replay", Summary: "Send a delivery once more",
			Request: "Empty", Response: "Delivery", Statuses: []int{accepted}},
		// The audit trail (docs/audit.md): who did what, for admins and
		// owners. The webhooks bundle is the admin bundle: every route it is
		// granted needs admin and kadu.admin.
		{Method: get, Path: "/audit_events", Class: read, Role: admin, Scope: sAdm,
			Query: listAnd("since", "until", "subject", "tool", "route", "action", "outcome"), Idempotent: true,
			Bundle: "webhooks", Tool: "kadu_audit_events_list", Summary: "List audit events, newest first",
			Response: "AuditEventList", Statuses: []int{ok}},
		// The webhooks bundle serves it as the resource template kobana://kadu/audit_events/{id}.
		{Method: get, Path: "/audit_events/{id}", Class: read, Role: admin, Scope: sAdm, Idempotent: true,
			Bundle: "webhooks", Summary: "Get an audit event",
			Response: "AuditEvent", Statuses: []int{ok}},
		{Method: get, Path: "/approvals/{id}", Class: read, Role: viewer, Scope: sRead, Idempotent: true,
			Bundle: "executions", Tool: "kadu_approvals_get", Summary: "Get an approval link's status and outcome",
			Response: "Approval", Statuses: []int{ok}},
		{Method: get, Path: "/usage", Class: read, Role: viewer, Scope: sRead, Idempotent: true,
			Bundle: "tasks", Tool: "kadu_usage_get", Summary: "Get the plan's limits and this month's usage",
			Response: "Usage", Statuses: []int{ok}},
		// The tasks bundle serves it as the resource kobana://kadu/playbooks.
		{Method: get, Path: "/playbooks", Class: read, Role: viewer, Scope: sRead, Idempotent: true,
			Bundle: "tasks", Summary: "Get the reference of the built-in runner's playbooks",
			Response: "Playbooks", Statuses: []int{ok}},
	}
	for i := range rows {
		rows[i].Path = Prefix + rows[i].Path
	}
	return rows
}

// Grants returns the routes granted to the first-party bundle named, in
// table order, as plugins.bundles.<name>.routes lists them.
func Grants(bundle string) []string {
	var out []string
	for _, r := range Routes() {
		if r.Bundle == bundle {
			out = append(out, r.String())
		}
	}
	return out
}

// Table is the table compiled for lookups. Build it once with New; it is
// immutable and safe for concurrent use.
type Table struct {
	rows []row
}

type row struct {
	Route
	segs []string // "" for a {name} segment
}

// New compiles Routes.
func New() *Table {
	t := &Table{}
	for _, r := range Routes() {
		t.rows = append(t.rows, row{Route: r, segs: split(r.Path)})
	}
	return t
}

// split returns the segments of a table path, "" for each parameter.
func split(path string) []string {
	segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	for i, s := range segs {
		if strings.HasPrefix(s, "{") {
			segs[i] = ""
		}
	}
	return segs
}

// Of returns the class of a request: its method and its path's segments,
// decoded, without the leading empty one (route.Segments in core/plugin),
// e.g. ["api","v1","tasks","tsk_1","run"]. Unknown when no route matches.
func (t *Table) Of(method string, segments []string) Class {
	for _, r := range t.rows {
		if r.Method == method && matches(r.segs, segments, nil) {
			return r.Class
		}
	}
	return Unknown
}

// OfPattern returns the class of a manifest's route pattern, whose
// parameter segments (params[i] true) may stand for any segment: the
// highest class of the routes a request matching it could reach, or
// Unknown when it can reach none.
func (t *Table) OfPattern(method string, segments []string, params []bool) Class {
	c := Unknown
	for _, r := range t.rows {
		if r.Method == method && matches(r.segs, segments, params) {
			c = max(c, r.Class)
		}
	}
	return c
}

// matches reports whether a request could match both the table row segs
// and segments (a parameter of either side matches any segment).
func matches(segs, segments []string, params []bool) bool {
	if len(segs) != len(segments) {
		return false
	}
	for i, s := range segs {
		if s == "" || (params != nil && params[i]) {
			continue
		}
		if s != segments[i] {
			return false
		}
	}
	return true
}
