package plugin

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kobana/kadu/core/auth"
)

type apiAnswer struct {
	Status int             `json:"status"`
	Body   json.RawMessage `json:"body"`
}

// fetch makes the echo guest call the API once per path, from its
// destructive tool (which route classes allow every granted route), and
// returns what it read back.
func (e *env) fetch(t *testing.T, method, body string, paths ...string) []apiAnswer {
	t.Helper()
	return e.fetchAs(t, "fetch_destructive", method, body, paths...)
}

// fetchAs is fetch from the echo tool named tool: fetch (read-only),
// fetch_write or fetch_destructive.
func (e *env) fetchAs(t *testing.T, tool, method, body string, paths ...string) []apiAnswer {
	t.Helper()
	args, _ := json.Marshal(map[string]any{"method": method, "body": body, "paths": paths})
	res, err := e.call(t, "org_a", tool, string(args))
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	var out struct {
		Answers []apiAnswer `json:"answers"`
	}
	if err := json.Unmarshal(res.StructuredContent, &out); err != nil {
		t.Fatal(err)
	}
	return out.Answers
}

func errorCode(t *testing.T, body json.RawMessage) string {
	t.Helper()
	var b struct {
		Status int `json:"status"`
		Errors []struct {
			Code  string  `json:"code"`
			Hint  string  `json:"hint"`
			Param *string `json:"param"`
		} `json:"errors"`
		RequestID string `json:"request_id"`
	}
	if err := json.Unmarshal(body, &b); err != nil || len(b.Errors) != 1 || b.Errors[0].Hint == "" || b.RequestID != "req_test" {
		t.Fatalf("refusal %s is not in the API's error shape", body)
	}
	return b.Errors[0].Code
}

func TestAPIRoutesAllowList(t *testing.T) {
	// The grant is wider than the manifest: a call must match both.
	cfg := bundle(t, "echo")
	cfg.Routes = append(cfg.Routes, "GET /api/v1/executions", "DELETE /api/v1/tasks/{id}")
	e := newEnv(t, nil, cfg)
	tests := []struct {
		name, method, path string
		wantStatus         int
	}{
		{name: "declared and granted", method: "GET", path: "/api/v1/tasks", wantStatus: 200},
		{name: "query ignored for matching", method: "GET", path: "/api/v1/tasks/tsk_1?expand=steps", wantStatus: 200},
		{name: "parameter route", method: "POST", path: "/api/v1/tasks/tsk_1/run", wantStatus: 200},
		{name: "granted, not declared", method: "GET", path: "/api/v1/executions", wantStatus: 403},
		{name: "granted, not declared, other method", method: "DELETE", path: "/api/v1/tasks/tsk_1", wantStatus: 403},
		{name: "neither", method: "GET", path: "/api/v1/webhooks", wantStatus: 403},
		{name: "dot segments", method: "GET", path: "/api/v1/tasks/../webhooks", wantStatus: 403},
		{name: "lowercase method", method: "get", path: "/api/v1/tasks", wantStatus: 403},
		{name: "absolute URL", method: "GET", path: "https://evil.test/api/v1/tasks", wantStatus: 403},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(e.api.recorded())
			got := e.fetch(t, tt.method, "", tt.path)[0]
			if got.Status != tt.wantStatus {
				t.Fatalf("%s %s = %d %s, want %d", tt.method, tt.path, got.Status, got.Body, tt.wantStatus)
			}
			dispatched := len(e.api.recorded()) - before
			if tt.wantStatus == 403 {
				if code := errorCode(t, got.Body); code != "route_not_granted" {
					t.Fatalf("refusal code = %s, want route_not_granted", code)
				}
				if dispatched != 0 {
					t.Fatal("a refused route reached the API")
				}
			} else if dispatched != 1 {
				t.Fatalf("%d dispatches, want 1", dispatched)
			}
		})
	}
}

