package api

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kobana/kadu/core/api/routeclass"
	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/config"
	"github.com/kobana/kadu/core/store"
)

func TestWebhooks(t *testing.T) {
	forEachBackend(t, map[string]func(*testing.T, *store.DB){
		"Create":             testWebhookCreate,
		"CreateInvalid":      testWebhookCreateInvalid,
		"CreateIdempotent":   testWebhookCreateIdempotent,
		"AllowHosts":         testWebhookAllowHosts,
		"PlanLimit":          testWebhookPlanLimit,
		"Update":             testWebhookUpdate,
		"Delete":             testWebhookDelete,
		"RotateSecret":       testWebhookRotateSecret,
		"ListPagination":     testWebhookListPagination,
		"Deliveries":         testWebhookDeliveries,
		"DeliveryFilters":    testWebhookDeliveryFilters,
		"Replay":             testWebhookReplay,
		"RoleScope":          testWebhookRoleScope,
		"CrossOrg":           testWebhookCrossOrg,
		"SecretNeverLogged":  testWebhookSecretNeverLogged,
		"CancelEmitsEvent":   testCancelEmitsEvent,
		"ExecutionJSONMatch": testExecutionJSONMatchesGet,
	})
}

const hookURL = "https://hooks.example.com/kadu"

// createWebhook creates a webhook as tok and returns the 201 body.
func (e *env) createWebhook(tok string, codes ...string) map[string]any {
	e.t.Helper()
	if len(codes) == 0 {
		codes = []string{store.EventExecutionSucceeded, store.EventExecutionFailed}
	}
	r := e.do(tok, "POST", "/webhooks", map[string]any{"url": hookURL, "description": "ERP", "event_codes": codes})
	return must(e.t, r, http.StatusCreated)
}

// webhookFields are the members of a webhook on the wire (docs/reference/rest.md#wire-forms).
var webhookFields = []string{"id", "url", "description", "event_codes", "status", "disabled_reason",
	"previous_secret_expires_at", "created_at"}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func testWebhookCreate(t *testing.T, db *store.DB) {
	e := newEnv(t, db, nil)
	org := newOrg()
	tok := e.token(admin(org))
	r := e.do(tok, "POST", "/webhooks", map[string]any{"url": hookURL, "description": "ERP",
		"event_codes": []string{"execution.succeeded", "webhook.disabled"}})
	w := must(t, r, http.StatusCreated)
	id, _ := w["id"].(string)
	if !store.ValidID(store.PrefixWebhook, id) || r.header.Get("Location") != BasePath+"/webhooks/"+id {
		t.Errorf("id %q, Location %q", id, r.header.Get("Location"))
	}
	secret, _ := w["secret"].(string)
	if !strings.HasPrefix(secret, "whsec_") || len(secret) < 40 {
		t.Errorf("secret = %q, want a whsec_ secret", secret)
	}
	if got, want := keys(w), sorted(append(slices.Clone(webhookFields), "secret")); !slices.Equal(got, want) {
		t.Errorf("create answer has %v, want %v", got, want)
	}
	if w["url"] != hookURL || w["description"] != "ERP" || w["status"] != "enabled" || w["disabled_reason"] != nil ||
		w["previous_secret_expires_at"] != nil || len(w["event_codes"].([]any)) != 2 {
		t.Errorf("created = %v", w)
	}

	// The secret is shown once: never by get or list.
	get := e.do(tok, "GET", "/webhooks/"+id, nil)
	g := must(t, get, http.StatusOK)
	if got := keys(g); !slices.Equal(got, sorted(webhookFields)) {
		t.Errorf("get answer has %v, want %v", got, sorted(webhookFields))
	}
	list := e.do(tok, "GET", "/webhooks", nil)
	must(t, list, http.StatusOK)
	for name, body := range map[string][]byte{"get": get.body, "list": list.body} {
		if bytes.Contains(body, []byte(secret)) || bytes.Contains(body, []byte(`"secret"`)) {
			t.Errorf("%s shows the secret: %s", name, body)
		}
	}
	g["secret"] = secret
	if !equalJSON(t, g, w) {
		t.Errorf("get = %v, want the created webhook %v", g, w)
	}
	stored, err := db.GetWebhook(context.Background(), org, id)
	if err != nil || stored.Secret != secret {
		t.Errorf("stored secret differs from the one shown (%v)", err)
	}
	// Description is optional.
	r = e.do(tok, "POST", "/webhooks", map[string]any{"url": hookURL, "event_codes": []string{"file.ready"}})
	if w := must(t, r, http.StatusCreated); w["description"] != "" {
		t.Errorf("description = %v, want \"\"", w["description"])
	}
}

