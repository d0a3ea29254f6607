// Package routeclass is the one table that says what each route of the Kadu
// API can do — read, write, or something destructive — so that the host,
// not a bundle, decides which of a bundle's operations may call it
// (sdk/ABI.md, "Route classes").
//
// A route is destructive exactly when the catalogue (sdk/ABI.md §6) marks the first-party tool
// that mirrors it destructiveHint: true — it deletes, spends money, sends
// the organisation's data somewhere, changes who may do what, or cannot be
// undone — so a partner's tool can never do without the person's
// confirmation what a first-party tool needs it for. Every other POST,
// PATCH and PUT is a write; every GET is a read.
//
// core/api's tests check that the table and the registered routes are the
// same set; core/plugin enforces it on every api() call and in
// `kadu plugins validate`. It imports nothing of Kadu, so both can use it.
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
// {name} segments match any one segment, and its class.
type Route struct {
	Method string
	Path   string
	Class  Class
}

// String returns the route in the manifest's syntax, "POST /api/v1/tasks/{id}/run".
func (r Route) String() string { return r.Method + " " + r.Path }

// Routes returns the table: every route the API serves, in the order of
// the route table of core/api. The slice is new on each call.
func Routes() []Route {
	const (
		get, post, patch, put, del = http.MethodGet, http.MethodPost, http.MethodPatch, http.MethodPut, http.MethodDelete
		read, write, destructive   = Read, Write, Destructive
	)
	rows := []Route{
		{get, "/tasks", read},
		{post, "/tasks", write},
		{get, "/tasks/{id}", read},
		{patch, "/tasks/{id}", write},
		{del, "/tasks/{id}", destructive},
		{post, "/tasks/{id}/run", destructive}, // spends the organisation's money
		{put, "/tasks/{id}/launch_policy", destructive},
		{put, "/tasks/{id}/destinations", destructive}, // where the organisation's data is sent
		{get, "/executions", read},
		{get, "/executions/{id}", read},
		{get, "/executions/{id}/steps", read},
		{post, "/executions/{id}/continue", destructive}, // answers questions and approvals; resumes spending
		{post, "/executions/{id}/cancel", destructive},
		{del, "/executions/{id}", destructive},
		{get, "/files", read},
		{post, "/files", write},
		{get, "/files/{id}", read},
		{post, "/files/{id}/confirm", write},
		{get, "/files/{id}/download", read},
		{del, "/files/{id}", destructive},
		{get, "/webhooks", read},
		{post, "/webhooks", destructive}, // sends the organisation's events to a new URL
		{get, "/webhooks/{id}", read},
		{patch, "/webhooks/{id}", destructive},
		{del, "/webhooks/{id}", destructive},
		{post, "/webhooks/{id}/rotate_secret", destructive},
		{get, "/webhook_deliveries", read},
		{get, "/webhook_deliveries/{id}", read},
		{post, "/webhook_deliveries/{id}/replay", destructive}, // sends data out again
		{get, "/approvals/{id}", read},
		{get, "/usage", read},
		{get, "/playbooks", read},
	}
	for i := range rows {
		rows[i].Path = Prefix + rows[i].Path
	}
	return rows
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
