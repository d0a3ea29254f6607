package api

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/kobana/kadu/core/api/routeclass"
	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/store"
)

func TestAuthorization(t *testing.T) {
	forEachBackend(t, map[string]func(*testing.T, *store.DB){
		"RoleScope": testRoleScope,
		"CrossOrg":  testCrossOrg,
	})
}

// routeCase is one route of the table (core/api/routeclass) with a
// request that succeeds for a caller with exactly the route's minimum role
// and scope, which the test takes from the table. T, X and F in path stand
// for a task, an execution and a file of the caller's organisation; the
// execution is in status (default waiting_input) and was launched by
// member-1.
type routeCase struct {
	method, path string
	body         any
	status       store.Status
}

// tableRoute returns the route-table spelling of a case's path, whose
// letters stand for ids.
func tableRoute(method, path string) string {
	return method + " " + routeclass.Prefix + strings.NewReplacer("/T", "/{id}", "/X", "/{id}", "/F", "/{id}", "/W", "/{id}", "/D", "/{id}").Replace(path)
}

// access returns the role and scope the table gives the route of rc.
func (rc routeCase) access(t *testing.T) (auth.Role, string) {
	t.Helper()
	for _, r := range routeclass.Routes() {
		if r.String() == tableRoute(rc.method, rc.path) {
			return auth.Role(r.Role), tokenScopes[r.Scope]
		}
	}
	t.Fatalf("%s is not in the route table", tableRoute(rc.method, rc.path))
	return "", ""
}

func routeCases() []routeCase {
	answer := map[string]any{"answer": map[string]any{"month": "2026-03"}}
	input := map[string]any{"input": map[string]any{"period": "2026-03"}}
	return []routeCase{
		{"GET", "/tasks", nil, ""},
		{"POST", "/tasks", map[string]any{"name": "new"}, ""},
		{"GET", "/tasks/T", nil, ""},
		{"PATCH", "/tasks/T", map[string]any{"name": "renamed"}, ""},
		{"DELETE", "/tasks/T", nil, ""},
		{"POST", "/tasks/T/run", input, ""},
		{"PUT", "/tasks/T/launch_policy", map[string]any{"roles": []string{"member"}}, ""},
		{"PUT", "/tasks/T/destinations", map[string]any{"destinations": []any{}}, ""},
		{"GET", "/executions", nil, ""},
		{"GET", "/executions/X", nil, ""},
		{"GET", "/executions/X/steps", nil, ""},
		{"POST", "/executions/X/continue", answer, ""},
		{"POST", "/executions/X/cancel", nil, ""},
		{"DELETE", "/executions/X", nil, store.StatusSucceeded},
		{"GET", "/usage", nil, ""},
		{"GET", "/files", nil, ""},
		{"POST", "/files", map[string]any{"filename": "a.csv", "content_type": "text/csv", "size_bytes": 10}, ""},
		{"GET", "/files/F", nil, ""},
		{"POST", "/files/F/confirm", nil, ""},
		{"GET", "/files/F/download", nil, ""},
		{"DELETE", "/files/F", nil, ""},
		{"GET", "/audit_events", nil, ""},
	}
}

// ownTables are the routes whose role and scope other tests check
// (testApprovalRoleScope, TestPlaybooks, testAuditAccess).
var ownTables = map[string]bool{"GET /api/v1/approvals/{id}": true, "GET /api/v1/playbooks": true,
	"GET /api/v1/audit_events/{id}": true}

// TestRouteCasesCoverTheTable fails when a route is added to the table
// without a case here or in webhookRouteCases, so that the role and scope
// the table gives it are exercised.
func TestRouteCasesCoverTheTable(t *testing.T) {
	covered := map[string]bool{}
	for _, rc := range routeCases() {
		covered[tableRoute(rc.method, rc.path)] = true
	}
	for _, rc := range webhookRouteCases {
		covered[tableRoute(rc.method, rc.path)] = true
	}
	for _, r := range routeclass.Routes() {
		if !covered[r.String()] && !ownTables[r.String()] {
			t.Errorf("%s has no routeCase: add one to routeCases (authz_test.go) with a body that succeeds", r)
		}
	}
}

// scopesWithout are granted scopes that, even closed under the lattice,
// lack the scope named.
var scopesWithout = map[string][]string{
	auth.ScopeRead:  {},
	auth.ScopeWrite: {auth.ScopeRun},
	auth.ScopeRun:   {auth.ScopeWrite},
	auth.ScopeAdmin: {auth.ScopeWrite, auth.ScopeRun},
}

