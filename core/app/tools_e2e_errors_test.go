package app

import (
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"testing"
)

// Tool calls that go wrong: the API refuses them, or their arguments never
// get past the inputSchema. TestToolsEndToEnd runs these groups.

// testToolInvalidArguments sends arguments the tool's inputSchema refuses:
// each answer is an isError result naming the field, and none reaches the
// API (its access log never sees the organisation).
func testToolInvalidArguments(t *testing.T, fx *toolsFixture) {
	const org = "org_tools_args"
	admin := fx.as(t, TokenOptions{OrgID: org, Role: "admin"})
	tests := []struct {
		tool string
		args string
		want string // in the message: the field and what is wrong
	}{
		{"kadu_tasks_create", `{"name":"Conciliação","colour":"red"}`, "additional properties 'colour' not allowed"},
		{"kadu_tasks_create", `{"name":42}`, "/name: got number, want string"},
		{"kadu_tasks_create", `{"description":"no name"}`, "missing property 'name'"},
		{"kadu_tasks_get", `{"id":"tsk_123"}`, "/id: 'tsk_123' does not match pattern"},
		{"kadu_tasks_run", `{"id":"tsk_` + unknownHex + `","input":"not an object"}`, "/input: got string, want object"},
		{"kadu_executions_list", `{"limit":"ten"}`, "/limit: got string, want integer"},
		{"kadu_executions_list", `{"limit":500}`, "/limit: maximum: got 500, want 100"},
		{"kadu_files_create", `{"filename":"a.csv","content_type":"text/csv","size_bytes":"12"}`, "/size_bytes: got string, want integer"},
		{"kadu_webhooks_create", `{"url":"https://hooks.example.com/k","event_codes":["file.deleted"]}`, "/event_codes/0: value must be one of"},
		{"kadu_webhooks_update", `{"id":"whk_` + unknownHex + `","enabled":"yes"}`, "/enabled: got string, want boolean"},
		{"kadu_webhook_deliveries_replay", `{"id":"whk_` + unknownHex + `"}`, "/id: 'whk_" + unknownHex + "' does not match pattern '^dlv_"},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+tt.args, func(t *testing.T) {
			a := admin.in(t).call(tt.tool, json.RawMessage(tt.args))
			if !a.IsError || !strings.HasPrefix(a.Text, "Invalid arguments for "+tt.tool+": ") || !strings.Contains(a.Text, tt.want) {
				t.Errorf("isError=%v %q\nwant an isError result naming %q", a.IsError, a.Text, tt.want)
			}
		})
	}
	if n := apiRequestsOf(fx.srv, org); n != 0 {
		t.Errorf("invalid arguments reached the API %d times", n)
	}
	// The check above can see a call that does reach the API.
	admin.ok("kadu_usage_get", map[string]any{})
	if n := apiRequestsOf(fx.srv, org); n != 1 {
		t.Errorf("the API logged %d requests of %s after one valid call, want 1", n, org)
	}
}

// apiRequestsOf counts the API's access-log lines for org.
func apiRequestsOf(srv *testServer, org string) int {
	n := 0
	for line := range strings.Lines(srv.logs.String()) {
		if strings.Contains(line, `"msg":"api request"`) && strings.Contains(line, `"org_id":"`+org+`"`) {
			n++
		}
	}
	return n
}

