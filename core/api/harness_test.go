package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/kobana/kadu/core/api/openapi"
	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/config"
	"github.com/kobana/kadu/core/store"
	"github.com/kobana/kadu/core/store/pgtest"
	"github.com/kobana/kadu/core/store/storetest"
)

// The API suite runs over real HTTP (httptest, Echo, the real
// Authenticator with a static token verifier, the Middlewares the app
// mounts) against real stores (storetest.Backends): SQLite in a temporary
// directory and the test process's PostgreSQL cluster (pgtest), one
// database per test.

func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }

// forEachBackend runs each test on each back-end, in parallel, each on its
// own database.
func forEachBackend(t *testing.T, tests map[string]func(t *testing.T, db *store.DB)) {
	t.Helper()
	storetest.EachBackend(t, tests, func(t *testing.T, b storetest.Backend) *store.DB {
		return b.Open(t, store.Options{MaxConns: 8})
	})
}

// testQueue records what the API asks of the queue and inserts nothing: the
// real queue (core/jobs) is wired by the app. block, when set, makes
// CancelRunning wait until it is closed (to hold a request in flight).
type testQueue struct {
	mu       sync.Mutex
	enqueued []string // execution ids
	resumed  []Resume
	cancels  []string
	events   []string // event codes emitted
	replays  []string // delivery ids replayed
	fail     error    // returned by EnqueueExecution when set

	entered chan struct{} // receives when CancelRunning starts, if not nil
	block   chan struct{} // CancelRunning waits for it to close, if not nil
}

func (q *testQueue) EnqueueExecution(_ context.Context, tx *store.Tx, _, id string) error {
	if tx == nil {
		return fmt.Errorf("EnqueueExecution without a transaction")
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.fail != nil {
		return q.fail
	}
	q.enqueued = append(q.enqueued, id)
	return nil
}

func (q *testQueue) EnqueueResume(_ context.Context, tx *store.Tx, _, id string, r Resume) error {
	if tx == nil {
		return fmt.Errorf("EnqueueResume without a transaction")
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.resumed = append(q.resumed, r)
	_ = id
	return nil
}

func (q *testQueue) Emit(_ context.Context, _ *store.Tx, _, code string, _ json.RawMessage) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.events = append(q.events, code)
	return nil
}

func (q *testQueue) EnqueueReplay(_ context.Context, tx *store.Tx, _, id string) error {
	if tx == nil {
		return fmt.Errorf("EnqueueReplay without a transaction")
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.replays = append(q.replays, id)
	return nil
}

func (q *testQueue) CancelRunning(_ context.Context, _, id string) error {
	q.mu.Lock()
	entered, block := q.entered, q.block
	q.mu.Unlock()
	if entered != nil {
		entered <- struct{}{}
	}
	if block != nil {
		<-block
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.cancels = append(q.cancels, id)
	return nil
}

// set changes the queue's behaviour between requests.
func (q *testQueue) set(fn func(q *testQueue)) {
	q.mu.Lock()
	defer q.mu.Unlock()
	fn(q)
}

func (q *testQueue) snapshot() (enq []string, res []Resume, can []string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]string(nil), q.enqueued...), append([]Resume(nil), q.resumed...), append([]string(nil), q.cancels...)
}

// staticVerifier accepts the tokens env.token minted.
type staticVerifier struct {
	mu     sync.Mutex
	tokens map[string]*auth.Principal
}

func (v *staticVerifier) Verify(_ context.Context, raw string) (*auth.Principal, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if p, ok := v.tokens[raw]; ok {
		return p, nil
	}
	return nil, auth.ErrInvalidToken
}

// env is one API over one store, served over HTTP.
type env struct {
	t      testing.TB
	db     *store.DB
	api    *API
	srv    *httptest.Server
	queue  *testQueue
	verify *staticVerifier
	seq    atomic.Int64
}

const testResource = "https://kadu.test/mcp"

func testPlans() map[string]config.Plan { return config.Defaults().Plans }

// newEnv serves an API over db; mod adjusts the options.
func newEnv(tb testing.TB, db *store.DB, mod func(*Options)) *env {
	tb.Helper()
	e := &env{t: tb, db: db, queue: &testQueue{}, verify: &staticVerifier{tokens: map[string]*auth.Principal{}}}
	authn := auth.NewAuthenticator(e.verify, testResource, nil)
	opts := Options{
		Store:         db,
		Plans:         testPlans(),
		DefaultPlan:   "developer",
		AutoProvision: true,
		CursorKey:     []byte("0123456789abcdef0123456789abcdef"),
		Queue:         e.queue,
		Challenger:    authn,
	}
	if mod != nil {
		mod(&opts)
	}
	a, err := New(opts)
	if err != nil {
		tb.Fatalf("New: %v", err)
	}
	e.api = a
	ec := echo.New()
	a.Register(ec.Group(BasePath, a.Middlewares(authn.Middleware())...))
	a.RegisterDocument(ec)
	e.srv = httptest.NewServer(ec)
	tb.Cleanup(e.srv.Close)
	return e
}

// user is a caller: an organisation, a subject, a role and scopes.
type user struct {
	org, sub string
	role     auth.Role
	scopes   []string
}

// token mints a bearer token for u.
func (e *env) token(u user) string {
	tok := fmt.Sprintf("tok%d", e.seq.Add(1))
	e.verify.mu.Lock()
	defer e.verify.mu.Unlock()
	e.verify.tokens[tok] = &auth.Principal{OrgID: u.org, Subject: u.sub, Role: u.role, Scopes: auth.ParseScopes(strings.Join(u.scopes, " "))}
	return tok
}

// Callers of the tests: an owner with every scope, and others.
func owner(org string) user  { return user{org, "owner-1", auth.RoleOwner, []string{auth.ScopeAdmin}} }
func admin(org string) user  { return user{org, "admin-1", auth.RoleAdmin, []string{auth.ScopeAdmin}} }
func member(org string) user { return user{org, "member-1", auth.RoleMember, []string{auth.ScopeRun}} }
func viewer(org string) user { return user{org, "viewer-1", auth.RoleViewer, []string{auth.ScopeRead}} }

// resp is an HTTP answer.
type resp struct {
	status int
	header http.Header
	body   []byte
}

func (r resp) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v\n%s", err, r.body)
	}
	return m
}

