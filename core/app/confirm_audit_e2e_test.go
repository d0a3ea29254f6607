package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kobana/kadu/core/audit"
	"github.com/kobana/kadu/core/config"
	"github.com/kobana/kadu/core/store"
)

// TestConfirmationAuditTrail runs the product (first-party bundles, the
// embedded issuer) on SQLite and PostgreSQL and walks every confirmation
// path of a destructive call over HTTP: in-chat accepted and declined; an
// approval link issued then approved on the page (after signing in),
// issued then cancelled, issued then expired; and a forged sign-in
// callback. Each leaves exactly its events (docs/audit.md#confirmations-and-approvals),
// with the person, the client, the tool, the confirmation's id and the
// request's id.
func TestConfirmationAuditTrail(t *testing.T) {
	for _, driver := range []string{config.DriverSQLite, config.DriverPostgres} {
		t.Run(driver, func(t *testing.T) { testConfirmationAuditTrail(t, driver) })
	}
}

// confirmActions are the events of the confirmation path.
var confirmActions = []string{store.AuditConfirmAccepted, store.AuditConfirmDeclined, store.AuditApprovalIssued,
	store.AuditApprovalApproved, store.AuditApprovalCancelled, store.AuditApprovalExpired, store.AuditApprovalSignIn}

func testConfirmationAuditTrail(t *testing.T, driver string) {
	srv := startServerCatalog(t, true, nil, func(c *config.Config) {
		useDriver(t, c, driver)
		useFirstPartyBundles(t, c)
	})
	dev := srv.cfg.Auth.Dev
	org := dev.DefaultOrg
	client := registerClient(t, srv, "MCP Inspector")
	token, err := MintDevToken(srv.cfg, TokenOptions{Subject: dev.DefaultSubject, OrgID: org, Role: dev.DefaultRole, ClientID: client})
	if err != nil {
		t.Fatal(err)
	}
	args := exampleRunArgs(t, restClient{t: t, base: srv.baseURL, token: token})
	digest := audit.ArgsDigest(args)
	db := srv.app.backend.db
	trail := func(chain string) []store.AuditEvent {
		t.Helper()
		var out []store.AuditEvent
		p := store.ListParams{Limit: store.MaxListLimit}
		for {
			page, err := db.ListAudit(t.Context(), chain, store.AuditFilter{}, p)
			if err != nil {
				t.Fatalf("ListAudit: %v", err)
			}
			for _, e := range page.Items {
				if slices.Contains(confirmActions, e.Action) {
					out = append(out, e)
				}
			}
			if !page.More || len(page.Items) == 0 {
				break
			}
			p.Before = page.Items[len(page.Items)-1].ID
		}
		slices.Reverse(out) // oldest first
		return out
	}
	seen := 0
	// next returns the events added to org's chain since the last call,
	// failing unless their actions are want.
	next := func(what string, want ...string) []store.AuditEvent {
		t.Helper()
		all := trail(org)
		added := all[seen:]
		seen = len(all)
		var got []string
		for _, e := range added {
			got = append(got, e.Action)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s: new events %v, want %v", what, got, want)
		}
		return added
	}
	// call checks what every event of the call carries.
	call := func(e store.AuditEvent, surface, outcome string) {
		t.Helper()
		if e.OrgID != org || e.Subject != dev.DefaultSubject || e.Issuer == "" || e.Role != dev.DefaultRole ||
			e.ClientID != client || e.Tool != "kadu_tasks_run" || e.ArgsDigest != digest || e.ResourceID == "" ||
			e.Surface != surface || e.Outcome != outcome || e.RequestID == "" || e.Hash == "" {
			t.Errorf("%s event = %+v", e.Action, e.AuditRecord)
		}
	}

	// In the chat: accepted, then declined.
	const caps = `{"elicitation":{}}`
	params := fmt.Sprintf(`{"name":"kadu_tasks_run","arguments":%s}`, args)
	answer := func(response string) {
		t.Helper()
		status, res := mcpCallAs(t, srv, token, caps, "tools/call", "kadu_tasks_run", params)
		state, _ := res["result"].(map[string]any)["requestState"].(string)
		if status != http.StatusOK || state == "" {
			t.Fatalf("kadu_tasks_run: %d %v, want input_required", status, res)
		}
		retry := fmt.Sprintf(`{"name":"kadu_tasks_run","arguments":%s,"inputResponses":{"confirm":%s},"requestState":%q}`, args, response, state)
		if status, res = mcpCallAs(t, srv, token, caps, "tools/call", "kadu_tasks_run", retry); status != http.StatusOK || res["result"] == nil {
			t.Fatalf("answering %s: %d %v", response, status, res)
		}
	}
	answer(`{"action":"accept","content":{"confirm":true}}`)
	call(next("in-chat accept", store.AuditConfirmAccepted)[0], store.SurfaceMCP, store.OutcomeSucceeded)
	answer(`{"action":"decline"}`)
	call(next("in-chat decline", store.AuditConfirmDeclined)[0], store.SurfaceMCP, store.OutcomeDeclined)

	// A forged callback: a failed sign-in, in the installation's chain.
	res, err := http.Get(srv.baseURL + "/approve/callback?state=forged&code=forged")
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	failed := trail(store.InstallationChain)
	if res.StatusCode != http.StatusBadRequest || len(failed) != 1 {
		t.Fatalf("forged callback: %d and %d installation events, want 400 and 1", res.StatusCode, len(failed))
	}
	if f := failed[0]; f.Action != store.AuditApprovalSignIn || f.Outcome != store.OutcomeFailed || f.OrgID != store.InstallationChain ||
		f.Surface != store.SurfaceApproval || f.Subject != "" || f.Status != http.StatusBadRequest ||
		f.RequestID == "" || f.RequestID != res.Header.Get("X-Request-Id") {
		t.Errorf("failed sign-in event = %+v (X-Request-Id %q)", f.AuditRecord, res.Header.Get("X-Request-Id"))
	}
	next("a forged callback adds nothing to the organisation's chain")

	// Issued, signed in, approved.
	b := newPageBrowser(t)
	link := requestApproval(t, srv, token, args)
	issued := next("link issued", store.AuditApprovalIssued)[0]
	call(issued, store.SurfaceMCP, store.OutcomeSucceeded)
	if issued.ResourceID != link.ID {
		t.Errorf("issued event's resource %s, want %s", issued.ResourceID, link.ID)
	}
	form := b.open(link.URL)
	signIn := next("sign-in", store.AuditApprovalSignIn)[0]
	if signIn.Outcome != store.OutcomeSucceeded || signIn.Subject != dev.DefaultSubject || signIn.Surface != store.SurfaceApproval ||
		signIn.ResourceID != link.ID || signIn.RequestID == "" {
		t.Errorf("sign-in event = %+v", signIn.AuditRecord)
	}
	reqID := b.decide(link.URL, form, "continue")
	approved := next("Continue", store.AuditApprovalApproved)[0]
	call(approved, store.SurfaceApproval, store.OutcomeSucceeded)
	if approved.ResourceID != link.ID || approved.RequestID != reqID {
		t.Errorf("approved event: resource %s request %s; want %s, %s", approved.ResourceID, approved.RequestID, link.ID, reqID)
	}
	// The approved call's route writes name the tool that made them, on
	// the surface that ran it.
	page, err := db.ListAudit(t.Context(), org, store.AuditFilter{}, store.ListParams{Limit: store.MaxListLimit})
	if err != nil {
		t.Fatalf("ListAudit: %v", err)
	}
	var writes int
	for _, e := range page.Items {
		if e.Action != store.AuditRESTWrite || e.RequestID != reqID {
			continue
		}
		writes++
		if e.Tool != "kadu_tasks_run" || e.Surface != store.SurfaceApproval || e.ClientID != client || e.Subject != dev.DefaultSubject {
			t.Errorf("route write of the approved call = %+v; want tool kadu_tasks_run, surface %s", e.AuditRecord, store.SurfaceApproval)
		}
	}
	if writes == 0 {
		t.Errorf("the approved call (request %s) left no rest.write event", reqID)
	}
	b.decide(link.URL, form, "continue") // a replayed form changes nothing
	next("a replayed Continue")

	// Issued, cancelled (the session is still signed in: no new sign-in).
	link = requestApproval(t, srv, token, args)
	next("second link", store.AuditApprovalIssued)
	form = b.open(link.URL)
	b.decide(link.URL, form, "cancel")
	cancelled := next("Cancel", store.AuditApprovalCancelled)[0]
	call(cancelled, store.SurfaceApproval, store.OutcomeSucceeded)

	// Issued, expired: the maintenance job's sweep past the link's expiry.
	link = requestApproval(t, srv, token, args)
	next("third link", store.AuditApprovalIssued)
	later := time.Now().Add(srv.cfg.Confirm.ApprovalTTL + time.Minute)
	ctx := context.Background()
	if _, err := db.ExpireApprovals(ctx, later, func(a store.Approval) store.AuditRecord {
		return audit.Approval(ctx, a, store.AuditApprovalExpired, store.OutcomeDeclined)
	}); err != nil {
		t.Fatal(err)
	}
	expired := next("expiry", store.AuditApprovalExpired)[0]
	if expired.ResourceID != link.ID || expired.Surface != store.SurfaceSystem || expired.Outcome != store.OutcomeDeclined ||
		expired.Subject != dev.DefaultSubject || expired.ArgsDigest != digest {
		t.Errorf("expired event = %+v", expired.AuditRecord)
	}
	// Both chains still verify, every event in its place.
	for _, chain := range []string{org, store.InstallationChain} {
		if n, brk, err := db.VerifyAudit(ctx, chain); err != nil || brk != nil || n == 0 {
			t.Errorf("verify %q: %d events, break %v, error %v", chain, n, brk, err)
		}
	}
}

