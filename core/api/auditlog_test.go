package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/kobana/kadu/core/audit"
	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/store"
)

// The audit trail's REST writes (docs/audit.md#what-is-recorded), over
// HTTP on both stores: what an auditor reads back for each kind of write.
func TestAuditLog(t *testing.T) {
	forEachBackend(t, map[string]func(*testing.T, *store.DB){
		"WriteRecordedOnce":     testAuditWriteRecordedOnce,
		"RefusalsRecorded":      testAuditRefusalsRecorded,
		"RolledBackNotRecorded": testAuditRolledBackNotSucceeded,
		"SecretsNeverRecorded":  testAuditSecretsNeverRecorded,
		"ReadsNotRecorded":      testAuditReadsNotRecorded,
		"IdempotentReplay":      testAuditIdempotentReplay,
		"CancelStatus":          testAuditCancelStatus,
	})
}

// auditToken mints a token whose principal carries everything an event
// records: issuer, subject, role, scopes and OAuth client.
func (e *env) auditToken(org string, role auth.Role, scopes ...string) (string, *auth.Principal) {
	e.t.Helper()
	tok := fmt.Sprintf("audit-tok%d", e.seq.Add(1))
	p := &auth.Principal{Issuer: "https://issuer.test", OrgID: org, Subject: "user-" + string(role), Role: role,
		Scopes: auth.ParseScopes(strings.Join(scopes, " ")), ClientID: "client-erp"}
	e.verify.mu.Lock()
	defer e.verify.mu.Unlock()
	e.verify.tokens[tok] = p
	return tok, p
}

// auditEvents returns every event of org, oldest first.
func auditEvents(t testing.TB, db *store.DB, org string) []store.AuditEvent {
	t.Helper()
	var out []store.AuditEvent
	var lp store.ListParams
	for {
		page, err := db.ListAudit(context.Background(), org, store.AuditFilter{}, lp)
		if err != nil {
			t.Fatalf("ListAudit(%s): %v", org, err)
		}
		out = append(out, page.Items...)
		if !page.More || len(page.Items) == 0 {
			break
		}
		lp.Before = page.Items[len(page.Items)-1].ID
	}
	slices.Reverse(out) // newest first → oldest first
	return out
}

// eventsOf returns the events of org for route, oldest first.
func eventsOf(t testing.TB, db *store.DB, org, route string) []store.AuditEvent {
	t.Helper()
	var out []store.AuditEvent
	for _, ev := range auditEvents(t, db, org) {
		if ev.Route == route {
			out = append(out, ev)
		}
	}
	return out
}

func digestOf(t testing.TB, body any) string {
	t.Helper()
	raw, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	return audit.ArgsDigest(raw)
}

func testAuditWriteRecordedOnce(t *testing.T, db *store.DB) {
	e := newEnv(t, db, nil)
	org := newOrg()
	tok, p := e.auditToken(org, auth.RoleAdmin, auth.ScopeAdmin)
	body := map[string]any{"name": "Monthly report", "description": "d", "instructions": "do it",
		"input_schema": json.RawMessage(simpleSchema), "playbook": json.RawMessage(`{"version":1,"steps":[]}`)}
	r := e.do(tok, "POST", "/tasks", body)
	task := must(t, r, http.StatusCreated)

	const route = "POST /api/v1/tasks"
	evs := eventsOf(t, db, org, route)
	if len(evs) != 1 {
		t.Fatalf("%d events of %s, want exactly 1: %+v", len(evs), route, evs)
	}
	got := evs[0]
	want := store.AuditRecord{OrgID: org, Action: store.AuditRESTWrite, Surface: store.SurfaceREST,
		Issuer: p.Issuer, Subject: p.Subject, Role: string(p.Role), Scopes: p.Scopes, ClientID: "client-erp",
		Route: route, ResourceID: task["id"].(string), ArgsDigest: digestOf(t, body), Outcome: store.OutcomeSucceeded,
		Status: http.StatusCreated, RequestID: r.header.Get("X-Request-Id")}
	checkRecord(t, got.AuditRecord, want) // a create names what it created

	// A write of an existing resource names it.
	id := task["id"].(string)
	patch := map[string]any{"description": "new"}
	r = e.do(tok, "PATCH", "/tasks/"+id, patch)
	must(t, r, http.StatusOK)
	evs = eventsOf(t, db, org, "PATCH /api/v1/tasks/{id}")
	if len(evs) != 1 {
		t.Fatalf("%d events of the PATCH, want 1", len(evs))
	}
	want.Route, want.ResourceID, want.ArgsDigest, want.Status = "PATCH /api/v1/tasks/{id}", id, digestOf(t, patch), http.StatusOK
	want.RequestID = r.header.Get("X-Request-Id")
	checkRecord(t, evs[0].AuditRecord, want)
}