func equalJSON(t *testing.T, a, b any) bool {
	t.Helper()
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	if err1 != nil || err2 != nil {
		t.Fatalf("marshal: %v %v", err1, err2)
	}
	return bytes.Equal(x, y)
}

func testWebhookCreateInvalid(t *testing.T, db *store.DB) {
	e := newEnv(t, db, nil)
	org := newOrg()
	tok := e.token(admin(org))
	codes := []string{"execution.failed"}
	tests := []struct {
		name      string
		body      map[string]any
		wantParam string
	}{
		{"no url", map[string]any{"event_codes": codes}, "url"},
		{"plain http", map[string]any{"url": "http://hooks.example.com/kadu", "event_codes": codes}, "url"},
		{"private IP literal", map[string]any{"url": "https://10.0.0.7/kadu", "event_codes": codes}, "url"},
		{"loopback", map[string]any{"url": "https://127.0.0.1/kadu", "event_codes": codes}, "url"},
		{"link-local metadata address", map[string]any{"url": "https://169.254.169.254/latest", "event_codes": codes}, "url"},
		{"password in the URL", map[string]any{"url": "https://u:p@hooks.example.com/", "event_codes": codes}, "url"},
		{"not a URL", map[string]any{"url": "hooks", "event_codes": codes}, "url"},
		{"url not a string", map[string]any{"url": 7, "event_codes": codes}, "url"},
		{"no event codes", map[string]any{"url": hookURL}, "event_codes"},
		{"empty event codes", map[string]any{"url": hookURL, "event_codes": []string{}}, "event_codes"},
		{"unknown event code", map[string]any{"url": hookURL, "event_codes": []string{"execution.failed", "task.created"}}, "event_codes[1]"},
		{"repeated event code", map[string]any{"url": hookURL, "event_codes": []string{"file.ready", "file.ready"}}, "event_codes[1]"},
		{"event codes not a list", map[string]any{"url": hookURL, "event_codes": "file.ready"}, "event_codes"},
		{"description too long", map[string]any{"url": hookURL, "event_codes": codes, "description": strings.Repeat("x", 501)}, "description"},
		{"unknown field", map[string]any{"url": hookURL, "event_codes": codes, "secret": "whsec_mine"}, "secret"},
	}
	for _, tt := range tests {
		r := e.do(tok, "POST", "/webhooks", tt.body)
		if r.status != http.StatusUnprocessableEntity {
			t.Errorf("%s: status %d, want 422: %s", tt.name, r.status, r.body)
			continue
		}
		if code, param := r.problem(t); code != "validation_error" || param != tt.wantParam {
			t.Errorf("%s: %s on %q, want validation_error on %q: %s", tt.name, code, param, tt.wantParam, r.body)
		}
		// The refusal says what to do, and never echoes a password.
		if bytes.Contains(r.body, []byte("u:p@")) {
			t.Errorf("%s: the answer repeats the URL's password: %s", tt.name, r.body)
		}
	}
	// Several mistakes are listed together.
	r := e.do(tok, "POST", "/webhooks", map[string]any{"url": "http://x.example.com", "event_codes": []string{}})
	if got := r.params(t); !slices.Equal(got, []string{"url", "event_codes"}) {
		t.Errorf("params = %v, want url and event_codes", got)
	}
	if n, _ := db.CountWebhooks(context.Background(), org); n != 0 {
		t.Errorf("refused requests stored %d webhooks", n)
	}
}

