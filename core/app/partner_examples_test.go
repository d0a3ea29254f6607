package app

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kobana/kadu/core/config"
	"github.com/kobana/kadu/sdk/go/kadu/kadutest"
)

// The partner examples (examples/plugins/{go,c,rust,assemblyscript}) are
// built from source with their own toolchains, loaded by the real host
// pinned by sha256, and called through the MCP endpoint over HTTP, the way
// an operator enables a partner's bundle.

// partnerExample is one example bundle and the grant its README tells the
// operator to write.
type partnerExample struct {
	name, dir string
	routes    []string
}

var partnerExamples = []partnerExample{
	{"failures", "../../examples/plugins/go", []string{"GET /api/v1/executions"}},
	{"webhook_health", "../../examples/plugins/c", []string{"GET /api/v1/webhooks", "GET /api/v1/webhooks/{id}",
		"GET /api/v1/webhook_deliveries", "POST /api/v1/webhook_deliveries/{id}/replay"}},
	{"cashflow", "../../examples/plugins/rust", []string{"GET /api/v1/executions", "GET /api/v1/tasks/{id}"}},
	{"inbox", "../../examples/plugins/assemblyscript", []string{"GET /api/v1/executions", "GET /api/v1/executions/{id}",
		"POST /api/v1/executions/{id}/continue"}},
}

// partnerServer serves the four examples (and nothing else).
type partnerServer struct {
	srv     *testServer
	hook    *httptest.Server // the organisation's webhook receiver
	hookHit atomic.Int32
}