// exampleRunArgs returns kadu_tasks_run's arguments for the daily
// reconciliation example on its own example input.
func exampleRunArgs(t *testing.T, rest restClient) json.RawMessage {
	t.Helper()
	status, _, tasks := rest.do(http.MethodGet, "/tasks", "")
	data, _ := tasks["data"].([]any)
	if status != http.StatusOK || len(data) == 0 {
		t.Fatalf("GET /tasks: %d %v, want the example tasks", status, tasks)
	}
	task := data[0].(map[string]any)
	for _, d := range data {
		if d.(map[string]any)["name"] == "Conciliação diária" {
			task = d.(map[string]any)
		}
	}
	input := map[string]any{}
	if examples, _ := task["input_schema"].(map[string]any)["examples"].([]any); len(examples) > 0 {
		input, _ = examples[0].(map[string]any)
	}
	args, err := json.Marshal(map[string]any{"id": task["id"], "input": input})
	if err != nil {
		t.Fatal(err)
	}
	return args
}

// pageBrowser is a browser without JavaScript: cookies, redirects.
type pageBrowser struct {
	t      *testing.T
	client *http.Client
}

func newPageBrowser(t *testing.T) *pageBrowser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &pageBrowser{t: t, client: &http.Client{Jar: jar, Timeout: 30 * time.Second}}
}

var formField = regexp.MustCompile(`name="form" value="([^"]+)"`)

// open opens an approval link, signing in at the embedded issuer (which
// approves at once) if needed, and returns the decision form's token.
func (b *pageBrowser) open(link string) string {
	b.t.Helper()
	res, err := b.client.Get(link)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	m := formField.FindSubmatch(body)
	if res.StatusCode != http.StatusOK || m == nil {
		b.t.Fatalf("GET %s: %d, no decision form:\n%s", link, res.StatusCode, body)
	}
	return string(m[1])
}

// decide posts decision with form to link and returns the response's
// X-Request-Id.
func (b *pageBrowser) decide(link, form, decision string) string {
	b.t.Helper()
	res, err := b.client.PostForm(link, url.Values{"form": {form}, "decision": {decision}})
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, res.Body)
	if res.StatusCode != http.StatusOK && res.StatusCode != http.StatusConflict {
		b.t.Fatalf("POST %s %s: %d", link, decision, res.StatusCode)
	}
	if strings.TrimSpace(res.Header.Get("X-Request-Id")) == "" {
		b.t.Errorf("POST %s: no X-Request-Id", link)
	}
	return res.Header.Get("X-Request-Id")
}