func testWebhookCreateIdempotent(t *testing.T, db *store.DB) {
	e := newEnv(t, db, nil)
	org := newOrg()
	tok := e.token(admin(org))
	body := map[string]any{"url": hookURL, "event_codes": []string{"file.ready"}, "idempotency_key": "k1"}
	first := must(t, e.do(tok, "POST", "/webhooks", body), http.StatusCreated)
	r := e.do(tok, "POST", "/webhooks", body)
	again := must(t, r, http.StatusCreated)
	if r.header.Get("Idempotent-Replayed") != "true" || again["id"] != first["id"] || again["secret"] != first["secret"] ||
		r.header.Get("Location") != BasePath+"/webhooks/"+first["id"].(string) {
		t.Errorf("replay = %v (headers %v), want the first answer", again, r.header)
	}
	if n, _ := db.CountWebhooks(context.Background(), org); n != 1 {
		t.Errorf("%d webhooks, want 1", n)
	}
}

func testWebhookAllowHosts(t *testing.T, db *store.DB) {
	e := newEnv(t, db, func(o *Options) { o.WebhookAllowHosts = []string{"127.0.0.1", "*.dev.test"} })
	tok := e.token(admin(newOrg()))
	for _, u := range []string{"http://127.0.0.1:8080/hook", "http://kadu.dev.test/in", "https://hooks.example.com/x"} {
		must(t, e.do(tok, "POST", "/webhooks", map[string]any{"url": u, "event_codes": []string{"file.ready"}}), http.StatusCreated)
	}
	wantProblem(t, e.do(tok, "POST", "/webhooks", map[string]any{"url": "http://10.1.2.3/hook", "event_codes": []string{"file.ready"}}),
		http.StatusUnprocessableEntity, "validation_error", "url")
}

func testWebhookPlanLimit(t *testing.T, db *store.DB) {
	e := newEnv(t, db, func(o *Options) {
		o.Plans = map[string]config.Plan{
			"two":  {ConcurrentExecutions: 1, ExecutionsPerMonth: 3, Webhooks: 2, CostCapCents: 100, MaxCostPerExecutionCents: 50},
			"none": {ConcurrentExecutions: 1, ExecutionsPerMonth: 3, Webhooks: 0, CostCapCents: 100, MaxCostPerExecutionCents: 50},
		}
		o.DefaultPlan = "two"
	})
	org := newOrg()
	tok := e.token(admin(org))
	first := e.createWebhook(tok)
	e.createWebhook(tok)
	r := e.do(tok, "POST", "/webhooks", map[string]any{"url": hookURL, "event_codes": []string{"file.ready"}})
	wantProblem(t, r, http.StatusPaymentRequired, "plan_limit_exceeded", "")
	if p := r.json(t)["errors"].([]any)[0].(map[string]any); p["limit"] != 2.0 || p["plan"] != "two" {
		t.Errorf("problem = %v", p)
	}
	// Deleting one makes room.
	must(t, e.do(tok, "DELETE", "/webhooks/"+first["id"].(string), nil), http.StatusOK)
	e.createWebhook(tok)

	// A plan without webhooks refuses the first one.
	none := newOrg()
	if _, _, err := db.EnsureOrg(context.Background(), none, "none"); err != nil {
		t.Fatal(err)
	}
	wantProblem(t, e.do(e.token(admin(none)), "POST", "/webhooks", map[string]any{"url": hookURL, "event_codes": []string{"file.ready"}}),
		http.StatusPaymentRequired, "plan_limit_exceeded", "")
}