// checkRecord compares the fields the recording sets; the store's own
// (time, seq, hashes) are not the API's.
func checkRecord(t *testing.T, got, want store.AuditRecord) {
	t.Helper()
	got.OccurredAt = want.OccurredAt
	if got.RequestID == "" || !strings.HasPrefix(got.RequestID, "req_") {
		t.Errorf("request id %q, want the X-Request-Id answered (req_…)", got.RequestID)
	}
	if len(got.Scopes) == 0 {
		got.Scopes = nil
	}
	if len(want.Scopes) == 0 {
		want.Scopes = nil
	}
	got.TraceID = want.TraceID // no tracer in these tests; core/app's tracing tests cover trace ids
	if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
		t.Errorf("event\n got  %+v\n want %+v", got, want)
	}
}

func testAuditRefusalsRecorded(t *testing.T, db *store.DB) {
	e := newEnv(t, db, nil)
	org := newOrg()
	adminTok, _ := e.auditToken(org, auth.RoleAdmin, auth.ScopeAdmin)
	readTok, _ := e.auditToken(org, auth.RoleAdmin, auth.ScopeRead)
	id := e.createTask(adminTok, "t", nil)
	big := `{"name":"` + strings.Repeat("a", MaxBodyBytes) + `"}`

	tests := []struct {
		name   string
		tok    string
		method string
		path   string
		route  string
		body   any
		status int
		detail string
	}{
		{"validation", adminTok, "POST", "/tasks", "POST /api/v1/tasks", map[string]any{"name": ""}, http.StatusUnprocessableEntity, "validation_error"},
		{"scope", readTok, "PATCH", "/tasks/" + id, "PATCH /api/v1/tasks/{id}", map[string]any{"description": "x"}, http.StatusForbidden, "insufficient_scope"},
		{"not found", adminTok, "DELETE", "/tasks/tsk_" + strings.Repeat("0", 32), "DELETE /api/v1/tasks/{id}", nil, http.StatusNotFound, "not_found"},
		{"bad JSON", adminTok, "PUT", "/tasks/" + id + "/launch_policy", "PUT /api/v1/tasks/{id}/launch_policy", "{nope", http.StatusBadRequest, "bad_request"},
		// Chunked, the limit is found while reading, after authentication.
		{"chunked oversize", adminTok, "POST", "/tasks", "POST /api/v1/tasks", chunked{strings.NewReader(big)}, http.StatusRequestEntityTooLarge, "payload_too_large"},
	}
	for _, tt := range tests {
		r := e.do(tt.tok, tt.method, tt.path, tt.body)
		if r.status != tt.status {
			t.Fatalf("%s: status %d, want %d: %s", tt.name, r.status, tt.status, r.body)
		}
		evs := eventsOf(t, db, org, tt.route)
		var failed []store.AuditEvent
		for _, ev := range evs {
			if ev.RequestID == r.header.Get("X-Request-Id") {
				failed = append(failed, ev)
			}
		}
		if len(failed) != 1 {
			t.Fatalf("%s: %d events of the request, want 1: %+v", tt.name, len(failed), evs)
		}
		ev := failed[0]
		if ev.Outcome != store.OutcomeFailed || ev.Status != tt.status || ev.Detail != tt.detail || ev.Action != store.AuditRESTWrite {
			t.Errorf("%s: event %s/%s status %d detail %q, want rest.write failed %d %q",
				tt.name, ev.Action, ev.Outcome, ev.Status, ev.Detail, tt.status, tt.detail)
		}
	}

	// Declared over the limit: refused before authentication, so nobody
	// is known to record it against (docs/audit.md#what-is-not-recorded).
	r := e.do(adminTok, "POST", "/tasks", big)
	if r.status != http.StatusRequestEntityTooLarge {
		t.Fatalf("declared oversize: status %d, want 413", r.status)
	}
	for _, ev := range auditEvents(t, db, org) {
		if ev.RequestID == r.header.Get("X-Request-Id") {
			t.Errorf("declared oversize left an event: %+v", ev)
		}
	}
}