func testRoleScope(t *testing.T, db *store.DB) {
	e := newEnv(t, db, withFakeBlobs)
	org := newOrg()
	own := e.token(owner(org))
	fixture := func(rc routeCase) string {
		task := e.createTask(own, "t", nil)
		status := rc.status
		if status == "" {
			status = store.StatusWaitingInput
		}
		x := e.executionIn(org, task, "member-1", status)
		return strings.NewReplacer("/T", "/"+task, "/X", "/"+x.ID, "/F", "/"+e.fileIn(org, "member-1")).Replace(rc.path)
	}
	roles := auth.Roles()
	for _, rc := range routeCases() {
		t.Run(rc.method+" "+rc.path, func(t *testing.T) {
			role, scope := rc.access(t)
			if i := slices.Index(roles, role); i > 0 {
				below := user{org, "member-1", roles[i-1], []string{auth.ScopeAdmin}}
				wantProblem(t, e.do(e.token(below), rc.method, fixture(rc), rc.body), http.StatusForbidden, "forbidden_role", "")
			}
			lacking := user{org, "member-1", auth.RoleOwner, scopesWithout[scope]}
			r := e.do(e.token(lacking), rc.method, fixture(rc), rc.body)
			wantProblem(t, r, http.StatusForbidden, "insufficient_scope", "")
			www := r.header.Get("WWW-Authenticate")
			if !strings.Contains(www, `error="insufficient_scope"`) || !strings.Contains(www, scope) ||
				!strings.Contains(www, `resource_metadata="https://kadu.test/.well-known/oauth-protected-resource/mcp"`) {
				t.Errorf("WWW-Authenticate = %q", www)
			}
			exactly := user{org, "member-1", role, []string{scope}}
			if r := e.do(e.token(exactly), rc.method, fixture(rc), rc.body); r.status >= 300 {
				t.Errorf("with role %s and scope %s: status %d: %s", role, scope, r.status, r.body)
			}
		})
	}
}

// testCrossOrg: another organisation's ids are 404 on every route, and its
// rows never appear in lists.
func testCrossOrg(t *testing.T, db *store.DB) {
	e := newEnv(t, db, withFakeBlobs)
	orgA, orgB := newOrg(), newOrg()
	tokA, tokB := e.token(owner(orgA)), e.token(owner(orgB))
	e.createTask(tokB, "mine", nil)
	for _, rc := range routeCases() {
		if !strings.Contains(rc.path, "/T") && !strings.Contains(rc.path, "/X") && !strings.Contains(rc.path, "/F") {
			continue
		}
		t.Run(rc.method+" "+rc.path, func(t *testing.T) {
			task := e.createTask(tokA, "theirs", nil)
			status := rc.status
			if status == "" {
				status = store.StatusWaitingInput
			}
			x := e.executionIn(orgA, task, "owner-1", status)
			path := strings.NewReplacer("/T", "/"+task, "/X", "/"+x.ID, "/F", "/"+e.fileIn(orgA, "owner-1")).Replace(rc.path)
			wantProblem(t, e.do(tokB, rc.method, path, rc.body), http.StatusNotFound, "not_found", "")
			// Untouched for its owner.
			if got := must(t, e.do(tokA, "GET", "/tasks/"+task, nil), http.StatusOK); got["version"] != 1.0 {
				t.Errorf("a foreign %s changed the task: %v", rc.method, got)
			}
			if got := must(t, e.do(tokA, "GET", "/executions/"+x.ID, nil), http.StatusOK); got["status"] != string(status) {
				t.Errorf("a foreign %s changed the execution: %v", rc.method, got)
			}
		})
	}
	tasks := must(t, e.do(tokB, "GET", "/tasks", nil), http.StatusOK)["data"].([]any)
	if len(tasks) != 1 || tasks[0].(map[string]any)["name"] != "mine" {
		t.Errorf("org B lists %v", tasks)
	}
	if x := must(t, e.do(tokB, "GET", "/executions", nil), http.StatusOK)["data"].([]any); len(x) != 0 {
		t.Errorf("org B lists executions %v", x)
	}
	if u := must(t, e.do(tokB, "GET", "/usage", nil), http.StatusOK); u["month_to_date"].(map[string]any)["executions"] != 0.0 {
		t.Errorf("org B usage %v", u)
	}
}