func testWebhookUpdate(t *testing.T, db *store.DB) {
	e := newEnv(t, db, nil)
	org := newOrg()
	tok := e.token(admin(org))
	w := e.createWebhook(tok)
	id := w["id"].(string)
	path := "/webhooks/" + id

	got := must(t, e.do(tok, "PATCH", path, map[string]any{"url": "https://new.example.com/in", "description": "",
		"event_codes": []string{"execution.expired"}, "enabled": false}), http.StatusOK)
	if got["url"] != "https://new.example.com/in" || got["description"] != "" || got["status"] != "disabled" ||
		got["disabled_reason"] == nil || len(got["event_codes"].([]any)) != 1 || got["secret"] != nil {
		t.Errorf("patched = %v", got)
	}
	// Re-enabling clears the reason and the failing clock.
	if _, err := db.MarkWebhookFailing(context.Background(), org, id, time.Now()); err != nil {
		t.Fatal(err)
	}
	got = must(t, e.do(tok, "PATCH", path, map[string]any{"enabled": true}), http.StatusOK)
	if got["status"] != "enabled" || got["disabled_reason"] != nil || got["url"] != "https://new.example.com/in" {
		t.Errorf("re-enabled = %v", got)
	}
	if s, _ := db.GetWebhook(context.Background(), org, id); s.FailingSince != nil || s.Secret != w["secret"] {
		t.Errorf("stored after enabling: failing since %v, secret changed %v", s.FailingSince, s.Secret != w["secret"])
	}

	tests := []struct {
		name  string
		body  map[string]any
		param string
	}{
		{"http url", map[string]any{"url": "http://new.example.com"}, "url"},
		{"empty event codes", map[string]any{"event_codes": []string{}}, "event_codes"},
		{"enabled not a boolean", map[string]any{"enabled": "yes"}, "enabled"},
		{"status is not writable", map[string]any{"status": "enabled"}, "status"},
	}
	for _, tt := range tests {
		r := e.do(tok, "PATCH", path, tt.body)
		if r.status != http.StatusUnprocessableEntity {
			t.Errorf("%s: status %d: %s", tt.name, r.status, r.body)
			continue
		}
		if _, param := r.problem(t); param != tt.param {
			t.Errorf("%s: param %q, want %q", tt.name, param, tt.param)
		}
	}
	wantProblem(t, e.do(tok, "PATCH", path, map[string]any{}), http.StatusUnprocessableEntity, "validation_error", "")
	wantProblem(t, e.do(tok, "PATCH", "/webhooks/whk_nope", map[string]any{"enabled": true}), http.StatusNotFound, "not_found", "")
}

func testWebhookDelete(t *testing.T, db *store.DB) {
	e := newEnv(t, db, nil)
	org := newOrg()
	tok := e.token(admin(org))
	id := e.createWebhook(tok, store.EventExecutionFailed)["id"].(string)
	ds, err := db.EmitEvent(context.Background(), org, store.EventExecutionFailed, json.RawMessage(`{"id":"exe_1"}`))
	if err != nil || len(ds) != 1 {
		t.Fatalf("EmitEvent = %v, %v", ds, err)
	}
	got := must(t, e.do(tok, "DELETE", "/webhooks/"+id, nil), http.StatusOK)
	if got["id"] != id || got["deleted"] != true {
		t.Errorf("delete = %v", got)
	}
	wantProblem(t, e.do(tok, "GET", "/webhooks/"+id, nil), http.StatusNotFound, "not_found", "")
	wantProblem(t, e.do(tok, "DELETE", "/webhooks/"+id, nil), http.StatusNotFound, "not_found", "")
	if l := must(t, e.do(tok, "GET", "/webhooks", nil), http.StatusOK)["data"].([]any); len(l) != 0 {
		t.Errorf("list shows a deleted webhook: %v", l)
	}
	// Its pending delivery is cancelled, and stays in the log.
	d := must(t, e.do(tok, "GET", "/webhook_deliveries/"+ds[0].ID, nil), http.StatusOK)
	if d["status"] != "cancelled" || d["next_attempt_at"] != nil {
		t.Errorf("delivery of a deleted webhook = %v", d)
	}
}

