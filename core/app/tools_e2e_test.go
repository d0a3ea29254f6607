package app

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kobana/kadu/core/config"
)

// The tool tests call each of the 32 tools of docs/reference/bundles.md#tool-catalogue end to end: over
// HTTP, through the first-party bundle that serves it, into /api/v1, on
// SQLite and on PostgreSQL. Each checks what the person at the client would
// notice: the answer, and the effect seen through another tool or the REST
// API.
//
// Destructive tools (destructiveHint) answer input_required first
// (docs/reference/confirmation.md); toolCaller.call accepts in the chat
// before the tests look for the effect.

// unknownHex is 32 hex digits no object of any test has.
const unknownHex = "0195f0a1b2c37d8e9f00112233445566"

// Tool sets of docs/reference/rest.md#routes, by the role and scope each route needs.
var (
	// viewer, kadu.read
	readTools = []string{
		"kadu_tasks_list", "kadu_tasks_get", "kadu_usage_get",
		"kadu_executions_list", "kadu_executions_get", "kadu_executions_steps_list", "kadu_approvals_get",
		"kadu_files_list", "kadu_files_get", "kadu_files_download",
	}
	// member, kadu.run
	runTools = []string{"kadu_tasks_run", "kadu_executions_continue", "kadu_executions_cancel"}
	// member, kadu.write
	memberWriteTools = []string{"kadu_files_create", "kadu_files_confirm", "kadu_files_delete"}
	// admin, kadu.write
	adminWriteTools = []string{"kadu_tasks_update"}
	// admin, kadu.admin
	adminTools = []string{
		"kadu_tasks_create", "kadu_tasks_delete", "kadu_tasks_set_launch_policy", "kadu_tasks_set_destinations",
		"kadu_executions_delete",
		"kadu_webhooks_list", "kadu_webhooks_get", "kadu_webhooks_create", "kadu_webhooks_update",
		"kadu_webhooks_delete", "kadu_webhooks_rotate_secret",
		"kadu_webhook_deliveries_list", "kadu_webhook_deliveries_get", "kadu_webhook_deliveries_replay",
		"kadu_audit_events_list",
	}
)

// TestToolsEndToEnd runs every tool group against one server per driver;
// the groups run in parallel, each in organisations of its own.
func TestToolsEndToEnd(t *testing.T) {
	groups := []struct {
		name string
		run  func(*testing.T, *toolsFixture)
	}{
		{"tools list by role and scope", testToolsListByAccess},
		{"tasks", testTaskTools},
		{"executions", testExecutionTools},
		{"files", testFileTools},
		{"webhooks", testWebhookTools},
		{"audit trail", testAuditTools},
		{"API errors", testToolAPIErrors},
		{"invalid arguments", testToolInvalidArguments},
	}
	for _, driver := range []string{config.DriverSQLite, config.DriverPostgres} {
		t.Run(driver, func(t *testing.T) {
			t.Parallel()
			fx := newToolsFixture(t, driver)
			var ran atomic.Int32
			t.Run("group", func(t *testing.T) {
				for _, g := range groups {
					t.Run(g.name, func(t *testing.T) {
						t.Parallel()
						ran.Add(1)
						g.run(t, fx)
					})
				}
			})
			if t.Failed() || int(ran.Load()) < len(groups) { // -run chose some groups
				return
			}
			// Every tool answered a successful result at least once, so a
			// tool added to the catalogue without a test here fails.
			for name := range fx.tools {
				// kadu_approvals_get has no route to call yet (see
				// testExecutionTools).
				if name != "kadu_approvals_get" && !fx.passed(name) {
					t.Errorf("%s was never called successfully: add it to the tool tests", name)
				}
			}
		})
	}
}

// toolsFixture is one running product shared by the tool tests of one
// driver. Safe for concurrent use by parallel subtests.
type toolsFixture struct {
	srv   *testServer
	tools map[string]map[string]any // name → the tool as an owner lists it; fixed at creation

	mu sync.Mutex // guards ok
	ok map[string]bool
}

