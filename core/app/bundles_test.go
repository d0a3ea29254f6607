package app

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kobana/kadu/core/config"
	"github.com/kobana/kadu/sdk/go/kadu/kadutest"
)

// useFirstPartyBundles points c's first-party bundles at builds of
// plugins/<name> made for this test run, with the flags of
// `go tool task build:plugins`: they must match the pins of the default
// configuration, or the server refuses them (then run
// `go tool task plugins:pin`).
func useFirstPartyBundles(t testing.TB, c *config.Config) {
	t.Helper()
	for name, b := range c.Plugins.Bundles {
		b.Path = kadutest.BuildWasm(t, "../../plugins/"+name)
		c.Plugins.Bundles[name] = b
	}
	c.Plugins.CacheDir = sharedWasmCache(t)
}

// sharedWasmCache is a compilation cache kept between test runs, so that
// the bundles compile once per machine rather than once per test.
func sharedWasmCache(t testing.TB) string {
	t.Helper()
	dir, err := osUserCacheDir()
	if err != nil {
		return t.TempDir()
	}
	return dir
}

// startProduct serves the product as shipped: the first-party bundles on
// driver's database.
func startProduct(t testing.TB, driver string) *testServer {
	t.Helper()
	return startServerCatalog(t, false, nil, func(c *config.Config) {
		useDriver(t, c, driver)
		useFirstPartyBundles(t, c)
	})
}

// mcpCall sends one era-2026 request and returns the decoded JSON-RPC
// response.
func mcpCall(t testing.TB, srv *testServer, token, method, name, params string) (int, map[string]any) {
	t.Helper()
	return mcpCallAs(t, srv, token, "{}", method, name, params)
}

// mcpCallAs is mcpCall from a client that declared capabilities (a JSON
// object, e.g. `{"elicitation":{}}`).
func mcpCallAs(t testing.TB, srv *testServer, token, capabilities, method, name, params string) (int, map[string]any) {
	t.Helper()
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + capabilities + `}`
	params = strings.TrimSuffix(strings.TrimSpace(params), "}")
	if params != "{" {
		params += ","
	}
	params += meta + "}"
	req, _ := http.NewRequest(http.MethodPost, srv.cfg.MCPURL(), strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":`+params+`}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s: not JSON (%d): %s", method, res.StatusCode, raw)
	}
	return res.StatusCode, out
}

// TestFirstPartyBundlesServe loads the four first-party bundles, pinned as
// the default configuration pins them, and calls through each over HTTP.
func TestFirstPartyBundlesServe(t *testing.T) {
	srv := startProduct(t, config.DriverSQLite)
	token, err := MintDevToken(srv.cfg, TokenOptions{OrgID: "org_bundles"})
	if err != nil {
		t.Fatal(err)
	}
	status, list := mcpCall(t, srv, token, "tools/list", "", "{}")
	if status != 200 {
		t.Fatalf("tools/list: %d %v", status, list)
	}
	tools := list["result"].(map[string]any)["tools"].([]any)
	if len(tools) != 32 {
		t.Errorf("tools/list has %d tools, want the 32 of docs/reference/bundles.md#tool-catalogue", len(tools))
	}
	status, res := mcpCall(t, srv, token, "tools/call", "kadu_usage_get", `{"name":"kadu_usage_get","arguments":{}}`)
	result, _ := res["result"].(map[string]any)
	if status != 200 || result == nil || result["isError"] == true {
		t.Fatalf("kadu_usage_get: %d %v", status, res)
	}
	if sc, _ := result["structuredContent"].(map[string]any); sc["plan"] == nil {
		t.Errorf("kadu_usage_get structuredContent %v has no plan", result["structuredContent"])
	}
	status, res = mcpCall(t, srv, token, "tools/call", "kadu_executions_get",
		`{"name":"kadu_executions_get","arguments":{"id":"exe_0195f0a1b2c37d8e9f00112233445566"}}`)
	result, _ = res["result"].(map[string]any)
	if status != 200 || result["isError"] != true || !strings.Contains(string(mustMarshal(result["content"])), "not_found") {
		t.Errorf("kadu_executions_get of an unknown id: %d %v", status, res)
	}
}

func mustMarshal(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

func osUserCacheDir() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	dir = filepath.Join(dir, "kadu", "app-test-wazero")
	return dir, os.MkdirAll(dir, 0o700)
}

// TestDestructiveToolNeedsApproval: a client that cannot answer an
// elicitation gets an approval link for a destructive tool, and nothing
// runs until the person decides; the link's status is readable through
// kadu_approvals_get by the requester only.
func TestDestructiveToolNeedsApproval(t *testing.T) {
	srv := startProduct(t, config.DriverSQLite)
	token, err := MintDevToken(srv.cfg, TokenOptions{OrgID: "org_approvals", Subject: "ana"})
	if err != nil {
		t.Fatal(err)
	}
	other, err := MintDevToken(srv.cfg, TokenOptions{OrgID: "org_approvals", Subject: "bruno"})
	if err != nil {
		t.Fatal(err)
	}
	rest := restClient{t: t, base: srv.baseURL, token: token}
	status, _, task := rest.do("POST", "/tasks", `{"name":"Apagar depois","description":"d","instructions":"i"}`)
	if status != 201 {
		t.Fatalf("create task: %d %v", status, task)
	}
	id := task["id"].(string)

	status, res := mcpCall(t, srv, token, "tools/call", "kadu_tasks_delete", `{"name":"kadu_tasks_delete","arguments":{"id":"`+id+`"}}`)
	result, _ := res["result"].(map[string]any)
	sc, _ := result["structuredContent"].(map[string]any)
	if status != 200 || result["isError"] == true || sc["status"] != "approval_required" {
		t.Fatalf("kadu_tasks_delete without elicitation: %d %v", status, res)
	}
	url, _ := sc["approval_url"].(string)
	apr, _ := sc["approval_id"].(string)
	if !strings.HasPrefix(url, srv.baseURL+"/approve/") || !strings.HasPrefix(apr, "apr_") || sc["expires_at"] == nil {
		t.Errorf("approval link %v", sc)
	}
	if status, _, got := rest.do("GET", "/tasks/"+id, ""); status != 200 {
		t.Fatalf("the task is gone before anyone approved: %d %v", status, got)
	}

	status, res = mcpCall(t, srv, token, "tools/call", "kadu_approvals_get", `{"name":"kadu_approvals_get","arguments":{"id":"`+apr+`"}}`)
	result, _ = res["result"].(map[string]any)
	if status != 200 || result["isError"] == true || !strings.Contains(string(mustMarshal(result["content"])), `pending`) {
		t.Errorf("kadu_approvals_get by the requester: %d %v", status, res)
	}
	status, res = mcpCall(t, srv, other, "tools/call", "kadu_approvals_get", `{"name":"kadu_approvals_get","arguments":{"id":"`+apr+`"}}`)
	result, _ = res["result"].(map[string]any)
	if status != 200 || result["isError"] != true || !strings.Contains(string(mustMarshal(result["content"])), "not_found") {
		t.Errorf("kadu_approvals_get by another user: %d %v", status, res)
	}
}
