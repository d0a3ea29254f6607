package app

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kobana/kadu/core/config"
	"github.com/kobana/kadu/core/internal/browsertest"
)

// TestApprovalPageInChromium runs the product as shipped (first-party
// bundles, SQLite, the embedded authorization server) and drives an
// approval link in headless Chromium: a 2026 client without elicitation
// asks for kadu_tasks_run and gets a link; the person opens it, signs in on
// the consent page (its Approve button), reads the page, presses Continue
// and sees the outcome; the execution then exists, and kadu_approvals_get
// reports it. A second person signing in is refused and nothing runs. The
// page's screenshot goes to docs/clients/approval-page.png with
// UPDATE_SCREENSHOTS=1, else to the test's temporary directory.
func TestApprovalPageInChromium(t *testing.T) {
	browser := browsertest.Start(t)
	srv := startProduct(t, config.DriverSQLite)
	if !pageMounted(t, srv) {
		t.Fatal("GET /approve/{id} does not answer the approval page's HTML")
	}
	dev := srv.cfg.Auth.Dev
	client := registerClient(t, srv, "MCP Inspector")
	token, err := MintDevToken(srv.cfg, TokenOptions{Subject: dev.DefaultSubject, OrgID: dev.DefaultOrg,
		Role: dev.DefaultRole, ClientID: client})
	if err != nil {
		t.Fatal(err)
	}
	rest := restClient{t: t, base: srv.baseURL, token: token}
	status, _, tasks := rest.do(http.MethodGet, "/tasks", "")
	data, _ := tasks["data"].([]any)
	if status != http.StatusOK || len(data) == 0 {
		t.Fatalf("GET /tasks: %d %v, want the example tasks", status, tasks)
	}
	// The reconciliation example, run on its own example input.
	task := data[0].(map[string]any)
	for _, d := range data {
		if d.(map[string]any)["name"] == "Conciliação diária" {
			task = d.(map[string]any)
		}
	}
	taskID, taskName := task["id"].(string), task["name"].(string)
	input := map[string]any{}
	if examples, _ := task["input_schema"].(map[string]any)["examples"].([]any); len(examples) > 0 {
		input, _ = examples[0].(map[string]any)
	}
	args, err := json.Marshal(map[string]any{"id": taskID, "input": input})
	if err != nil {
		t.Fatal(err)
	}

	link := requestApproval(t, srv, token, args)
	if n := executions(t, rest); n != 0 {
		t.Fatalf("%d executions before anyone approved, want 0", n)
	}

	browser.SignIn(link.URL)
	browser.WantTexts(map[string]string{
		"what":    taskName,
		"client":  "MCP Inspector",
		"org":     dev.DefaultOrg,
		"subject": dev.DefaultSubject,
	})
	browser.Screenshot(screenshotPath(t, "approval-page.png"))

	heading, result := browser.Continue()
	if heading != "Done" || !strings.Contains(result, "exe_") {
		t.Fatalf("outcome: heading %q, page %q; want Done with the execution's id", heading, result)
	}
	browser.Screenshot(screenshotPath(t, "approval-outcome.png"))

	// The execution exists, and the model can learn so.
	if n := executions(t, rest); n != 1 {
		t.Errorf("%d executions after Continue, want 1", n)
	}
	got := approvalStatus(t, srv, token, link.ID)
	if got["status"] != "approved" || !strings.Contains(fmt.Sprint(got), "exe_") {
		t.Errorf("kadu_approvals_get: %v, want approved with the execution", got)
	}

	// A second person, in a browser profile of their own, is refused.
	other := requestApproval(t, srv, token, args)
	if refusal := browser.Person().SignInAs(other.URL, "mallory"); !strings.Contains(refusal, "This approval is not yours") {
		t.Errorf("second person sees %q, want a refusal", refusal)
	}
	if st := approvalStatus(t, srv, token, other.ID)["status"]; st != "pending" {
		t.Errorf("after the refusal the approval is %v, want pending", st)
	}
	if n := executions(t, rest); n != 1 {
		t.Errorf("%d executions after the refusal, want still 1", n)
	}
}

// pageMounted reports whether the server serves the approval page: its
// answer to a malformed approval id is an HTML page, not Echo's JSON 404.
func pageMounted(t *testing.T, srv *testServer) bool {
	t.Helper()
	res, err := http.Get(srv.baseURL + "/approve/apr_none")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	return strings.HasPrefix(res.Header.Get("Content-Type"), "text/html")
}

// approvalLink is what a destructive call answers a client that cannot
// confirm in the chat.
type approvalLink struct{ ID, URL string }

// requestApproval calls kadu_tasks_run with args as an era-2026 client
// that declared no elicitation, and returns the approval link it answers
// with.
func requestApproval(t *testing.T, srv *testServer, token string, args []byte) approvalLink {
	t.Helper()
	status, res := mcpCall(t, srv, token, "tools/call", "kadu_tasks_run",
		fmt.Sprintf(`{"name":"kadu_tasks_run","arguments":%s}`, args))
	result, _ := res["result"].(map[string]any)
	sc, _ := result["structuredContent"].(map[string]any)
	if status != http.StatusOK || sc["status"] != "approval_required" {
		t.Fatalf("kadu_tasks_run: %d %v, want an approval link", status, res)
	}
	return approvalLink{ID: sc["approval_id"].(string), URL: sc["approval_url"].(string)}
}

// approvalStatus reads an approval with kadu_approvals_get.
func approvalStatus(t *testing.T, srv *testServer, token, id string) map[string]any {
	t.Helper()
	status, res := mcpCall(t, srv, token, "tools/call", "kadu_approvals_get",
		fmt.Sprintf(`{"name":"kadu_approvals_get","arguments":{"id":%q}}`, id))
	result, _ := res["result"].(map[string]any)
	content, _ := result["content"].([]any)
	if status != http.StatusOK || len(content) != 1 {
		t.Fatalf("kadu_approvals_get: %d %v", status, res)
	}
	var out map[string]any
	text, _ := content[0].(map[string]any)["text"].(string)
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		t.Fatalf("kadu_approvals_get text is not JSON: %s", text)
	}
	return out
}

// executions counts the caller's executions through the REST API.
func executions(t *testing.T, rest restClient) int {
	t.Helper()
	status, _, list := rest.do(http.MethodGet, "/executions", "")
	data, _ := list["data"].([]any)
	if status != http.StatusOK {
		t.Fatalf("GET /executions: %d %v", status, list)
	}
	return len(data)
}

// registerClient registers a public client named name at the embedded
// authorization server, as MCP Inspector does, and returns its client_id.
func registerClient(t *testing.T, srv *testServer, name string) string {
	t.Helper()
	body := fmt.Sprintf(`{"client_name":%q,"redirect_uris":["http://localhost:6274/oauth/callback"],"token_endpoint_auth_method":"none"}`, name)
	res, err := http.Post(srv.baseURL+"/oauth/register", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out struct {
		ClientID string `json:"client_id"`
	}
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode != http.StatusCreated {
		t.Fatalf("registering %s: %d %v", name, res.StatusCode, err)
	}
	return out.ClientID
}

// screenshotPath is where a screenshot named name goes: docs/clients when
// UPDATE_SCREENSHOTS=1, else the test artifacts directory,
// $TMPDIR/kadu-test-artifacts, kept after the run (the path is logged).
func screenshotPath(t *testing.T, name string) string {
	t.Helper()
	if os.Getenv("UPDATE_SCREENSHOTS") == "1" {
		return filepath.Join("..", "..", "docs", "clients", name)
	}
	dir := filepath.Join(os.TempDir(), "kadu-test-artifacts")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, name)
}