// testAuditRolledBackNotSucceeded: a launch whose transaction fails (the
// queue refuses the job inside it) leaves no execution and no succeeded
// event, only the failure answered.
func testAuditRolledBackNotSucceeded(t *testing.T, db *store.DB) {
	e := newEnv(t, db, nil)
	org := newOrg()
	tok, _ := e.auditToken(org, auth.RoleAdmin, auth.ScopeAdmin, auth.ScopeRun)
	id := e.createTask(tok, "t", nil)
	e.queue.set(func(q *testQueue) { q.fail = errors.New("queue down") })
	r := e.do(tok, "POST", "/tasks/"+id+"/run", map[string]any{"input": map[string]any{"period": "2026-03"}})
	if r.status != http.StatusInternalServerError {
		t.Fatalf("status %d, want 500: %s", r.status, r.body)
	}
	evs := eventsOf(t, db, org, "POST /api/v1/tasks/{id}/run")
	if len(evs) != 1 || evs[0].Outcome != store.OutcomeFailed || evs[0].Status != http.StatusInternalServerError {
		t.Fatalf("events of the rolled-back launch: %+v, want one failed 500", evs)
	}
}

func testAuditSecretsNeverRecorded(t *testing.T, db *store.DB) {
	e := newEnv(t, db, nil)
	org := newOrg()
	tok, _ := e.auditToken(org, auth.RoleAdmin, auth.ScopeAdmin)
	const secret = "whsec_do-not-record-3f9a1c"

	// A secret sent in a body is taken out before the digest.
	body := map[string]any{"url": hookURL, "event_codes": []string{store.EventExecutionSucceeded}, "secret": secret}
	r := e.do(tok, "POST", "/webhooks", body)
	if r.status != http.StatusUnprocessableEntity {
		t.Fatalf("status %d, want 422 for the unknown member: %s", r.status, r.body)
	}
	withoutSecret := map[string]any{"url": hookURL, "event_codes": []string{store.EventExecutionSucceeded}}
	evs := eventsOf(t, db, org, "POST /api/v1/webhooks")
	if len(evs) != 1 || evs[0].ArgsDigest != digestOf(t, withoutSecret) {
		t.Fatalf("events %+v, want one whose digest is the body's without its secret", evs)
	}

	// Rotation: its own action; the new secret, answered once, is nowhere
	// in the trail.
	hook := e.createWebhook(tok)
	rot := must(t, e.do(tok, "POST", "/webhooks/"+hook["id"].(string)+"/rotate_secret", map[string]any{"overlap_seconds": 60}), http.StatusOK)
	evs = eventsOf(t, db, org, "POST /api/v1/webhooks/{id}/rotate_secret")
	if len(evs) != 1 || evs[0].Action != store.AuditWebhookSecretRotate || evs[0].ResourceID != hook["id"] ||
		evs[0].Outcome != store.OutcomeSucceeded {
		t.Fatalf("events of the rotation: %+v, want one %s of %s", evs, store.AuditWebhookSecretRotate, hook["id"])
	}
	all, err := json.Marshal(auditEvents(t, db, org))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{secret, hook["secret"].(string), rot["secret"].(string)} {
		if strings.Contains(string(all), s) {
			t.Errorf("the trail contains the secret %q", s)
		}
	}
}

func testAuditReadsNotRecorded(t *testing.T, db *store.DB) {
	e := newEnv(t, db, nil)
	org := newOrg()
	tok, _ := e.auditToken(org, auth.RoleAdmin, auth.ScopeAdmin)
	id := e.createTask(tok, "t", nil)
	before := len(auditEvents(t, db, org))
	must(t, e.do(tok, "GET", "/tasks/"+id, nil), http.StatusOK)
	must(t, e.do(tok, "GET", "/tasks", nil), http.StatusOK)
	if n := len(auditEvents(t, db, org)); n != before {
		t.Fatalf("%d events after two reads, want %d: reads are not recorded", n, before)
	}
}