func startPartnerServer(t *testing.T, driver string) *partnerServer {
	t.Helper()
	ps := &partnerServer{}
	// The receiver fails the first delivery and accepts every later one,
	// so a replay turns a failing endpoint healthy.
	ps.hook = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ps.hookHit.Add(1) == 1 {
			http.Error(w, "receiver down", http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(ps.hook.Close)
	ps.srv = startServerCatalog(t, false, nil, func(c *config.Config) {
		useDriver(t, c, driver)
		c.Plugins.Bundles = map[string]config.Bundle{}
		for _, ex := range partnerExamples {
			path := kadutest.BuildScript(t, ex.dir)
			c.Plugins.Bundles[ex.name] = config.Bundle{Enabled: true, Path: path, SHA256: fileSHA256(t, path), Routes: ex.routes}
		}
		c.Plugins.CacheDir = sharedWasmCache(t)
		c.Webhooks.AllowHosts = []string{"127.0.0.1"}
	})
	return ps
}

// partnerCaller is one person of the organisation, with a client that
// declared caps.
type partnerCaller struct {
	t     *testing.T
	srv   *testServer
	token string
	caps  string
	rest  restClient
}

func (ps *partnerServer) caller(t *testing.T, role string, scopes ...string) *partnerCaller {
	t.Helper()
	token, err := MintDevToken(ps.srv.cfg, TokenOptions{OrgID: "org_partner", Subject: "user_" + role, Role: role, Scopes: scopes})
	if err != nil {
		t.Fatal(err)
	}
	return &partnerCaller{t: t, srv: ps.srv, token: token, caps: `{"elicitation":{}}`, rest: restClient{t: t, base: ps.srv.baseURL, token: token}}
}

// without returns c from a client that declared no capabilities.
func (c *partnerCaller) without() *partnerCaller {
	cp := *c
	cp.caps = "{}"
	return &cp
}

// partnerResult is a tools/call result as a client reads it.
type partnerResult struct {
	raw           map[string]any
	IsError       bool
	Text          string
	Structured    map[string]any
	InputRequests map[string]any
	RequestState  string
}

// call sends tools/call; extra are more members of params (inputResponses,
// requestState) as JSON text starting with a comma.
func (c *partnerCaller) call(name string, args any, extra string) partnerResult {
	c.t.Helper()
	raw, _ := json.Marshal(args)
	status, res := mcpCallAs(c.t, c.srv, c.token, c.caps, "tools/call", name, fmt.Sprintf(`{"name":%q,"arguments":%s%s}`, name, raw, extra))
	result, _ := res["result"].(map[string]any)
	if status != 200 || result == nil {
		c.t.Fatalf("%s %s: HTTP %d, not a result: %v", name, raw, status, res)
	}
	r := partnerResult{raw: result}
	r.IsError, _ = result["isError"].(bool)
	r.Structured, _ = result["structuredContent"].(map[string]any)
	r.InputRequests, _ = result["inputRequests"].(map[string]any)
	r.RequestState, _ = result["requestState"].(string)
	content, _ := result["content"].([]any)
	var texts []string
	for _, b := range content {
		if m, _ := b.(map[string]any); m["type"] == "text" {
			texts = append(texts, m["text"].(string))
		}
	}
	r.Text = strings.Join(texts, "\n")
	return r
}

// answer retries name after an input-required result r, with responses
// (a JSON object of the client's answers by key).
func (c *partnerCaller) answer(name string, args any, r partnerResult, responses string) partnerResult {
	c.t.Helper()
	if r.RequestState == "" {
		c.t.Fatalf("%s: no requestState to answer: %v", name, r.raw)
	}
	return c.call(name, args, fmt.Sprintf(`,"inputResponses":%s,"requestState":%q`, responses, r.RequestState))
}

// confirmed calls the destructive tool name and accepts the host's
// confirmation, so the tool runs; it returns the tool's answer.
func (c *partnerCaller) confirmed(name string, args any) partnerResult {
	c.t.Helper()
	r := c.call(name, args, "")
	if r.raw["resultType"] != "input_required" || r.InputRequests["confirm"] == nil {
		c.t.Fatalf("%s: %v; want the host's confirmation first", name, r.raw)
	}
	return c.answer(name, args, r, `{"confirm":{"action":"accept","content":{"confirm":true}}}`)
}

// approvalRequired checks that a destructive tool called from a client
// without forms answered with an approval link and did not run.
func approvalRequired(t *testing.T, name string, r partnerResult) {
	t.Helper()
	if r.IsError || r.Structured["status"] != "approval_required" || r.Structured["approval_url"] == nil {
		t.Errorf("%s from a client without forms: %v; want an approval link", name, r.raw)
	}
}

// form returns the elicitation form of input request key of r.
func form(t *testing.T, r partnerResult, key string) map[string]any {
	t.Helper()
	req, _ := r.InputRequests[key].(map[string]any)
	params, _ := req["params"].(map[string]any)
	if req["method"] != "elicitation/create" || params["mode"] != "form" {
		t.Fatalf("input request %q = %v; want an elicitation form (result %v)", key, r.InputRequests[key], r.raw)
	}
	return params
}

// apiErrorCode is the first error code of an isError result whose text is
// the API's error body.
func apiErrorCode(r partnerResult) string {
	var body struct {
		Errors []struct {
			Code string `json:"code"`
		} `json:"errors"`
	}
	if !r.IsError || json.Unmarshal([]byte(strings.SplitN(r.Text, "\n", 2)[0]), &body) != nil || len(body.Errors) == 0 {
		return ""
	}
	return body.Errors[0].Code
}

// runExample runs the example task named name with its first example
// input and returns the execution id.
func runExample(t *testing.T, rest restClient, name, key string) string {
	t.Helper()
	id, example := rest.findTask(name)
	body, _ := json.Marshal(map[string]any{"input": example, "idempotency_key": key})
	status, _, exe := rest.do("POST", "/tasks/"+id+"/run", string(body))
	if status != 202 {
		t.Fatalf("run %s: %d %v", name, status, exe)
	}
	return exe["id"].(string)
}

func TestPartnerExamplesOverMCP(t *testing.T) {
	for _, driver := range []string{config.DriverSQLite, config.DriverPostgres} {
		t.Run(driver, func(t *testing.T) { testPartnerExamples(t, driver) })
	}
}

func testPartnerExamples(t *testing.T, driver string) {
	ps := startPartnerServer(t, driver)
	admin := ps.caller(t, "admin", "kadu.admin")
	member := ps.caller(t, "member", "kadu.read", "kadu.run")

	t.Run("tools are listed by access", func(t *testing.T) {
		list := func(c *partnerCaller) []string {
			status, res := mcpCall(t, ps.srv, c.token, "tools/list", "", "{}")
			if status != 200 {
				t.Fatalf("tools/list: %d %v", status, res)
			}
			var names []string
			for _, tool := range res["result"].(map[string]any)["tools"].([]any) {
				names = append(names, tool.(map[string]any)["name"].(string))
			}
			slices.Sort(names)
			return names
		}
		if got, want := list(admin), []string{"cashflow_summary", "failures_digest", "inbox_answer", "inbox_list", "webhook_health_report"}; !slices.Equal(got, want) {
			t.Errorf("an admin's tools/list = %v; want %v", got, want)
		}
		// The webhook report is for admins: a member does not see it.
		if got, want := list(member), []string{"cashflow_summary", "failures_digest", "inbox_answer", "inbox_list"}; !slices.Equal(got, want) {
			t.Errorf("a member's tools/list = %v; want %v", got, want)
		}
	})

	t.Run("go failures", func(t *testing.T) { testFailures(t, member.in(t)) })
	t.Run("rust cashflow", func(t *testing.T) { testCashflow(t, admin.in(t), member.in(t)) })
	t.Run("assemblyscript inbox", func(t *testing.T) { testInbox(t, member.in(t)) })
	t.Run("c webhook health", func(t *testing.T) { testWebhookHealth(t, ps, admin.in(t)) })
}

// in returns c reporting to t.
func (c *partnerCaller) in(t *testing.T) *partnerCaller {
	cp := *c
	cp.t, cp.rest.t = t, t
	return &cp
}

// testFailures checks the Go example against the real API: the query it
// sends (status=failed) is one the API accepts, and it answers the
// structured digest its outputSchema declares. It runs first, before any
// execution exists: there is nothing failing to report.
func testFailures(t *testing.T, member *partnerCaller) {
	r := member.call("failures_digest", map[string]any{"limit": 10}, "")
	tasks, ok := r.Structured["tasks"].([]any)
	if r.IsError || !ok || len(tasks) != 0 || r.Structured["executions"] != 0.0 {
		t.Fatalf("failures_digest: %v; want an empty digest", r.raw)
	}
}

func testCashflow(t *testing.T, admin, member *partnerCaller) {
	// Two runs of one task, to completion: their costs are what the
	// summary must add up.
	var taskID string
	var want float64
	for i := range 2 {
		id := runExample(t, admin.rest, "Resumo de extrato", fmt.Sprintf("cashflow-%d", i))
		exe := admin.rest.waitExecution(id)
		if exe["status"] != "succeeded" {
			t.Fatalf("execution %s ended %v", id, exe["status"])
		}
		taskID = exe["task_id"].(string)
		want += exe["cost"].(map[string]any)["amount_cents"].(float64)
	}

	r := member.call("cashflow_summary", map[string]any{"days": 7, "task_id": taskID}, "")
	if r.IsError || r.Structured == nil {
		t.Fatalf("cashflow_summary: %v", r.raw)
	}
	totals, _ := r.Structured["totals_cents"].(map[string]any)
	byTask, _ := r.Structured["by_task"].([]any)
	if r.Structured["executions"] != 2.0 || totals["BRL"] != want || len(byTask) != 1 {
		t.Fatalf("cashflow_summary structuredContent %v; want 2 executions costing %v BRL cents, one task", r.Structured, want)
	}
	if row := byTask[0].(map[string]any); row["task_id"] != taskID || row["task_name"] != "Resumo de extrato" || row["cost_cents"] != want {
		t.Errorf("by_task[0] = %v; want task %s named Resumo de extrato costing %v", row, taskID, want)
	}
	if !strings.Contains(r.Text, "R$") {
		t.Errorf("text %q has no R$ summary line", r.Text)
	}

	// Error path: a task that does not exist is the API's own 404.
	r = member.call("cashflow_summary", map[string]any{"days": 7, "task_id": "tsk_0195f0a1b2c37d8e9f00112233445566"}, "")
	if code := apiErrorCode(r); code != "not_found" {
		t.Errorf("cashflow_summary of an unknown task: %v; want isError with the API's not_found body", r.raw)
	}

	// Input required: no period, so the bundle asks for it, and sums
	// over the days the person chose.
	args := map[string]any{"task_id": taskID}
	r = member.call("cashflow_summary", args, "")
	if r.raw["resultType"] != "input_required" {
		t.Fatalf("cashflow_summary without days: %v; want input_required", r.raw)
	}
	schema, _ := form(t, r, "period")["requestedSchema"].(map[string]any)
	if _, ok := schema["properties"].(map[string]any)["days"]; !ok {
		t.Errorf("the period form %v asks no days", schema)
	}
	done := member.answer("cashflow_summary", args, r, `{"period":{"action":"accept","content":{"days":30}}}`)
	if done.IsError || done.Structured["executions"] != 2.0 || done.Structured["period"].(map[string]any)["days"] != 30.0 {
		t.Errorf("after choosing 30 days: %v", done.raw)
	}
	declined := member.answer("cashflow_summary", args, r, `{"period":{"action":"decline"}}`)
	if !declined.IsError || !strings.Contains(declined.Text, "days") {
		t.Errorf("after declining: %v; want a tool error asking for days", declined.raw)
	}
	// A client that cannot be asked is told what to pass instead.
	if r := member.without().call("cashflow_summary", args, ""); !r.IsError || !strings.Contains(r.Text, "days") {
		t.Errorf("without elicitation: %v; want a tool error asking for days", r.raw)
	}
}

func testInbox(t *testing.T, member *partnerCaller) {
	// The closing task stops to ask for the period: a question waiting in
	// the inbox.
	exeID := runExample(t, member.rest, "Fechamento do mês com aprovação", "inbox-1")
	if exe := member.rest.waitExecution(exeID); exe["status"] != "waiting_input" {
		t.Fatalf("execution %s is %v; want waiting_input", exeID, exe["status"])
	}

	r := member.call("inbox_list", map[string]any{"limit": 10}, "")
	waiting, _ := r.Structured["waiting"].([]any)
	if r.IsError || r.Structured["count"] != 1.0 || len(waiting) != 1 || waiting[0].(map[string]any)["execution_id"] != exeID {
		t.Fatalf("inbox_list: %v; want the one waiting execution %s", r.raw, exeID)
	}

	// inbox_answer is destructive (it calls the continue route, which only
	// a destructive tool may): the host asks the person to confirm first.
	// Error path: an execution that does not exist.
	r = member.confirmed("inbox_answer", map[string]any{"execution_id": "exe_0195f0a1b2c37d8e9f00112233445566"})
	if code := apiErrorCode(r); code != "not_found" {
		t.Errorf("inbox_answer of an unknown execution: %v; want isError with the API's not_found body", r.raw)
	}
	// A client without forms gets an approval link; nothing runs.
	args := map[string]any{"execution_id": exeID}
	approvalRequired(t, "inbox_answer", member.without().call("inbox_answer", args, ""))

	// Input required: once confirmed, the task's own question becomes the
	// form; the answer continues the execution, which then waits for
	// approval.
	r = member.confirmed("inbox_answer", args)
	if r.raw["resultType"] != "input_required" {
		t.Fatalf("inbox_answer: %v; want input_required", r.raw)
	}
	schema, _ := form(t, r, "answer")["requestedSchema"].(map[string]any)
	props, _ := schema["properties"].(map[string]any)
	if props["from"] == nil || props["to"] == nil {
		t.Errorf("the answer form %v is not the task's question (from, to)", schema)
	}
	done := member.answer("inbox_answer", args, r, `{"answer":{"action":"accept","content":{"from":"2026-03-01","to":"2026-03-31"}}}`)
	if done.IsError || done.Structured["answered"] != true || done.Structured["execution_id"] != exeID {
		t.Fatalf("after answering: %v", done.raw)
	}
	exe := member.rest.waitExecution(exeID)
	pending, _ := exe["pending_input"].(map[string]any)
	if exe["status"] != "waiting_input" || pending["kind"] != "approval" {
		t.Errorf("after the answer the execution is %v waiting for %v; want the approval step", exe["status"], pending["kind"])
	}
	// The same form answered again (a client retrying) carries the same
	// idempotency key: the API replays its first answer, so the approval
	// step is not answered by mistake.
	again := member.answer("inbox_answer", args, r, `{"answer":{"action":"accept","content":{"from":"2026-03-01","to":"2026-03-31"}}}`)
	if again.IsError || again.Structured["answered"] != true {
		t.Errorf("answering the same form twice: %v; want the first answer replayed", again.raw)
	}
	exe = member.rest.waitExecution(exeID)
	if pending, _ := exe["pending_input"].(map[string]any); exe["status"] != "waiting_input" || pending["kind"] != "approval" {
		t.Errorf("after a repeated answer the execution is %v waiting for %v; want it still at the approval step", exe["status"], pending["kind"])
	}
}

func testWebhookHealth(t *testing.T, ps *partnerServer, admin *partnerCaller) {
	hook := mustREST(t, admin.rest, "POST", "/webhooks", 201,
		fmt.Sprintf(`{"url":%q,"event_codes":["execution.succeeded"]}`, ps.hook.URL+"/kadu"))["id"].(string)
	exe := runExample(t, admin.rest, "Resumo de extrato", "health-1")
	admin.rest.waitExecution(exe)
	// The first attempt fails (500); wait until it is recorded.
	var delivery string
	deadline := time.Now().Add(30 * time.Second)
	for delivery == "" {
		list := mustREST(t, admin.rest, "GET", "/webhook_deliveries?webhook_id="+hook, 200, "")
		for _, d := range list["data"].([]any) {
			if d := d.(map[string]any); d["attempts_count"].(float64) >= 1 {
				delivery = d["id"].(string)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no delivery attempt to the receiver within 30 s: %v", list)
		}
		time.Sleep(50 * time.Millisecond)
	}

	endpoint := func(r partnerResult) map[string]any {
		t.Helper()
		eps, _ := r.Structured["endpoints"].([]any)
		if r.IsError || len(eps) != 1 {
			t.Fatalf("webhook_health_report: %v; want one endpoint", r.raw)
		}
		return eps[0].(map[string]any)
	}
	// webhook_health_report is destructive (it may call the replay route,
	// which only a destructive tool may): the host asks the person to
	// confirm first, and a client without forms gets an approval link.
	approvalRequired(t, "webhook_health_report", admin.without().call("webhook_health_report", map[string]any{}, ""))

	// Error path: an endpoint that does not exist.
	if r := admin.confirmed("webhook_health_report", map[string]any{"webhook_id": "whk_0195f0a1b2c37d8e9f00112233445566"}); apiErrorCode(r) != "not_found" {
		t.Errorf("webhook_health_report of an unknown webhook: %v; want isError with the API's not_found body", r.raw)
	}

	// Input required: offered a replay, the person accepts; the receiver
	// now answers 204, so the endpoint is healthy again.
	args := map[string]any{"webhook_id": hook}
	r := admin.confirmed("webhook_health_report", args)
	if r.raw["resultType"] != "input_required" {
		t.Fatalf("webhook_health_report with a failing endpoint: %v; want input_required", r.raw)
	}
	if msg, _ := form(t, r, "replay")["message"].(string); !strings.Contains(msg, "Replay") {
		t.Errorf("replay form message %q", msg)
	}
	done := admin.answer("webhook_health_report", args, r, `{"replay":{"action":"accept","content":{"replay":true}}}`)
	replayed, _ := done.Structured["replayed"].([]any)
	if done.IsError || len(replayed) != 1 || replayed[0] != delivery {
		t.Fatalf("after accepting the replay: %v; want %s replayed", done.raw, delivery)
	}
	// The replay is queued: the receiver gets it shortly after.
	deadline = time.Now().Add(30 * time.Second)
	for {
		d := mustREST(t, admin.rest, "GET", "/webhook_deliveries/"+delivery, 200, "")
		if d["status"] == "succeeded" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the replayed delivery is still %v after 30 s (receiver hit %d times)", d["status"], ps.hookHit.Load())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := ps.hookHit.Load(); got < 2 {
		t.Errorf("the receiver got %d requests; want the failure and the replay", got)
	}
	r = admin.confirmed("webhook_health_report", args)
	if ep := endpoint(r); ep["health"] != "healthy" || ep["succeeded"] != 1.0 || ep["failing"] != 0.0 {
		t.Errorf("after the replay the endpoint is %v; want healthy with its delivery succeeded", ep)
	}
	if r.raw["resultType"] == "input_required" {
		t.Errorf("a healthy report asked for input: %v", r.raw)
	}
}
