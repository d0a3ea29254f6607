package page

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/confirm"
	"github.com/kobana/kadu/core/devauth"
	"github.com/kobana/kadu/core/internal/fakeclock"
	"github.com/kobana/kadu/core/store"
)

// fakeApprovals is the Confirmer as the page sees it: approvals in memory,
// Decide with the Confirmer's rules, and a count of runs so tests can say
// "nothing ran".
type fakeApprovals struct {
	clock *fakeclock.Clock

	mu        sync.Mutex
	approvals map[string]store.Approval
	runs      map[string]int
	deciders  []*auth.Principal
	outcome   func(a store.Approval) (store.ApprovalStatus, json.RawMessage)
}

func newFakeApprovals(clock *fakeclock.Clock) *fakeApprovals {
	return &fakeApprovals{clock: clock, approvals: map[string]store.Approval{}, runs: map[string]int{},
		outcome: func(a store.Approval) (store.ApprovalStatus, json.RawMessage) {
			return store.ApprovalApproved, json.RawMessage(`{"content":[{"type":"text","text":"{\"id\":\"exe_0193a5c4e1f27c3a9b1d2e4f5a6b7c8d\",\"status\":\"queued\",\"task_id\":\"tsk_1\"}"}]}`)
		}}
}

// add stores a pending approval requested by subject in org and returns it.
func (f *fakeApprovals) add(issuer, subject, org string, mutate func(*store.Approval)) store.Approval {
	now := f.clock.Now()
	a := store.Approval{
		ID:        store.NewID(store.PrefixApproval),
		OrgID:     org,
		Tool:      "kadu_tasks_run",
		ToolTitle: "Run a task",
		Arguments: json.RawMessage(`{"id":"tsk_0193a5c4e1f27c3a9b1d2e4f5a6b7c8d","input_file_ids":["file_1","file_2"]}`),
		Principal: store.ApprovalPrincipal{Issuer: issuer, Subject: subject, OrgID: org, Role: "member",
			Scopes: []string{"kadu.run"}, ClientID: "client-of-" + subject},
		ClientID:   "client-of-" + subject,
		ClientName: "Claude Desktop",
		Status:     store.ApprovalPending,
		CreatedAt:  now,
		ExpiresAt:  now.Add(15 * time.Minute),
	}
	if mutate != nil {
		mutate(&a)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.approvals[a.ID] = a
	return a
}

func (f *fakeApprovals) get(id string) store.Approval {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.approvals[id]
}

func (f *fakeApprovals) runCount(id string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.runs[id]
}

func (f *fakeApprovals) Approval(_ context.Context, orgID, id string) (store.Approval, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a, ok := f.approvals[id]
	if !ok || a.OrgID != orgID {
		return store.Approval{}, fmt.Errorf("approval %s: %w", id, store.ErrNotFound)
	}
	return a, nil
}

func (f *fakeApprovals) Decide(_ context.Context, signedIn *auth.Principal, orgID, id string, proceed bool) (store.Approval, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a, ok := f.approvals[id]
	if !ok || a.OrgID != orgID {
		return store.Approval{}, fmt.Errorf("approval %s: %w", id, store.ErrNotFound)
	}
	if signedIn.Issuer != a.Principal.Issuer || signedIn.Subject != a.Principal.Subject {
		return store.Approval{}, confirm.ErrNotRequester
	}
	now := f.clock.Now()
	switch a.StatusAt(now) {
	case store.ApprovalExpired:
		return store.Approval{}, confirm.ErrExpired
	case store.ApprovalPending:
	default:
		return store.Approval{}, confirm.ErrDecided
	}
	f.deciders = append(f.deciders, signedIn)
	a.DecidedAt = &now
	if proceed {
		f.runs[id]++
		a.Status, a.Outcome = f.outcome(a)
	} else {
		a.Status = store.ApprovalCancelled
	}
	f.approvals[id] = a
	return a, nil
}

// describe is a Describe that says which language it was asked for.
func describe(_ context.Context, _ store.Approval, lang string) string {
	if lang == "pt" {
		return "Executar a tarefa *Conciliação diária* com 2 arquivos de entrada"
	}
	return "Run task *Conciliação diária* with 2 input files"
}

// env is the embedded authorization server and the approval page on one
// loopback origin, as core/app mounts them.
type env struct {
	srv       *httptest.Server
	dev       *devauth.Server
	page      *Page
	approvals *fakeApprovals
	clock     *fakeclock.Clock
	issuer    string
	inspector string // client_id of a client registered as "MCP Inspector"
}

// newEnv starts the server; mutate, if set, adjusts the page options.
func newEnv(t testing.TB, mutate func(*Options)) *env {
	t.Helper()
	e := echo.New()
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	quiet := slog.New(slog.DiscardHandler)

	dev, err := devauth.New(devauth.Options{Issuer: srv.URL, Resource: srv.URL + "/mcp", Logger: quiet})
	if err != nil {
		t.Fatalf("devauth.New() error = %v", err)
	}
	dev.Register(e)
	pageClient, err := dev.RegisterClient(devauth.ClientRegistration{Name: "Kadu approval page",
		RedirectURIs: []string{srv.URL + pathCallback}})
	if err != nil {
		t.Fatal(err)
	}
	inspector, err := dev.RegisterClient(devauth.ClientRegistration{Name: "MCP Inspector",
		RedirectURIs: []string{"http://localhost:6274/oauth/callback"}})
	if err != nil {
		t.Fatal(err)
	}
	verifier, err := auth.NewVerifier(auth.Options{Issuer: srv.URL, Resource: srv.URL + "/mcp",
		KeySet: dev.KeySet(), Algorithms: dev.Algorithms(), RequireATJWT: true})
	if err != nil {
		t.Fatal(err)
	}

	clock := fakeclock.New(time.Now().UTC())
	fa := newFakeApprovals(clock)
	key := make([]byte, 32)
	rand.Read(key)
	opts := Options{
		PublicURL:   srv.URL,
		Issuer:      srv.URL,
		ClientID:    pageClient.ID,
		MCPURL:      srv.URL + "/mcp",
		Verify:      verifier.Verify,
		Approvals:   fa,
		Describe:    describe,
		ClientNames: dev.ClientName,
		SealKey:     key,
		Logger:      quiet,
		Now:         clock.Now,
		HTTPClient:  srv.Client(),
	}
	if mutate != nil {
		mutate(&opts)
	}
	p, err := New(opts)
	if err != nil {
		t.Fatalf("New() error = %v", err)
	}
	p.Register(e)
	return &env{srv: srv, dev: dev, page: p, approvals: fa, clock: clock, issuer: srv.URL, inspector: inspector.ID}
}

// pending adds a pending approval made by subject in org through MCP
// Inspector.
func (env *env) pending(subject, org string) store.Approval {
	return env.approvals.add(env.issuer, subject, org, func(a *store.Approval) {
		a.ClientID, a.Principal.ClientID = env.inspector, env.inspector
	})
}

// browser is a cookie-keeping client that does not follow redirects, so
// each step can be checked.
type browser struct {
	t    *testing.T
	c    *http.Client
	env  *env
	lang string // Accept-Language
}

func (env *env) browser(t *testing.T) *browser {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &browser{t: t, env: env, c: &http.Client{
		Jar:           jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// response is a fetched page.
type response struct {
	status int
	header http.Header
	body   string
	loc    string // Location, resolved against the request URL
}

func (b *browser) do(req *http.Request) response {
	b.t.Helper()
	if b.lang != "" {
		req.Header.Set("Accept-Language", b.lang)
	}
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	r := response{status: resp.StatusCode, header: resp.Header, body: string(body)}
	if l, err := resp.Location(); err == nil {
		r.loc = l.String()
	}
	return r
}

func (b *browser) get(u string) response {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodGet, b.abs(u), nil)
	if err != nil {
		b.t.Fatal(err)
	}
	return b.do(req)
}

// post sends a form as a browser submitting the page's own form would.
func (b *browser) post(u string, form url.Values, headers map[string]string) response {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodPost, b.abs(u), strings.NewReader(form.Encode()))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", b.env.srv.URL)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	for k, v := range headers {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	return b.do(req)
}

func (b *browser) abs(u string) string {
	if strings.HasPrefix(u, "/") {
		return b.env.srv.URL + u
	}
	return u
}

// follow fetches r's redirects until a page answers.
func (b *browser) follow(r response) response {
	b.t.Helper()
	for i := 0; r.loc != "" && r.status >= 300 && r.status < 400; i++ {
		if i == 10 {
			b.t.Fatalf("too many redirects, last to %s", r.loc)
		}
		r = b.get(r.loc)
	}
	return r
}

// open opens approval id and signs in at the embedded server's consent
// page as subject in org, returning the page the sign-in ends on.
func (b *browser) open(id, subject, org string) response {
	b.t.Helper()
	r := b.follow(b.get(approvePath + id))
	if r.status != http.StatusOK || !strings.Contains(r.body, `action="/oauth/authorize"`) {
		return r // already signed in, or refused before signing in
	}
	return b.consent(r, subject, org)
}

// consent approves the embedded server's consent page r as subject in org.
func (b *browser) consent(r response, subject, org string) response {
	b.t.Helper()
	m := regexp.MustCompile(`name="form" value="([^"]+)"`).FindStringSubmatch(r.body)
	if m == nil {
		b.t.Fatalf("no consent form on:\n%s", r.body)
	}
	form := url.Values{"form": {m[1]}, "decision": {"approve"}, "subject": {subject}, "org": {org}, "role": {"member"}}
	return b.follow(b.post("/oauth/authorize", form, nil))
}

// formToken extracts the decision form's token from an approval page.
func formTokenOf(t *testing.T, page string) string {
	t.Helper()
	m := regexp.MustCompile(`name="form" value="([^"]+)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no decision form on:\n%s", page)
	}
	return m[1]
}

// decide presses a button of approval id's form.
func (b *browser) decide(id, token, decision string) response {
	b.t.Helper()
	return b.post(approvePath+id, url.Values{"form": {token}, "decision": {decision}}, nil)
}