// newToolsFixture starts the product for the tool tests of driver and reads
// the catalogue as an owner sees it.
func newToolsFixture(t *testing.T, driver string) *toolsFixture {
	t.Helper()
	srv := startToolsProduct(t, driver)
	fx := &toolsFixture{srv: srv, tools: map[string]map[string]any{}, ok: map[string]bool{}}
	owner := fx.as(t, TokenOptions{OrgID: "org_tools_catalogue", Role: "owner"})
	for _, tool := range owner.listTools() {
		fx.tools[tool["name"].(string)] = tool
	}
	return fx
}

// startToolsProduct starts the product as shipped on driver, with two
// changes the tests need: the loopback may receive webhooks over plain http
// (the receiver is an httptest server), and the plan's request rate is out
// of reach (polling executions would otherwise spend the minute's budget;
// the limit has its own tests).
func startToolsProduct(tb testing.TB, driver string) *testServer {
	tb.Helper()
	return startServerCatalog(tb, false, nil, func(c *config.Config) {
		useDriver(tb, c, driver)
		useFirstPartyBundles(tb, c)
		c.Webhooks.AllowHosts = []string{"127.0.0.1"}
		plan := c.Plans[c.Orgs.DefaultPlan]
		plan.RequestsPerMinute = 1 << 20
		c.Plans[c.Orgs.DefaultPlan] = plan
	})
}

func (fx *toolsFixture) passed(name string) bool {
	fx.mu.Lock()
	defer fx.mu.Unlock()
	return fx.ok[name]
}

// as returns a caller with a token minted from o (a default subject when o
// has none).
func (fx *toolsFixture) as(t *testing.T, o TokenOptions) *toolCaller {
	t.Helper()
	if o.Subject == "" {
		o.Subject = "user_" + o.Role
	}
	token, err := MintDevToken(fx.srv.cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	return &toolCaller{t: t, fx: fx, token: token, rest: restClient{t: t, base: fx.srv.baseURL, token: token}}
}

// toolCaller calls tools (and, for setup and cross-checks, the REST API)
// as one person.
type toolCaller struct {
	t     *testing.T
	fx    *toolsFixture
	token string
	rest  restClient
}

// in returns c reporting to t: a subtest must not fail its parent.
func (c *toolCaller) in(t *testing.T) *toolCaller {
	cp := *c
	cp.t, cp.rest.t = t, t
	return &cp
}

// toolAnswer is a tools/call result as a client reads it.
type toolAnswer struct {
	IsError    bool
	Text       string         // the text content
	JSON       map[string]any // Text decoded, when it is a JSON object
	Structured map[string]any // structuredContent, nil when absent
}

// rpc sends one era-2026 request and returns the HTTP status and the
// JSON-RPC response.
func (c *toolCaller) rpc(method, name, params string) (int, map[string]any) {
	c.t.Helper()
	return mcpCall(c.t, c.fx.srv, c.token, method, name, params)
}

// call sends tools/call with args (anything json.Marshal takes, or a
// json.RawMessage) and fails the test on anything but a tool result.
func (c *toolCaller) call(name string, args any) toolAnswer {
	c.t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		c.t.Fatal(err)
	}
	// The client declares form elicitation, so a destructive tool asks to
	// confirm in the chat first (docs/reference/confirmation.md); the person accepts.
	const caps = `{"elicitation":{}}`
	params := fmt.Sprintf(`{"name":%q,"arguments":%s}`, name, raw)
	status, res := mcpCallAs(c.t, c.fx.srv, c.token, caps, "tools/call", name, params)
	result, _ := res["result"].(map[string]any)
	if status != 200 || result == nil {
		c.t.Fatalf("%s %s: HTTP %d, not a tool result: %v", name, raw, status, res)
	}
	if result["resultType"] == "input_required" {
		if _, asked := result["inputRequests"].(map[string]any)["confirm"]; !asked || c.fx.tools[name]["annotations"].(map[string]any)["destructiveHint"] != true {
			c.t.Fatalf("%s: input_required %v, but only destructive tools ask to confirm", name, result)
		}
		state, _ := result["requestState"].(string)
		params = fmt.Sprintf(`{"name":%q,"arguments":%s,"inputResponses":{"confirm":{"action":"accept","content":{"confirm":true}}},"requestState":%q}`, name, raw, state)
		status, res = mcpCallAs(c.t, c.fx.srv, c.token, caps, "tools/call", name, params)
		if result, _ = res["result"].(map[string]any); status != 200 || result == nil {
			c.t.Fatalf("%s confirmed: HTTP %d, not a tool result: %v", name, status, res)
		}
	} else if c.fx.tools[name]["annotations"].(map[string]any)["destructiveHint"] == true && result["isError"] != true {
		// Invalid arguments are refused before anyone is asked.
		c.t.Fatalf("%s is destructive but ran without asking: %v", name, result)
	}
	if result["resultType"] != "complete" {
		c.t.Fatalf("%s: resultType %v, want complete: %v", name, result["resultType"], result)
	}
	content, _ := result["content"].([]any)
	if len(content) != 1 {
		c.t.Fatalf("%s: content %v, want one text block", name, result["content"])
	}
	block, _ := content[0].(map[string]any)
	if block["type"] != "text" {
		c.t.Fatalf("%s: content block %v, want text", name, block)
	}
	a := toolAnswer{IsError: result["isError"] == true, Text: block["text"].(string)}
	_ = json.Unmarshal([]byte(a.Text), &a.JSON)
	if sc, ok := result["structuredContent"]; ok {
		a.Structured, _ = sc.(map[string]any)
		if a.Structured == nil {
			c.t.Fatalf("%s: structuredContent %v is not an object", name, sc)
		}
	}
	return a
}