func testWebhookRotateSecret(t *testing.T, db *store.DB) {
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	e := newEnv(t, db, func(o *Options) { o.Now = func() time.Time { return now } })
	org := newOrg()
	tok := e.token(admin(org))
	w := e.createWebhook(tok)
	id, old := w["id"].(string), w["secret"].(string)
	path := "/webhooks/" + id + "/rotate_secret"

	r := must(t, e.do(tok, "POST", path, nil), http.StatusOK)
	secret, _ := r["secret"].(string)
	if !strings.HasPrefix(secret, "whsec_") || secret == old {
		t.Errorf("rotated secret = %q (old %q)", secret, old)
	}
	if r["previous_secret_expires_at"] != ts(now.Add(24*time.Hour)) || r["id"] != id {
		t.Errorf("default overlap: %v, want the old secret valid until %s", r["previous_secret_expires_at"], ts(now.Add(24*time.Hour)))
	}
	stored, err := db.GetWebhook(context.Background(), org, id)
	if err != nil {
		t.Fatal(err)
	}
	if s := stored.Secrets(now); !slices.Equal(s, []string{secret, old}) {
		t.Errorf("deliveries are signed with %d secrets during the overlap, want the new then the old", len(s))
	}
	if g := must(t, e.do(tok, "GET", "/webhooks/"+id, nil), http.StatusOK); g["secret"] != nil || g["previous_secret_expires_at"] != r["previous_secret_expires_at"] {
		t.Errorf("get after rotation = %v", g)
	}

	r = must(t, e.do(tok, "POST", path, map[string]any{"overlap_seconds": 604800}), http.StatusOK)
	if r["previous_secret_expires_at"] != ts(now.Add(7*24*time.Hour)) {
		t.Errorf("7 day overlap: %v", r["previous_secret_expires_at"])
	}
	r = must(t, e.do(tok, "POST", path, map[string]any{"overlap_seconds": 0}), http.StatusOK)
	if r["previous_secret_expires_at"] != nil {
		t.Errorf("no overlap: previous_secret_expires_at = %v, want null", r["previous_secret_expires_at"])
	}
	if s, _ := db.GetWebhook(context.Background(), org, id); len(s.Secrets(now)) != 1 || s.Secret != r["secret"] {
		t.Errorf("without overlap only the new secret signs")
	}
	for _, bad := range []any{-1, 604801, "60", 1.5} {
		wantProblem(t, e.do(tok, "POST", path, map[string]any{"overlap_seconds": bad}), http.StatusUnprocessableEntity, "validation_error", "overlap_seconds")
	}
	wantProblem(t, e.do(tok, "POST", "/webhooks/whk_0123/rotate_secret", nil), http.StatusNotFound, "not_found", "")
}

func testWebhookListPagination(t *testing.T, db *store.DB) {
	e := newEnv(t, db, nil)
	tok := e.token(admin(newOrg()))
	var want []string
	for range 5 {
		want = append([]string{e.createWebhook(tok)["id"].(string)}, want...)
	}
	var got []string
	path := "/webhooks?limit=2"
	for {
		page := must(t, e.do(tok, "GET", path, nil), http.StatusOK)
		for _, it := range page["data"].([]any) {
			got = append(got, it.(map[string]any)["id"].(string))
		}
		next, _ := page["meta"].(map[string]any)["next_cursor"].(string)
		if next == "" {
			break
		}
		path = "/webhooks?limit=2&cursor=" + next
	}
	if !slices.Equal(got, want) {
		t.Errorf("pages = %v, want %v", got, want)
	}
}

// webhookRouteCases lists every webhook route (webhookRouteBody gives a
// body that succeeds). W and D stand for a webhook and a delivery of the
// caller's organisation.
var webhookRouteCases = []struct{ method, path string }{
	{"GET", "/webhooks"},
	{"POST", "/webhooks"},
	{"GET", "/webhooks/W"},
	{"PATCH", "/webhooks/W"},
	{"DELETE", "/webhooks/W"},
	{"POST", "/webhooks/W/rotate_secret"},
	{"GET", "/webhook_deliveries"},
	{"GET", "/webhook_deliveries/D"},
	{"POST", "/webhook_deliveries/D/replay"},
}

func webhookRouteBody(method, path string) any {
	switch {
	case method == "POST" && path == "/webhooks":
		return map[string]any{"url": hookURL, "event_codes": []string{"file.ready"}}
	case method == "PATCH":
		return map[string]any{"description": "renamed"}
	}
	return nil
}

