package confirm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/internal/fakeclock"
	"github.com/kobana/kadu/core/mcp"
	"github.com/kobana/kadu/core/origin"
	"github.com/kobana/kadu/core/store"
	"github.com/kobana/kadu/core/store/pgtest"
	"github.com/kobana/kadu/core/store/storetest"
)

// The confirmation tests run the real protocol engine (core/mcp) in front
// of a Confirmer, over a real store (storetest.Backends) — SQLite in a
// temporary directory and the test process's PostgreSQL cluster (pgtest),
// one database per test — with a fake Next catalog that records every call
// and, for kadu_tasks_run, creates the execution in the store, so that
// "nothing ran" is checked both in Next and in the store.

func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }

// forEachBackend runs each test on each back-end, in parallel, each with
// its own harness.
func forEachBackend(t *testing.T, tests map[string]func(t *testing.T, h *harness)) {
	t.Helper()
	storetest.EachBackend(t, tests, func(t *testing.T, b storetest.Backend) *harness { return newHarness(t, b) })
}

// testKey returns a 32-byte key filled with b.
func testKey(b byte) []byte { return bytes.Repeat([]byte{b}, 32) }

const publicURL = "https://kadu.test"

// People of the tests. alice and bob are members of orgA; carol is an
// admin there; dave is alice's namesake at another issuer; erin is in
// another organisation.
var (
	alice = &auth.Principal{Issuer: "https://issuer.test", Subject: "alice", OrgID: "org_a", Role: auth.RoleMember,
		Scopes: []string{auth.ScopeRun}, ClientID: "client-a"}
	bob   = &auth.Principal{Issuer: "https://issuer.test", Subject: "bob", OrgID: "org_a", Role: auth.RoleMember, Scopes: []string{auth.ScopeRun}}
	carol = &auth.Principal{Issuer: "https://issuer.test", Subject: "carol", OrgID: "org_a", Role: auth.RoleAdmin, Scopes: []string{auth.ScopeAdmin}}
	dave  = &auth.Principal{Issuer: "https://other-issuer.test", Subject: "alice", OrgID: "org_a", Role: auth.RoleMember, Scopes: []string{auth.ScopeRun}}
	erin  = &auth.Principal{Issuer: "https://issuer.test", Subject: "alice", OrgID: "org_b", Role: auth.RoleMember, Scopes: []string{auth.ScopeRun}}
)

// harness is one Confirmer over one store, behind the real engine.
type harness struct {
	t      testing.TB
	clock  *fakeclock.Clock
	db     *store.DB
	next   *fakeNext
	conf   *Confirmer
	engine http.Handler
	task   store.Task // a task of org_a, "Conciliação diária", max R$ 5,00
	files  []string   // two file ids of org_a
	logs   *bytes.Buffer
}

func newHarness(t testing.TB, b storetest.Backend) *harness {
	t.Helper()
	h := &harness{t: t, clock: fakeclock.New(time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)), logs: &bytes.Buffer{}}
	h.db = b.Open(t, store.Options{MaxConns: 8, Now: h.clock.Now})
	h.next = &fakeNext{db: h.db}
	h.conf = h.newConfirmer(testKey(1))
	h.engine = newEngine(t, h.conf)
	ctx := context.Background()
	for _, org := range []string{"org_a", "org_b"} {
		if _, _, err := h.db.EnsureOrg(ctx, org, "developer"); err != nil {
			t.Fatalf("EnsureOrg: %v", err)
		}
	}
	var err error
	h.task, err = h.db.CreateTask(ctx, "org_a", store.Task{Name: "Conciliação diária", Description: "d",
		Instructions: "i", InputSchema: json.RawMessage(`{"type":"object"}`), MaxCostCents: 500})
	if err != nil {
		t.Fatalf("CreateTask: %v", err)
	}
	exp := h.clock.Now().Add(time.Hour)
	for _, name := range []string{"extrato.csv", "recebiveis.csv"} {
		f, err := h.db.CreateFile(ctx, "org_a", store.File{Filename: name, ContentType: "text/csv", SizeBytes: 10,
			Purpose: store.FileInput, ExpiresAt: &exp})
		if err != nil {
			t.Fatalf("CreateFile: %v", err)
		}
		h.files = append(h.files, f.ID)
	}
	return h
}

