package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/store"
)

func TestApprovals(t *testing.T) {
	forEachBackend(t, map[string]func(*testing.T, *store.DB){
		"Get":              testApprovalGet,
		"Decided":          testApprovalDecided,
		"Expired":          testApprovalExpired,
		"OnlyTheRequester": testApprovalOnlyTheRequester,
		"RoleScope":        testApprovalRoleScope,
		"Settled":          testApprovalSettled,
	})
}

const testIssuer = "https://issuer.test"

// tokenAs mints a token for exactly p.
func (e *env) tokenAs(p *auth.Principal) string {
	tok := fmt.Sprintf("tok%d", e.seq.Add(1))
	e.verify.mu.Lock()
	defer e.verify.mu.Unlock()
	e.verify.tokens[tok] = p
	return tok
}

// requester is the person who made the call of the approvals below.
func requester(org string) *auth.Principal {
	return &auth.Principal{Issuer: testIssuer, Subject: "member-1", OrgID: org, Role: auth.RoleMember,
		Scopes: []string{auth.ScopeRun}, ClientID: "client-1"}
}

// approvalIn stores a pending approval of org made by requester(org),
// expiring at expires; clientName "" means an era-2025 client.
func approvalIn(t *testing.T, db *store.DB, org, clientName string, expires time.Time) store.Approval {
	t.Helper()
	p := requester(org)
	a, err := db.CreateApproval(context.Background(), org, store.Approval{
		Tool:      "kadu_tasks_run",
		ToolTitle: "Run a task",
		Arguments: json.RawMessage(`{"id":"tsk_1","input":{"period":"2026-03"}}`),
		Principal: store.ApprovalPrincipal{Issuer: p.Issuer, Subject: p.Subject, OrgID: org, Role: string(p.Role),
			Scopes: p.Scopes, ClientID: p.ClientID},
		ClientID:   p.ClientID,
		ClientName: clientName,
		ExpiresAt:  expires,
	}, time.Now())
	if err != nil {
		t.Fatalf("CreateApproval: %v", err)
	}
	return a
}

// approvalFields are the members of an approval on the wire.
var approvalFields = []string{"id", "status", "tool", "arguments", "client", "created_at", "expires_at", "decided_at", "outcome"}

func testApprovalGet(t *testing.T, db *store.DB) {
	e := newEnv(t, db, nil)
	org := newOrg()
	a := approvalIn(t, db, org, "Claude Desktop", time.Now().Add(15*time.Minute))
	// The requester reads it with any role and read scope: here as a viewer.
	reader := &auth.Principal{Issuer: testIssuer, Subject: "member-1", OrgID: org, Role: auth.RoleViewer, Scopes: []string{auth.ScopeRead}}
	r := e.do(e.tokenAs(reader), "GET", "/approvals/"+a.ID, nil)
	got := must(t, r, http.StatusOK)
	if k := keys(got); !slices.Equal(k, sorted(approvalFields)) {
		t.Errorf("approval has %v, want %v", k, sorted(approvalFields))
	}
	if got["id"] != a.ID || got["status"] != "pending" || got["tool"] != "kadu_tasks_run" ||
		got["decided_at"] != nil || got["outcome"] != nil || got["created_at"] != ts(a.CreatedAt) || got["expires_at"] != ts(a.ExpiresAt) {
		t.Errorf("approval = %v", got)
	}
	if args, _ := json.Marshal(got["arguments"]); string(args) != `{"id":"tsk_1","input":{"period":"2026-03"}}` {
		t.Errorf("arguments = %s", args)
	}
	if c, _ := json.Marshal(got["client"]); string(c) != `{"id":"client-1","name":"Claude Desktop"}` {
		t.Errorf("client = %s", c)
	}
	if r.header.Get("Cache-Control") != "no-store" {
		t.Errorf("Cache-Control = %q", r.header.Get("Cache-Control"))
	}

	// An era-2025 client reported no name.
	b := approvalIn(t, db, org, "", time.Now().Add(time.Minute))
	got = must(t, e.do(e.tokenAs(reader), "GET", "/approvals/"+b.ID, nil), http.StatusOK)
	if c, _ := json.Marshal(got["client"]); string(c) != `{"id":"client-1","name":null}` {
		t.Errorf("client without a name = %s", c)
	}
}

// testApprovalDecided: once continued, the approval carries when and the
// outcome of the call.
func testApprovalDecided(t *testing.T, db *store.DB) {
	e := newEnv(t, db, nil)
	org := newOrg()
	a := approvalIn(t, db, org, "", time.Now().Add(time.Minute))
	ctx := context.Background()
	decided := time.Now()
	if _, err := db.DecideApproval(ctx, org, a.ID, store.ApprovalApproved, decided); err != nil {
		t.Fatal(err)
	}
	outcome := `{"content":[{"type":"text","text":"{\"id\":\"exe_1\",\"status\":\"queued\"}"}]}`
	if _, err := db.FinishApproval(ctx, org, a.ID, store.ApprovalApproved, json.RawMessage(outcome), time.Now()); err != nil {
		t.Fatal(err)
	}
	r := e.do(e.tokenAs(requester(org)), "GET", "/approvals/"+a.ID, nil)
	got := must(t, r, http.StatusOK)
	if got["status"] != "approved" || got["decided_at"] != ts(decided.UTC().Truncate(time.Microsecond)) {
		t.Errorf("approval = %v", got)
	}
	var raw struct {
		Outcome json.RawMessage `json:"outcome"`
	}
	if err := json.Unmarshal(r.body, &raw); err != nil || string(raw.Outcome) != outcome {
		t.Errorf("outcome = %s, want the stored CallToolResult %s", raw.Outcome, outcome)
	}
}