// ok calls name and requires a successful result: text that is the route's
// JSON object and, exactly when the tool declares an outputSchema, the same
// object as structuredContent. It returns that object.
func (c *toolCaller) ok(name string, args any) map[string]any {
	c.t.Helper()
	a := c.call(name, args)
	if a.IsError {
		c.t.Fatalf("%s: isError: %s", name, a.Text)
	}
	if a.JSON == nil {
		c.t.Fatalf("%s: text is not a JSON object: %s", name, a.Text)
	}
	tool := c.fx.tools[name]
	if _, declared := tool["outputSchema"]; declared {
		if !reflect.DeepEqual(a.Structured, a.JSON) {
			c.t.Fatalf("%s: structuredContent %v differs from the text %s", name, a.Structured, a.Text)
		}
	} else if a.Structured != nil {
		c.t.Fatalf("%s declares no outputSchema but answered structuredContent %v", name, a.Structured)
	}
	c.fx.mu.Lock()
	c.fx.ok[name] = true
	c.fx.mu.Unlock()
	return a.JSON
}

// fails calls name and requires an isError result carrying the API's error
// with code (the first entry of errors[]). It returns that entry.
func (c *toolCaller) fails(name string, args any, code string) map[string]any {
	c.t.Helper()
	a := c.call(name, args)
	if !a.IsError {
		c.t.Fatalf("%s: want isError with %s, got %s", name, code, a.Text)
	}
	if a.Structured != nil {
		c.t.Errorf("%s: an error result carries structuredContent %v", name, a.Structured)
	}
	errs, _ := a.JSON["errors"].([]any)
	if len(errs) == 0 {
		c.t.Fatalf("%s: error text is not the API's error body: %s", name, a.Text)
	}
	first := errs[0].(map[string]any)
	if first["code"] != code {
		c.t.Fatalf("%s: error code %v, want %s: %s", name, first["code"], code, a.Text)
	}
	return first
}

// listTools returns tools/list, every page.
func (c *toolCaller) listTools() []map[string]any {
	c.t.Helper()
	var out []map[string]any
	params := "{}"
	for {
		status, res := c.rpc("tools/list", "", params)
		result, _ := res["result"].(map[string]any)
		if status != 200 || result == nil {
			c.t.Fatalf("tools/list: HTTP %d %v", status, res)
		}
		for _, raw := range result["tools"].([]any) {
			out = append(out, raw.(map[string]any))
		}
		next, _ := result["nextCursor"].(string)
		if next == "" {
			return out
		}
		params = fmt.Sprintf(`{"cursor":%q}`, next)
	}
}

// ids returns the ids of a list answer's data.
func ids(list map[string]any) []string {
	var out []string
	data, _ := list["data"].([]any)
	for _, raw := range data {
		out = append(out, raw.(map[string]any)["id"].(string))
	}
	return out
}

