package api

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/store"
)

func TestAuthorization(t *testing.T) {
	forEachBackend(t, map[string]func(*testing.T, *store.DB){
		"RoleScope": testRoleScope,
		"CrossOrg":  testCrossOrg,
	})
}

// routeCase is one route of docs/reference/rest.md#routes with a request that succeeds for a
// caller with exactly the minimum role and scope. T and X in path stand for
// a task and an execution of the caller's organisation; the execution is in
// status (default waiting_input) and was launched by member-1.
type routeCase struct {
	method, path string
	body         any
	role         auth.Role
	scope        string
	status       store.Status
}

func routeCases() []routeCase {
	answer := map[string]any{"answer": map[string]any{"month": "2026-03"}}
	input := map[string]any{"input": map[string]any{"period": "2026-03"}}
	return []routeCase{
		{"GET", "/tasks", nil, auth.RoleViewer, auth.ScopeRead, ""},
		{"POST", "/tasks", map[string]any{"name": "new"}, auth.RoleAdmin, auth.ScopeAdmin, ""},
		{"GET", "/tasks/T", nil, auth.RoleViewer, auth.ScopeRead, ""},
		{"PATCH", "/tasks/T", map[string]any{"name": "renamed"}, auth.RoleAdmin, auth.ScopeWrite, ""},
		{"DELETE", "/tasks/T", nil, auth.RoleAdmin, auth.ScopeAdmin, ""},
		{"POST", "/tasks/T/run", input, auth.RoleMember, auth.ScopeRun, ""},
		{"PUT", "/tasks/T/launch_policy", map[string]any{"roles": []string{"member"}}, auth.RoleAdmin, auth.ScopeAdmin, ""},
		{"PUT", "/tasks/T/destinations", map[string]any{"destinations": []any{}}, auth.RoleAdmin, auth.ScopeAdmin, ""},
		{"GET", "/executions", nil, auth.RoleViewer, auth.ScopeRead, ""},
		{"GET", "/executions/X", nil, auth.RoleViewer, auth.ScopeRead, ""},
		{"GET", "/executions/X/steps", nil, auth.RoleViewer, auth.ScopeRead, ""},
		{"POST", "/executions/X/continue", answer, auth.RoleMember, auth.ScopeRun, ""},
		{"POST", "/executions/X/cancel", nil, auth.RoleMember, auth.ScopeRun, ""},
		{"DELETE", "/executions/X", nil, auth.RoleAdmin, auth.ScopeAdmin, store.StatusSucceeded},
		{"GET", "/usage", nil, auth.RoleViewer, auth.ScopeRead, ""},
		{"GET", "/files", nil, auth.RoleViewer, auth.ScopeRead, ""},
		{"POST", "/files", map[string]any{"filename": "a.csv", "content_type": "text/csv", "size_bytes": 10}, auth.RoleMember, auth.ScopeWrite, ""},
		{"GET", "/files/F", nil, auth.RoleViewer, auth.ScopeRead, ""},
		{"POST", "/files/F/confirm", nil, auth.RoleMember, auth.ScopeWrite, ""},
		{"GET", "/files/F/download", nil, auth.RoleViewer, auth.ScopeRead, ""},
		{"DELETE", "/files/F", nil, auth.RoleMember, auth.ScopeWrite, ""},
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
	// The webhook, approval and playbook routes have their own tables (testWebhookRoleScope,
	// testApprovalRoleScope, TestPlaybooks).
	if n := len(e.api.routes()) - len(e.api.webhookRoutes()) - len(e.api.approvalRoutes()) - len(e.api.playbookRoutes()); n != len(routeCases()) {
		t.Fatalf("the table has %d routes, the API %d", len(routeCases()), n)
	}
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
			if i := slices.Index(roles, rc.role); i > 0 {
				below := user{org, "member-1", roles[i-1], []string{auth.ScopeAdmin}}
				wantProblem(t, e.do(e.token(below), rc.method, fixture(rc), rc.body), http.StatusForbidden, "forbidden_role", "")
			}
			lacking := user{org, "member-1", auth.RoleOwner, scopesWithout[rc.scope]}
			r := e.do(e.token(lacking), rc.method, fixture(rc), rc.body)
			wantProblem(t, r, http.StatusForbidden, "insufficient_scope", "")
			www := r.header.Get("WWW-Authenticate")
			if !strings.Contains(www, `error="insufficient_scope"`) || !strings.Contains(www, rc.scope) ||
				!strings.Contains(www, `resource_metadata="https://kadu.test/.well-known/oauth-protected-resource/mcp"`) {
				t.Errorf("WWW-Authenticate = %q", www)
			}
			exactly := user{org, "member-1", rc.role, []string{rc.scope}}
			if r := e.do(e.token(exactly), rc.method, fixture(rc), rc.body); r.status >= 300 {
				t.Errorf("with role %s and scope %s: status %d: %s", rc.role, rc.scope, r.status, r.body)
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