// newConfirmer returns another Confirmer over the harness's store and Next
// (another replica), with keys as its ring.
func (h *harness) newConfirmer(keys ...[]byte) *Confirmer {
	h.t.Helper()
	c, err := New(Options{Next: h.next, Store: h.db, Keys: keys, PublicURL: publicURL + "/",
		Logger: slog.New(slog.NewTextHandler(lockedWriter{w: h.logs}, nil)), Now: h.clock.Now})
	if err != nil {
		h.t.Fatalf("New: %v", err)
	}
	c.pollEvery, c.polls = time.Millisecond, 20000
	return c
}

// lockedWriter serialises writes of concurrent loggers.
type lockedWriter struct{ w io.Writer }

var logMu sync.Mutex

func (l lockedWriter) Write(p []byte) (int, error) {
	logMu.Lock()
	defer logMu.Unlock()
	return l.w.Write(p)
}

// runArgs are arguments of kadu_tasks_run on the harness's task.
func (h *harness) runArgs() string {
	return fmt.Sprintf(`{"id":%q,"input":{"period":"2026-03","amount":1},"input_file_ids":[%q,%q]}`, h.task.ID, h.files[0], h.files[1])
}

// executions counts the executions of org_a: what kadu_tasks_run created.
func (h *harness) executions() int {
	h.t.Helper()
	page, err := h.db.ListExecutions(context.Background(), "org_a", store.ExecutionFilter{}, store.ListParams{Limit: 100})
	if err != nil {
		h.t.Fatalf("ListExecutions: %v", err)
	}
	return len(page.Items)
}

// nothingRan fails unless Next ran no call and the store holds no
// execution.
func (h *harness) nothingRan(what string) {
	h.t.Helper()
	if n, x := h.next.count(), h.executions(); n != 0 || x != 0 {
		h.t.Errorf("%s: Next ran %d calls and the store holds %d executions; want nothing run", what, n, x)
	}
}

// ranOnce fails unless Next ran exactly one call and the store holds one
// execution.
func (h *harness) ranOnce(what string) {
	h.t.Helper()
	if n, x := h.next.count(), h.executions(); n != 1 || x != 1 {
		h.t.Errorf("%s: Next ran %d calls and the store holds %d executions; want exactly one", what, n, x)
	}
}

// fakeNext is the Catalog behind the Confirmer. It records every call;
// kadu_tasks_run creates an execution in the store, as the real tool does
// through the API.
type fakeNext struct {
	db *store.DB

	mu      sync.Mutex
	calls   []mcp.ToolCall
	callers []*auth.Principal
	hide    map[string]bool                                   // tools Tools does not list
	answer  func(call *mcp.ToolCall) (*mcp.ToolResult, error) // overrides the default answer
	gate    chan struct{}                                     // CallTool waits for it to close, if not nil
	entered chan struct{}                                     // receives when CallTool starts, if not nil
}

var objectSchema = json.RawMessage(`{"type":"object"}`)

func (n *fakeNext) Tools(context.Context, *auth.Principal) ([]mcp.Tool, error) {
	all := []mcp.Tool{
		{Name: "kadu_tasks_run", Title: "Run a task", InputSchema: json.RawMessage(`{"type":"object","properties":{
			"id":{"type":"string","pattern":"^tsk_[0-9a-f]{32}$"},"input":{"type":"object"},
			"input_file_ids":{"type":"array","items":{"type":"string","pattern":"^file_[0-9a-f]{32}$"}},
			"idempotency_key":{"type":"string"}},"required":["id"],"additionalProperties":false}`),
			Annotations: &mcp.ToolAnnotations{DestructiveHint: true},
			Access:      mcp.Access{MinRole: auth.RoleMember, Scope: auth.ScopeRun}},
		{Name: "kadu_tasks_list", Title: "List tasks", InputSchema: objectSchema,
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true},
			Access:      mcp.Access{MinRole: auth.RoleViewer, Scope: auth.ScopeRead}},
		{Name: "acme_purge", Title: "Purge old records", InputSchema: json.RawMessage(`{"type":"object","properties":{"older_than_days":{"type":"integer"}}}`),
			Annotations: &mcp.ToolAnnotations{DestructiveHint: true},
			Access:      mcp.Access{MinRole: auth.RoleMember, Scope: auth.ScopeRun}},
		{Name: "acme_no_hints", InputSchema: objectSchema, // no annotations: destructive by the protocol's defaults
			Access: mcp.Access{MinRole: auth.RoleMember, Scope: auth.ScopeRun}},
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []mcp.Tool
	for _, t := range all {
		if !n.hide[t.Name] {
			out = append(out, t)
		}
	}
	return out, nil
}