// problem returns the first error's code and param ("" for null).
func (r resp) problem(t testing.TB) (code, param string) {
	t.Helper()
	var b struct {
		Status int `json:"status"`
		Errors []struct {
			Code  string  `json:"code"`
			Param *string `json:"param"`
		} `json:"errors"`
		RequestID string `json:"request_id"`
	}
	if err := json.Unmarshal(r.body, &b); err != nil || len(b.Errors) == 0 {
		t.Fatalf("not an error body (%v): %s", err, r.body)
	}
	if b.Status != r.status || !strings.HasPrefix(b.RequestID, "req_") {
		t.Errorf("error body status %d request_id %q; response status %d", b.Status, b.RequestID, r.status)
	}
	if b.Errors[0].Param != nil {
		param = *b.Errors[0].Param
	}
	return b.Errors[0].Code, param
}

// params returns every error's param.
func (r resp) params(t testing.TB) []string {
	t.Helper()
	var b struct {
		Errors []struct {
			Param *string `json:"param"`
		} `json:"errors"`
	}
	if err := json.Unmarshal(r.body, &b); err != nil {
		t.Fatalf("not an error body: %s", r.body)
	}
	var out []string
	for _, e := range b.Errors {
		if e.Param != nil {
			out = append(out, *e.Param)
		}
	}
	return out
}

// do sends a request as the holder of tok. body is sent as JSON unless it
// is a string or []byte (sent as is); headers come in name, value pairs.
func (e *env) do(tok, method, path string, body any, headers ...string) resp {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	case io.Reader:
		rd = b
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			e.t.Fatalf("marshal: %v", err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, e.srv.URL+BasePath+path, rd)
	if err != nil {
		e.t.Fatalf("NewRequest: %v", err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatalf("reading body: %v", err)
	}
	e.checkDocument(method, BasePath+path, res, b)
	return resp{status: res.StatusCode, header: res.Header, body: b}
}

// documentValidator checks answers against the OpenAPI document
// (core/api/openapi), compiled once per test binary.
var documentValidator = sync.OnceValues(openapi.NewValidator)

// checkDocument fails the test when an answer is not what the OpenAPI
// document says: every answer of every test that goes through do — each
// route's successes and its errors, on both backends — is checked, so a
// handler whose answer drifts from the document fails here.
func (e *env) checkDocument(method, target string, res *http.Response, body []byte) {
	e.t.Helper()
	if method == http.MethodHead || target == DocumentPath {
		return
	}
	v, err := documentValidator()
	if err != nil {
		e.t.Fatalf("compiling the OpenAPI document: %v", err)
	}
	path, _, _ := strings.Cut(target, "?")
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		e.t.Errorf("%s %s: %d with Content-Type %q; the document says application/json", method, path, res.StatusCode, ct)
		return
	}
	if err := v.Check(method, path, res.StatusCode, body); err != nil {
		e.t.Errorf("%s %s: %d answer differs from the OpenAPI document (core/api/openapi): %v", method, path, res.StatusCode, err)
	}
}