// testWebhookRoleScope: every webhook route needs the admin role and the
// admin scope (docs/reference/rest.md#routes): below admin is forbidden_role, without the
// admin scope insufficient_scope, with both it works.
func testWebhookRoleScope(t *testing.T, db *store.DB) {
	e := newEnv(t, db, nil)
	// The bundle's audit trail routes have their own test (testAuditAccess).
	n := 0
	for _, r := range routeclass.Grants("webhooks") {
		if !strings.Contains(r, "/audit_events") {
			n++
		}
	}
	if n != len(webhookRouteCases) {
		t.Fatalf("webhookRouteCases has %d routes, the route table %d", len(webhookRouteCases), n)
	}
	for _, rc := range webhookRouteCases {
		// A fresh organisation per route: the refused calls change
		// nothing, so the last call finds the fixture as it was made.
		org := newOrg()
		w, d := deliveryFixture(t, e, org, e.token(owner(org)))
		path := strings.NewReplacer("/W", "/"+w, "/D", "/"+d).Replace(rc.path)
		body := webhookRouteBody(rc.method, rc.path)
		name := rc.method + " " + rc.path
		for _, role := range []auth.Role{auth.RoleViewer, auth.RoleMember} {
			below := user{org, "someone", role, []string{auth.ScopeAdmin}}
			r := e.do(e.token(below), rc.method, path, body)
			if code, _ := r.problem(t); r.status != http.StatusForbidden || code != "forbidden_role" {
				t.Errorf("%s as %s: %d %s, want 403 forbidden_role", name, role, r.status, code)
			}
		}
		lacking := user{org, "someone", auth.RoleOwner, []string{auth.ScopeWrite, auth.ScopeRun}}
		r := e.do(e.token(lacking), rc.method, path, body)
		if code, _ := r.problem(t); r.status != http.StatusForbidden || code != "insufficient_scope" ||
			!strings.Contains(r.header.Get("WWW-Authenticate"), auth.ScopeAdmin) {
			t.Errorf("%s without kadu.admin: %d %s (WWW-Authenticate %q), want 403 insufficient_scope naming kadu.admin",
				name, r.status, code, r.header.Get("WWW-Authenticate"))
		}
		exactly := user{org, "someone", auth.RoleAdmin, []string{auth.ScopeAdmin}}
		if r := e.do(e.token(exactly), rc.method, path, body); r.status >= 300 {
			t.Errorf("%s as admin with kadu.admin: status %d: %s", name, r.status, r.body)
		}
	}
}

// testWebhookCrossOrg: another organisation's webhook and delivery ids are
// 404 on every route, change nothing, and never appear in lists.
func testWebhookCrossOrg(t *testing.T, db *store.DB) {
	e := newEnv(t, db, nil)
	orgA, orgB := newOrg(), newOrg()
	tokA, tokB := e.token(owner(orgA)), e.token(owner(orgB))
	w, d := deliveryFixture(t, e, orgA, tokA)
	before := must(t, e.do(tokA, "GET", "/webhooks/"+w, nil), http.StatusOK)
	for _, rc := range webhookRouteCases {
		if !strings.Contains(rc.path, "/W") && !strings.Contains(rc.path, "/D") {
			continue
		}
		path := strings.NewReplacer("/W", "/"+w, "/D", "/"+d).Replace(rc.path)
		wantProblem(t, e.do(tokB, rc.method, path, webhookRouteBody(rc.method, rc.path)), http.StatusNotFound, "not_found", "")
	}
	if after := must(t, e.do(tokA, "GET", "/webhooks/"+w, nil), http.StatusOK); !equalJSON(t, after, before) {
		t.Errorf("org B changed A's webhook: %v → %v", before, after)
	}
	if s, _ := db.GetWebhook(context.Background(), orgA, w); len(s.Secrets(time.Now())) != 1 {
		t.Errorf("org B rotated A's secret")
	}
	if got := must(t, e.do(tokA, "GET", "/webhook_deliveries/"+d, nil), http.StatusOK); got["status"] != "pending" {
		t.Errorf("org B changed A's delivery: %v", got)
	}
	for _, path := range []string{"/webhooks", "/webhook_deliveries", "/webhook_deliveries?webhook_id=" + w} {
		if l := must(t, e.do(tokB, "GET", path, nil), http.StatusOK)["data"].([]any); len(l) != 0 {
			t.Errorf("org B lists %s: %v", path, l)
		}
	}
	e.queue.mu.Lock()
	defer e.queue.mu.Unlock()
	if len(e.queue.replays) != 0 {
		t.Errorf("org B replayed A's delivery")
	}
}