func (n *fakeNext) CallTool(ctx context.Context, p *auth.Principal, call *mcp.ToolCall) (*mcp.ToolResult, error) {
	n.mu.Lock()
	n.calls = append(n.calls, *call)
	n.callers = append(n.callers, p)
	gate, entered, answer := n.gate, n.entered, n.answer
	n.mu.Unlock()
	if entered != nil {
		entered <- struct{}{}
	}
	if gate != nil {
		<-gate
	}
	if answer != nil {
		return answer(call)
	}
	if call.Tool.Name == "kadu_tasks_run" {
		var a struct {
			ID    string          `json:"id"`
			Input json.RawMessage `json:"input"`
			Files []string        `json:"input_file_ids"`
		}
		if err := json.Unmarshal(call.Arguments, &a); err != nil {
			return nil, err
		}
		e, err := n.db.CreateExecution(ctx, p.OrgID, store.Execution{TaskID: a.ID, LaunchedBy: p.Subject, Input: a.Input, InputFileIDs: a.Files})
		if err != nil {
			return nil, err
		}
		return &mcp.ToolResult{Content: []mcp.Content{mcp.Text(fmt.Sprintf(`{"id":%q,"status":"queued"}`, e.ID))}}, nil
	}
	return &mcp.ToolResult{Content: []mcp.Content{mcp.Text("ran " + call.Tool.Name)}}, nil
}

func (n *fakeNext) count() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.calls)
}

func (n *fakeNext) last() (mcp.ToolCall, *auth.Principal) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.calls) == 0 {
		return mcp.ToolCall{}, nil
	}
	return n.calls[len(n.calls)-1], n.callers[len(n.callers)-1]
}

func (n *fakeNext) set(fn func(n *fakeNext)) {
	n.mu.Lock()
	defer n.mu.Unlock()
	fn(n)
}

func (n *fakeNext) Resources(context.Context, *auth.Principal) ([]mcp.Resource, error) {
	return []mcp.Resource{{URI: "kobana://kadu/guide", Name: "guide"}}, nil
}

func (n *fakeNext) ResourceTemplates(context.Context, *auth.Principal) ([]mcp.ResourceTemplate, error) {
	return nil, nil
}

func (n *fakeNext) ReadResource(_ context.Context, _ *auth.Principal, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{{URI: req.URI, Text: "guide"}}}, nil
}

func (n *fakeNext) Prompts(context.Context, *auth.Principal) ([]mcp.Prompt, error) { return nil, nil }

func (n *fakeNext) GetPrompt(context.Context, *auth.Principal, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	return nil, mcp.ErrPromptNotFound
}

func (n *fakeNext) Complete(context.Context, *auth.Principal, *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	return &mcp.CompleteResult{}, nil
}

// testAuthn maps "Bearer <subject>@<org>@<issuer>" to the people above.
type testAuthn struct{}

var people = []*auth.Principal{alice, bob, carol, dave, erin}

func tokenOf(p *auth.Principal) string { return p.Subject + "@" + p.OrgID + "@" + p.Issuer }

func (testAuthn) Authenticate(r *http.Request) (*auth.Principal, *auth.Challenge) {
	tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	for _, p := range people {
		if tokenOf(p) == tok {
			return p, nil
		}
	}
	return nil, &auth.Challenge{Status: http.StatusUnauthorized, Header: `Bearer error="invalid_token"`}
}

func (testAuthn) InsufficientScope(*http.Request, *auth.Principal, string) *auth.Challenge {
	return &auth.Challenge{Status: http.StatusForbidden, Header: `Bearer error="insufficient_scope"`}
}