// testApprovalExpired: a pending approval past its expiry reads expired,
// before maintenance writes it.
func testApprovalExpired(t *testing.T, db *store.DB) {
	e := newEnv(t, db, nil)
	org := newOrg()
	a := approvalIn(t, db, org, "", time.Now().Add(-time.Second))
	got := must(t, e.do(e.tokenAs(requester(org)), "GET", "/approvals/"+a.ID, nil), http.StatusOK)
	if got["status"] != "expired" || got["outcome"] != nil {
		t.Errorf("approval = %v", got)
	}
}

// testApprovalOnlyTheRequester: anyone but the requester — an owner of the
// same organisation, the same subject at another issuer, the same person
// in another organisation — gets the 404 of an id that does not exist.
func testApprovalOnlyTheRequester(t *testing.T, db *store.DB) {
	e := newEnv(t, db, nil)
	org := newOrg()
	a := approvalIn(t, db, org, "Claude", time.Now().Add(time.Minute))
	others := map[string]*auth.Principal{
		"owner of the organisation":  {Issuer: testIssuer, Subject: "owner-1", OrgID: org, Role: auth.RoleOwner, Scopes: []string{auth.ScopeAdmin}},
		"same subject, other issuer": {Issuer: "https://elsewhere.test", Subject: "member-1", OrgID: org, Role: auth.RoleMember, Scopes: []string{auth.ScopeRun}},
		"same person, other org":     {Issuer: testIssuer, Subject: "member-1", OrgID: newOrg(), Role: auth.RoleMember, Scopes: []string{auth.ScopeRun}},
	}
	unknown := store.NewID(store.PrefixApproval)
	for name, p := range others {
		tok := e.tokenAs(p)
		foreign := e.do(tok, "GET", "/approvals/"+a.ID, nil)
		missing := e.do(tok, "GET", "/approvals/"+unknown, nil)
		wantProblem(t, foreign, http.StatusNotFound, "not_found", "")
		wantProblem(t, missing, http.StatusNotFound, "not_found", "")
		f := strings.ReplaceAll(string(foreign.body), a.ID, "ID")
		m := strings.ReplaceAll(string(missing.body), unknown, "ID")
		if strip(f) != strip(m) {
			t.Errorf("%s: a foreign approval answers\n%s\nand a missing one\n%s", name, f, m)
		}
	}
	wantProblem(t, e.do(e.tokenAs(requester(org)), "GET", "/approvals/apr_x", nil), http.StatusNotFound, "not_found", "")
	wantProblem(t, e.do(e.tokenAs(requester(org)), "GET", "/approvals/"+unknown, nil), http.StatusNotFound, "not_found", "")
}

// strip removes the request id, which differs between any two answers.
func strip(body string) string {
	var m map[string]any
	_ = json.Unmarshal([]byte(body), &m)
	delete(m, "request_id")
	b, _ := json.Marshal(m)
	return string(b)
}

// testApprovalRoleScope: the route needs the read scope (role viewer), and
// only it: GET is the one method it serves.
func testApprovalRoleScope(t *testing.T, db *store.DB) {
	e := newEnv(t, db, nil)
	org := newOrg()
	a := approvalIn(t, db, org, "", time.Now().Add(time.Minute))
	noScope := requester(org)
	noScope.Scopes = nil
	r := e.do(e.tokenAs(noScope), "GET", "/approvals/"+a.ID, nil)
	wantProblem(t, r, http.StatusForbidden, "insufficient_scope", "")
	if !strings.Contains(r.header.Get("WWW-Authenticate"), auth.ScopeRead) {
		t.Errorf("WWW-Authenticate = %q", r.header.Get("WWW-Authenticate"))
	}
	for _, m := range []string{"POST", "PUT", "PATCH", "DELETE"} {
		r := e.do(e.tokenAs(requester(org)), m, "/approvals/"+a.ID, nil)
		if r.status != http.StatusMethodNotAllowed || r.header.Get("Allow") != "GET" {
			t.Errorf("%s: status %d, Allow %q", m, r.status, r.header.Get("Allow"))
		}
	}
	if got := must(t, e.do(e.tokenAs(requester(org)), "GET", "/approvals/"+a.ID, nil), http.StatusOK); got["status"] != "pending" {
		t.Errorf("a refused request changed the approval: %v", got)
	}
}

// testApprovalSettled: every approval read passes through SettleApproval
// (core/confirm finishes there an approved call whose server stopped
// mid-run), and what it returns is what the requester reads.
func testApprovalSettled(t *testing.T, db *store.DB) {
	var seen []string
	e := newEnv(t, db, func(o *Options) {
		o.SettleApproval = func(_ context.Context, a store.Approval) (store.Approval, error) {
			seen = append(seen, a.ID)
			a.Status = store.ApprovalFailed
			a.Outcome = json.RawMessage(`{"content":[{"type":"text","text":"stopped"}],"isError":true}`)
			return a, nil
		}
	})
	org := newOrg()
	a := approvalIn(t, db, org, "", time.Now().Add(time.Minute))
	got := must(t, e.do(e.tokenAs(requester(org)), "GET", "/approvals/"+a.ID, nil), http.StatusOK)
	if out, _ := json.Marshal(got["outcome"]); got["status"] != "failed" || !strings.Contains(string(out), "stopped") {
		t.Errorf("approval = %v; want what SettleApproval returned", got)
	}
	if !slices.Equal(seen, []string{a.ID}) {
		t.Errorf("SettleApproval saw %v, want [%s]", seen, a.ID)
	}
}