// testAuditIdempotentReplay: the first request is recorded with its
// change; the replay, which changes nothing, is recorded alone as one.
func testAuditIdempotentReplay(t *testing.T, db *store.DB) {
	e := newEnv(t, db, nil)
	org := newOrg()
	tok, _ := e.auditToken(org, auth.RoleAdmin, auth.ScopeAdmin, auth.ScopeRun)
	body := map[string]any{"name": "t", "description": "d", "instructions": "do it",
		"input_schema": json.RawMessage(simpleSchema), "playbook": json.RawMessage(`{"version":1,"steps":[]}`),
		"idempotency_key": "k-1"}
	must(t, e.do(tok, "POST", "/tasks", body), http.StatusCreated)
	again := e.do(tok, "POST", "/tasks", body)
	if again.status != http.StatusCreated || again.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay: %d %v", again.status, again.header)
	}
	evs := eventsOf(t, db, org, "POST /api/v1/tasks")
	if len(evs) != 2 {
		t.Fatalf("%d events, want the write and its replay: %+v", len(evs), evs)
	}
	// The idempotency key is not an argument of the change.
	delete(body, "idempotency_key")
	for i, ev := range evs {
		if ev.Outcome != store.OutcomeSucceeded || ev.Status != http.StatusCreated || ev.ArgsDigest != digestOf(t, body) {
			t.Errorf("event %d: %+v", i, ev)
		}
	}
	if evs[0].Detail != "" || evs[1].Detail != "idempotent replay" {
		t.Errorf("details %q, %q; want the replay said", evs[0].Detail, evs[1].Detail)
	}

	// A refusal the key stores: the first names its error code, the
	// replay says it is one, like a replayed success.
	run := map[string]any{"input": map[string]any{}, "idempotency_key": "k-404"}
	first := e.do(tok, "POST", "/tasks/tsk_missing/run", run)
	again = e.do(tok, "POST", "/tasks/tsk_missing/run", run)
	if first.status != http.StatusNotFound || again.status != http.StatusNotFound || again.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("refusal and its replay: %d, %d %v; want 404, then 404 replayed", first.status, again.status, again.header)
	}
	evs = eventsOf(t, db, org, "POST /api/v1/tasks/{id}/run")
	if len(evs) != 2 {
		t.Fatalf("%d events of the refused run, want the refusal and its replay: %+v", len(evs), evs)
	}
	for i, want := range []string{"not_found", "idempotent replay"} {
		if ev := evs[i]; ev.Outcome != store.OutcomeFailed || ev.Status != http.StatusNotFound || ev.Detail != want {
			t.Errorf("event %d of the refused run: %s %d %q; want failed 404 %q", i, ev.Outcome, ev.Status, ev.Detail, want)
		}
	}
}

// testAuditCancelStatus: a route with two success statuses records the one
// answered, in the transaction of the change.
func testAuditCancelStatus(t *testing.T, db *store.DB) {
	e := newEnv(t, db, nil)
	org := newOrg()
	tok, _ := e.auditToken(org, auth.RoleAdmin, auth.ScopeAdmin, auth.ScopeRun)
	task := e.createTask(tok, "t", nil)
	queued := e.executionIn(org, task, "user-admin", store.StatusQueued)
	running := e.executionIn(org, task, "user-admin", store.StatusRunning)
	must(t, e.do(tok, "POST", "/executions/"+queued.ID+"/cancel", nil), http.StatusOK)
	must(t, e.do(tok, "POST", "/executions/"+running.ID+"/cancel", nil), http.StatusAccepted)
	evs := eventsOf(t, db, org, "POST /api/v1/executions/{id}/cancel")
	got := map[string]int{}
	for _, ev := range evs {
		got[ev.ResourceID] = ev.Status
	}
	want := map[string]int{queued.ID: http.StatusOK, running.ID: http.StatusAccepted}
	if len(evs) != 2 || got[queued.ID] != want[queued.ID] || got[running.ID] != want[running.ID] {
		t.Fatalf("cancel events %v, want %v", got, want)
	}
	if !slices.ContainsFunc(evs, func(ev store.AuditEvent) bool { return ev.Outcome == store.OutcomeSucceeded }) {
		t.Fatalf("no succeeded cancel: %+v", evs)
	}
}