func TestAPIBudgetPerInvocation(t *testing.T) {
	cfg := bundle(t, "echo")
	cfg.Limits.APICalls = 3
	e := newEnv(t, nil, cfg)
	paths := []string{"/api/v1/tasks", "/api/v1/tasks", "/api/v1/tasks", "/api/v1/tasks", "/api/v1/tasks"}
	var statuses []int
	answers := e.fetch(t, "GET", "", paths...)
	for _, a := range answers {
		statuses = append(statuses, a.Status)
	}
	if want := []int{200, 200, 200, 429, 429}; !reflect.DeepEqual(statuses, want) {
		t.Fatalf("statuses = %v, want %v", statuses, want)
	}
	if code := errorCode(t, answers[3].Body); code != "api_budget_exhausted" {
		t.Fatalf("code = %s", code)
	}
	// The hint names the key an operator sets (there is no
	// limits.api_calls_per_invocation).
	if !strings.Contains(string(answers[3].Body), "plugins.bundles.echo.api_calls") {
		t.Errorf("answer %s does not name plugins.bundles.echo.api_calls", answers[3].Body)
	}
	if n := len(e.api.recorded()); n != 3 {
		t.Fatalf("the API saw %d calls, want 3", n)
	}
	// The budget is per invocation: the next call starts afresh.
	if a := e.fetch(t, "GET", "", "/api/v1/tasks")[0]; a.Status != 200 {
		t.Fatalf("next invocation = %d", a.Status)
	}
}

func TestAPIBodyCap(t *testing.T) {
	// The guest builds and hands over a body of over 1 MiB: on a busy
	// machine under the race detector that can take longer than the
	// default deadline, which is not what this test is about.
	cfg := bundle(t, "echo")
	cfg.Limits.Timeout = time.Minute
	e := newEnv(t, nil, cfg)
	if a := e.fetch(t, "POST", `{"input":{"a":1}}`, "/api/v1/tasks/tsk_1/run")[0]; a.Status != 200 {
		t.Fatalf("small body = %d", a.Status)
	}
	if got := e.api.recorded()[0]; got.Body != `{"input":{"a":1}}` || got.Method != "POST" {
		t.Fatalf("dispatcher got %+v", got)
	}
	big := strings.Repeat("x", maxAPIBody+1)
	a := e.fetch(t, "POST", big, "/api/v1/tasks/tsk_1/run")[0]
	if a.Status != 413 || errorCode(t, a.Body) != "payload_too_large" {
		t.Fatalf("body over 1 MiB = %d %s", a.Status, a.Body)
	}
	if n := len(e.api.recorded()); n != 1 {
		t.Fatal("an oversized body reached the API")
	}
}

func TestCallerInfoAndConfig(t *testing.T) {
	cfg := bundle(t, "echo")
	cfg.Config = map[string]string{"greeting": "s3cr3t-greeting"}
	e := newEnv(t, nil, cfg)
	res, err := e.call(t, "org_a", "whoami", `{}`)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Caller      map[string]any `json:"caller"`
		Greeting    string         `json:"greeting"`
		HasGreeting bool           `json:"has_greeting"`
	}
	if err := json.Unmarshal(res.StructuredContent, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"org_id": "org_a", "user_id": "user-org_a", "role": "admin",
		"scopes":     []any{auth.ScopeAdmin, auth.ScopeRead, auth.ScopeRun, auth.ScopeWrite},
		"request_id": "req_test", "client": map[string]any{"name": "test-client", "version": "1.0"},
	}
	if !reflect.DeepEqual(got.Caller, want) {
		t.Fatalf("caller_info = %v\nwant %v", got.Caller, want)
	}
	if !got.HasGreeting || got.Greeting != "s3cr3t-greeting" {
		t.Fatalf("config_get = %q, %v", got.Greeting, got.HasGreeting)
	}
	if strings.Contains(e.logs.String(), "s3cr3t") {
		t.Fatal("a config value reached the log")
	}
	if !strings.Contains(e.logs.String(), `"msg":"bundle: whoami called"`) || !strings.Contains(e.logs.String(), `"request_id":"req_test"`) {
		t.Fatalf("the guest's log() is missing or lacks the request id:\n%s", e.logs.String())
	}

	e2 := newEnv(t, nil, bundle(t, "echo"))
	res, err = e2.call(t, "org_a", "whoami", `{}`)
	if err != nil {
		t.Fatal(err)
	}
	if s := structured(t, res); s["has_greeting"] != false {
		t.Fatalf("config_get of an absent key = %v", s)
	}
}