// testToolAPIErrors checks that the API's refusals come back as isError
// results the model can act on: another organisation's ids are not found,
// exactly like ids that never existed, and nothing of theirs changes.
func testToolAPIErrors(t *testing.T, fx *toolsFixture) {
	mine := fx.as(t, TokenOptions{OrgID: "org_tools_errors_mine", Role: "admin"})
	theirs := fx.as(t, TokenOptions{OrgID: "org_tools_errors_theirs", Role: "admin"})

	// Their objects, made through REST.
	const secret = "Folha da diretoria"
	task := mustREST(t, theirs.rest, "POST", "/tasks", 201, askTaskJSON(secret))["id"].(string)
	exe := mustREST(t, theirs.rest, "POST", "/tasks/"+task+"/run", 202, `{}`)["id"].(string)
	file := mustREST(t, theirs.rest, "POST", "/files", 201,
		`{"filename":"diretoria.csv","content_type":"text/csv","size_bytes":10}`)["file"].(map[string]any)["id"].(string)
	hook := mustREST(t, theirs.rest, "POST", "/webhooks", 201,
		`{"url":"https://hooks.example.com/diretoria","event_codes":["webhook.disabled"]}`)["id"].(string)
	if got := theirs.rest.waitExecution(exe); got["status"] != "waiting_input" {
		t.Fatalf("their execution is %v, want waiting_input", got["status"])
	}

	tests := []struct {
		tool  string
		id    string
		extra map[string]any
	}{
		{tool: "kadu_tasks_get", id: task},
		{tool: "kadu_tasks_update", id: task, extra: map[string]any{"name": "mine now"}},
		{tool: "kadu_tasks_set_launch_policy", id: task, extra: map[string]any{"roles": []string{"owner"}}},
		{tool: "kadu_tasks_set_destinations", id: task, extra: map[string]any{"destinations": []any{}}},
		{tool: "kadu_tasks_run", id: task},
		{tool: "kadu_tasks_delete", id: task},
		{tool: "kadu_executions_get", id: exe},
		{tool: "kadu_executions_steps_list", id: exe},
		{tool: "kadu_executions_continue", id: exe, extra: map[string]any{"answer": map[string]any{"answer": "x"}}},
		{tool: "kadu_executions_cancel", id: exe},
		{tool: "kadu_executions_delete", id: exe},
		{tool: "kadu_files_get", id: file},
		{tool: "kadu_files_confirm", id: file},
		{tool: "kadu_files_download", id: file},
		{tool: "kadu_files_delete", id: file},
		{tool: "kadu_webhooks_get", id: hook},
		{tool: "kadu_webhooks_update", id: hook, extra: map[string]any{"description": "mine now"}},
		{tool: "kadu_webhooks_rotate_secret", id: hook},
		{tool: "kadu_webhooks_delete", id: hook},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" of another organisation", func(t *testing.T) {
			mine := mine.in(t)
			args := func(id string) map[string]any {
				a := map[string]any{"id": id}
				maps.Copy(a, tt.extra)
				return a
			}
			got := mine.fails(tt.tool, args(tt.id), "not_found")
			prefix, _, _ := strings.Cut(tt.id, "_")
			never := prefix + "_" + unknownHex
			want := mine.fails(tt.tool, args(never), "not_found")
			if strings.ReplaceAll(fmt.Sprint(got), tt.id, never) != fmt.Sprint(want) {
				t.Errorf("their id answers %v\na made-up id answers %v: existence leaks", got, want)
			}
			if strings.Contains(fmt.Sprint(got), secret) {
				t.Errorf("the answer shows their data: %v", got)
			}
		})
	}
	// Nothing of theirs changed.
	if got := mustREST(t, theirs.rest, "GET", "/tasks/"+task, 200, ""); got["name"] != secret || got["version"] != float64(1) {
		t.Errorf("their task is now %v", got)
	}
	if got := mustREST(t, theirs.rest, "GET", "/executions/"+exe, 200, ""); got["status"] != "waiting_input" {
		t.Errorf("their execution is now %v", got["status"])
	}
	mustREST(t, theirs.rest, "GET", "/files/"+file, 200, "")
	if got := mustREST(t, theirs.rest, "GET", "/webhooks/"+hook, 200, ""); got["previous_secret_expires_at"] != nil || got["description"] != "" {
		t.Errorf("their webhook changed: %v", got)
	}

	// Refusals of the caller's own objects carry the API's code and field.
	own := mustREST(t, mine.rest, "POST", "/tasks", 201, summaryTaskJSON("Resumo"))["id"].(string)
	e := mine.fails("kadu_tasks_run", map[string]any{"id": own, "input": map[string]any{}}, "validation_error")
	if e["param"] != "input" || !strings.Contains(fmt.Sprint(e["detail"]), "statement_csv") {
		t.Errorf("validation error of the run's input = %v, want param input naming statement_csv", e)
	}
	pending := mustREST(t, mine.rest, "POST", "/files", 201,
		`{"filename":"a.csv","content_type":"text/csv","size_bytes":10}`)["file"].(map[string]any)["id"].(string)
	mine.fails("kadu_files_confirm", map[string]any{"id": pending}, "invalid_state")
}

// mustREST calls the REST API and requires status; it returns the body.
func mustREST(t *testing.T, c restClient, method, path string, status int, body string) map[string]any {
	t.Helper()
	got, _, out := c.do(method, path, body)
	if got != status {
		t.Fatalf("%s %s: %d %v, want %d", method, path, got, out, status)
	}
	return out
}