// syncBuffer is a log destination for concurrent handlers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// testWebhookSecretNeverLogged: create, rotate and their replays, at debug
// level, leave no secret in the logs.
func testWebhookSecretNeverLogged(t *testing.T, db *store.DB) {
	var logs syncBuffer
	e := newEnv(t, db, func(o *Options) {
		o.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	tok := e.token(admin(newOrg()))
	body := map[string]any{"url": hookURL, "event_codes": []string{"file.ready"}, "idempotency_key": "k"}
	created := must(t, e.do(tok, "POST", "/webhooks", body), http.StatusCreated)
	must(t, e.do(tok, "POST", "/webhooks", body), http.StatusCreated)
	id := created["id"].(string)
	rotated := must(t, e.do(tok, "POST", "/webhooks/"+id+"/rotate_secret", nil), http.StatusOK)
	must(t, e.do(tok, "GET", "/webhooks/"+id, nil), http.StatusOK)
	if logs.String() == "" {
		t.Fatalf("nothing was logged: the test would prove nothing")
	}
	for _, s := range []any{created["secret"], rotated["secret"]} {
		if strings.Contains(logs.String(), s.(string)) {
			t.Errorf("a secret is in the logs:\n%s", logs.String())
		}
	}
	if strings.Contains(logs.String(), "whsec_") {
		t.Errorf("the logs mention a whsec_ secret:\n%s", logs.String())
	}
}

// testCancelEmitsEvent: cancelling a queued or waiting execution emits
// execution.cancelled; moving a running one to cancelling does not (its
// worker emits when it stops).
func testCancelEmitsEvent(t *testing.T, db *store.DB) {
	e := newEnv(t, db, nil)
	org := newOrg()
	own := e.token(owner(org))
	task := e.createTask(own, "t", nil)
	events := func() []string {
		e.queue.mu.Lock()
		defer e.queue.mu.Unlock()
		return slices.Clone(e.queue.events)
	}
	for _, s := range []store.Status{store.StatusQueued, store.StatusWaitingInput} {
		x := e.executionIn(org, task, "owner-1", s)
		must(t, e.do(own, "POST", "/executions/"+x.ID+"/cancel", nil), http.StatusOK)
	}
	if got := events(); !slices.Equal(got, []string{store.EventExecutionCancelled, store.EventExecutionCancelled}) {
		t.Errorf("events = %v, want two execution.cancelled", got)
	}
	x := e.executionIn(org, task, "owner-1", store.StatusRunning)
	must(t, e.do(own, "POST", "/executions/"+x.ID+"/cancel", nil), http.StatusAccepted)
	if got := events(); len(got) != 2 {
		t.Errorf("cancelling a running execution emitted %v", got[2:])
	}
}

// testExecutionJSONMatchesGet: the object of execution events is exactly
// what GET /executions/{id} answers.
func testExecutionJSONMatchesGet(t *testing.T, db *store.DB) {
	e := newEnv(t, db, nil)
	org := newOrg()
	own := e.token(owner(org))
	x := e.executionIn(org, e.createTask(own, "t", nil), "owner-1", store.StatusSucceeded)
	r := e.do(own, "GET", "/executions/"+x.ID, nil)
	must(t, r, http.StatusOK)
	plan := testPlans()["developer"]
	if got := ExecutionJSON(x, plan.MaxCostPerExecutionCents); !bytes.Equal(append(got, '\n'), r.body) {
		t.Errorf("ExecutionJSON =\n%s\nGET answers\n%s", got, r.body)
	}
	w := e.createWebhook(own)
	g := e.do(own, "GET", "/webhooks/"+w["id"].(string), nil)
	stored, _ := db.GetWebhook(context.Background(), org, w["id"].(string))
	if got := WebhookJSON(stored); !bytes.Equal(append(got, '\n'), g.body) {
		t.Errorf("WebhookJSON =\n%s\nGET answers\n%s", got, g.body)
	}
}