func newEngine(t testing.TB, cat mcp.Catalog) http.Handler {
	t.Helper()
	origins, err := origin.NewPolicy(publicURL, true)
	if err != nil {
		t.Fatal(err)
	}
	e, err := mcp.New(mcp.Options{Catalog: cat, Authenticator: testAuthn{}, Origins: origins, ServerVersion: "1.0.0",
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// Client capabilities of the tests.
const (
	capsForm     = `{"elicitation":{}}`
	capsFormOnly = `{"elicitation":{"form":{}}}`
	capsFormURL  = `{"elicitation":{"form":{},"url":{}}}`
	capsURLOnly  = `{"elicitation":{"url":{}}}`
	capsNone     = `{}`
)

// callReq is one tools/call.
type callReq struct {
	as        *auth.Principal
	era2025   bool
	caps      string // era 2026 clientCapabilities; default capsForm
	tool      string
	args      string // JSON object
	state     string // requestState; "" omits it
	responses string // inputResponses JSON; "" omits it
}

// rpcResult is a decoded answer.
type rpcResult struct {
	status int
	body   []byte
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64           `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// toolResult is the part of a result the tests read.
type toolResult struct {
	ResultType        string                     `json:"resultType"`
	Content           []mcp.TextContent          `json:"content"`
	StructuredContent json.RawMessage            `json:"structuredContent"`
	IsError           *bool                      `json:"isError"`
	InputRequests     map[string]json.RawMessage `json:"inputRequests"`
	RequestState      string                     `json:"requestState"`
}

func (h *harness) call(r callReq) rpcResult {
	h.t.Helper()
	return h.callOn(h.engine, r)
}

// callOn sends r through engine, as r.as (default alice).
func (h *harness) callOn(engine http.Handler, r callReq) rpcResult {
	h.t.Helper()
	if r.as == nil {
		r.as = alice
	}
	if r.tool == "" {
		r.tool = "kadu_tasks_run"
	}
	if r.args == "" {
		r.args = h.runArgs()
	}
	params := `{"name":` + quote(r.tool) + `,"arguments":` + r.args
	if r.state != "" {
		params += `,"requestState":` + quote(r.state)
	}
	if r.responses != "" {
		params += `,"inputResponses":` + r.responses
	}
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8080/mcp", nil)
	if r.era2025 {
		req.Header.Set("MCP-Protocol-Version", mcp.Version20250618)
		params += `}`
	} else {
		caps := r.caps
		if caps == "" {
			caps = capsForm
		}
		params += `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` +
			caps + `,"io.modelcontextprotocol/clientInfo":{"name":"Claude Desktop","version":"1.0"}}}`
		req.Header.Set("MCP-Protocol-Version", mcp.Version20260728)
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", r.tool)
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + params + `}`
	req.Body = io.NopCloser(strings.NewReader(body))
	req.ContentLength = int64(len(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", "Bearer "+tokenOf(r.as))
	w := httptest.NewRecorder()
	engine.ServeHTTP(w, req)
	out := rpcResult{status: w.Code, body: w.Body.Bytes()}
	if err := json.Unmarshal(out.body, &out); err != nil {
		h.t.Fatalf("answer is not JSON: %v\n%s", err, out.body)
	}
	return out
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// result decodes a successful answer.
func (r rpcResult) result(t testing.TB) toolResult {
	t.Helper()
	if r.status != http.StatusOK || r.Error != nil || r.Result == nil {
		t.Fatalf("want a result, got HTTP %d: %s", r.status, r.body)
	}
	var out toolResult
	if err := json.Unmarshal(r.Result, &out); err != nil {
		t.Fatalf("result: %v", err)
	}
	return out
}

// wantInvalidState fails unless r is the -32602 "Invalid or expired
// requestState" error, sent with HTTP 200.
func (r rpcResult) wantInvalidState(t testing.TB, what string) {
	t.Helper()
	if r.status != http.StatusOK || r.Error == nil || r.Error.Code != mcp.CodeInvalidParams ||
		r.Error.Message != "Invalid or expired requestState" {
		t.Errorf("%s: got HTTP %d %s; want 200 with -32602 \"Invalid or expired requestState\"", what, r.status, r.body)
	}
}

// ask makes the first call and returns the requestState it got.
func (h *harness) ask(r callReq) string {
	h.t.Helper()
	res := h.call(r).result(h.t)
	if res.ResultType != "input_required" || !strings.HasPrefix(res.RequestState, statePrefix) {
		h.t.Fatalf("first call: want input_required with a kc1. requestState, got %+v", res)
	}
	return res.RequestState
}

// Responses to the confirmation form.
const (
	accept     = `{"confirm":{"action":"accept","content":{"confirm":true}}}`
	acceptNo   = `{"confirm":{"action":"accept","content":{"confirm":false}}}`
	declineIt  = `{"confirm":{"action":"decline"}}`
	cancelIt   = `{"confirm":{"action":"cancel"}}`
	noResponse = `{}`
)