// toolsWait polls cond until it holds, for at most 30 s: background work
// (the queue, webhook deliveries) has no event a test could wait on.
func toolsWait(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still waiting for %s after 30s", what)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// testToolsListByAccess checks that tools/list shows each person exactly the
// tools their role and scopes allow (docs/reference/auth.md#roles-and-scopes: role ∩ scopes, over the
// route table's columns), that a tool the role forbids is unknown, and that one the role
// allows but the scopes lack asks to step up.
func testToolsListByAccess(t *testing.T, fx *toolsFixture) {
	all := slices.Concat(readTools, runTools, memberWriteTools, adminWriteTools, adminTools)
	if len(all) != 32 {
		t.Fatalf("the test's tool sets hold %d tools, want the 32 of docs/reference/bundles.md#tool-catalogue", len(all))
	}
	tests := []struct {
		name   string
		role   string
		scopes []string
		want   []string
	}{
		{name: "viewer with read", role: "viewer", scopes: []string{"kadu.read"}, want: readTools},
		{name: "viewer with admin scope: the role caps it", role: "viewer", scopes: []string{"kadu.admin"}, want: readTools},
		{name: "member with run", role: "member", scopes: []string{"kadu.run"}, want: slices.Concat(readTools, runTools)},
		{name: "member with read write run", role: "member", scopes: []string{"kadu.read", "kadu.write", "kadu.run"},
			want: slices.Concat(readTools, runTools, memberWriteTools)},
		{name: "admin with read: the scope caps it", role: "admin", scopes: []string{"kadu.read"}, want: readTools},
		{name: "admin with write", role: "admin", scopes: []string{"kadu.write"},
			want: slices.Concat(readTools, memberWriteTools, adminWriteTools)},
		{name: "admin with admin", role: "admin", scopes: []string{"kadu.admin"}, want: all},
		{name: "owner with every scope", role: "owner", want: all},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := fx.as(t, TokenOptions{OrgID: "org_tools_list", Role: tt.role, Scopes: tt.scopes})
			var got []string
			for _, tool := range c.listTools() {
				got = append(got, tool["name"].(string))
			}
			slices.Sort(got)
			want := slices.Sorted(slices.Values(tt.want))
			if !slices.Equal(got, want) {
				t.Errorf("tools/list = %v\nwant         %v", got, want)
			}
		})
	}
	// A destructive tool's first answer is a confirmation, never the
	// route's JSON (docs/reference/mcp.md#tools): none declares an outputSchema.
	for _, name := range slices.Sorted(maps.Keys(fx.tools)) {
		tool := fx.tools[name]
		ann, _ := tool["annotations"].(map[string]any)
		if _, schema := tool["outputSchema"]; ann["destructiveHint"] == true && schema {
			t.Errorf("%s is destructive and declares an outputSchema", name)
		}
	}

	viewer := fx.as(t, TokenOptions{OrgID: "org_tools_list", Role: "viewer", Scopes: []string{"kadu.read"}})
	status, res := viewer.rpc("tools/call", "kadu_tasks_create", `{"name":"kadu_tasks_create","arguments":{"name":"x"}}`)
	rpcErr, _ := res["error"].(map[string]any)
	if status != 200 || rpcErr["code"] != float64(-32602) || rpcErr["message"] != "Unknown tool: kadu_tasks_create" {
		t.Errorf("viewer calling an admin tool: HTTP %d %v, want -32602 Unknown tool", status, res)
	}
	reader := fx.as(t, TokenOptions{OrgID: "org_tools_list", Role: "member", Scopes: []string{"kadu.read"}})
	args := `{"name":"kadu_tasks_run","arguments":{"id":"tsk_` + unknownHex + `"}}`
	status, res = reader.rpc("tools/call", "kadu_tasks_run", args)
	rpcErr, _ = res["error"].(map[string]any)
	if status != 403 || rpcErr["message"] != "Insufficient scope" {
		t.Errorf("member with read calling kadu_tasks_run: HTTP %d %v, want 403 Insufficient scope", status, res)
	}
	status, res = reader.rpc("tools/call", "kadu_tasks_get", `{"name":"kadu_tasks_get","arguments":[1]}`)
	rpcErr, _ = res["error"].(map[string]any)
	if status != 200 || rpcErr["code"] != float64(-32602) {
		t.Errorf("arguments that are not an object: HTTP %d %v, want -32602", status, res)
	}
}