// must fails the test unless r has status want; it returns the body.
func must(t testing.TB, r resp, want int) map[string]any {
	t.Helper()
	if r.status != want {
		t.Fatalf("status %d, want %d: %s", r.status, want, r.body)
	}
	return r.json(t)
}

// wantProblem fails the test unless r is status with code and param.
func wantProblem(t testing.TB, r resp, status int, code, param string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d (%s): %s", r.status, status, code, r.body)
	}
	gotCode, gotParam := r.problem(t)
	if gotCode != code || gotParam != param {
		t.Fatalf("problem = %s (param %q), want %s (param %q): %s", gotCode, gotParam, code, param, r.body)
	}
}

// simpleSchema is a task input_schema used by most tests.
const simpleSchema = `{"type":"object","required":["period"],"additionalProperties":false,
	"properties":{"period":{"type":"string","pattern":"^[0-9]{4}-[0-9]{2}$"},"limit":{"type":"integer","minimum":1}},
	"examples":[{"period":"2026-03"}]}`

// createTask creates a task through the API as tok and returns its id.
func (e *env) createTask(tok, name string, extra map[string]any) string {
	e.t.Helper()
	body := map[string]any{"name": name, "description": "monthly report", "instructions": "do it",
		"input_schema": json.RawMessage(simpleSchema), "playbook": json.RawMessage(`{"version":1,"steps":[]}`)}
	for k, v := range extra {
		body[k] = v
	}
	m := must(e.t, e.do(tok, "POST", "/tasks", body), http.StatusCreated)
	return m["id"].(string)
}

// launch runs task id as tok and returns the execution id.
func (e *env) launch(tok, taskID string) string {
	e.t.Helper()
	m := must(e.t, e.do(tok, "POST", "/tasks/"+taskID+"/run", map[string]any{"input": map[string]any{"period": "2026-03"}}), http.StatusAccepted)
	return m["id"].(string)
}

// executionIn creates an execution of taskID launched by launcher and
// drives it through the store to status s.
func (e *env) executionIn(org, taskID, launcher string, s store.Status) store.Execution {
	e.t.Helper()
	ctx := context.Background()
	x, err := e.db.CreateExecution(ctx, org, store.Execution{TaskID: taskID, LaunchedBy: launcher, Input: json.RawMessage(`{"period":"2026-03"}`)})
	if err != nil {
		e.t.Fatalf("CreateExecution: %v", err)
	}
	step := func(from, to store.Status, mutate func(*store.Execution)) {
		if x, err = e.db.Transition(ctx, org, x.ID, []store.Status{from}, to, mutate); err != nil {
			e.t.Fatalf("Transition %s → %s: %v", from, to, err)
		}
	}
	waiting := func(x *store.Execution) {
		x.PendingInput = &store.PendingInput{Kind: store.PendingQuestion, Prompt: "Which month?", StepID: "periodo",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"month":{"type":"string","pattern":"^[0-9]{4}-[0-9]{2}$"}},"required":["month"]}`),
			ExpiresAt:   time.Now().Add(time.Hour)}
	}
	switch s {
	case store.StatusQueued:
	case store.StatusCancelled:
		step(store.StatusQueued, store.StatusCancelled, nil)
	default:
		step(store.StatusQueued, store.StatusRunning, nil)
		switch s {
		case store.StatusRunning:
		case store.StatusSucceeded:
			step(store.StatusRunning, store.StatusSucceeded, func(x *store.Execution) {
				x.Output = &store.Output{Summary: "done", Data: json.RawMessage(`{"n":1}`)}
			})
		case store.StatusFailed:
			step(store.StatusRunning, store.StatusFailed, func(x *store.Execution) { x.Failure = &store.Failure{Code: "error", Message: "boom"} })
		case store.StatusCancelling:
			step(store.StatusRunning, store.StatusCancelling, nil)
		case store.StatusWaitingInput:
			step(store.StatusRunning, store.StatusWaitingInput, waiting)
		case store.StatusExpired:
			step(store.StatusRunning, store.StatusWaitingInput, waiting)
			step(store.StatusWaitingInput, store.StatusExpired, nil)
		default:
			e.t.Fatalf("executionIn: unknown status %s", s)
		}
	}
	return x
}

// chunked hides its length, so the body is sent chunked.
type chunked struct{ io.Reader }

// newOrg returns a fresh organisation id.
func newOrg() string { return store.NewID("org_") }
