package api

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kobana/kadu/core/api/openapi"
	"github.com/kobana/kadu/core/api/routeclass"
	"github.com/kobana/kadu/core/store"
)

func TestDocument(t *testing.T) {
	forEachBackend(t, map[string]func(*testing.T, *store.DB){
		"EveryRouteAnswersAsDocumented": testEveryRouteAnswersAsDocumented,
		"Served":                        testDocumentServed,
	})
}

// testEveryRouteAnswersAsDocumented calls every route of the table with a
// request that succeeds, and a few that fail, through do, which checks
// each answer against the OpenAPI document; it fails unless every route
// gave a documented success.
func testEveryRouteAnswersAsDocumented(t *testing.T, db *store.DB) {
	e := newEnv(t, db, withFakeBlobs)
	org := newOrg()
	own := e.token(owner(org))
	succeeded := map[string]bool{}
	v, err := documentValidator()
	if err != nil {
		t.Fatal(err)
	}
	// call sends method to path, the route's case with ids in place, after
	// checking its body against the route's request schema.
	call := func(method, route, path string, body any) {
		t.Helper()
		if r, ok := v.Route(method, routeclass.Prefix+path); ok && r.Request != "" {
			raw, _ := json.Marshal(body)
			if body == nil {
				raw = []byte("{}")
			}
			if err := v.CheckSchema(r.Request, raw); err != nil {
				t.Errorf("%s: a body the API accepts is refused by the document: %v", r, err)
			}
		}
		r := e.do(own, method, path, body)
		if r.status >= 300 {
			t.Errorf("%s %s: status %d: %s", method, path, r.status, r.body)
			return
		}
		succeeded[tableRoute(method, route)] = true
	}
	for _, rc := range routeCases() {
		task := e.createTask(own, "t", nil)
		status := rc.status
		if status == "" {
			status = store.StatusWaitingInput
		}
		x := e.executionIn(org, task, "owner-1", status)
		call(rc.method, rc.path, strings.NewReplacer("/T", "/"+task, "/X", "/"+x.ID, "/F", "/"+e.fileIn(org, "owner-1")).Replace(rc.path), rc.body)
	}
	for _, rc := range webhookRouteCases {
		// A fresh organisation per route: an event goes to every webhook
		// of the organisation.
		o := newOrg()
		w, d := deliveryFixture(t, e, o, e.token(owner(o)))
		own = e.token(owner(o))
		call(rc.method, rc.path, strings.NewReplacer("/W", "/"+w, "/D", "/"+d).Replace(rc.path), webhookRouteBody(rc.method, rc.path))
	}
	own = e.token(owner(org))
	ap := approvalIn(t, db, org, "Claude", time.Now().Add(time.Minute))
	r := e.do(e.tokenAs(requester(org)), "GET", "/approvals/"+ap.ID, nil)
	if r.status == http.StatusOK {
		succeeded["GET /api/v1/approvals/{id}"] = true
	}
	call("GET", "/playbooks", "/playbooks", nil)
	ev, err := db.AppendAudit(t.Context(), store.AuditRecord{OrgID: org, Action: store.AuditToolCall, Surface: store.SurfaceMCP,
		Issuer: "https://issuer.test", Subject: "owner-1", Role: "owner", Scopes: []string{"kadu.admin"}, ClientID: "cli_1",
		ClientName: "Claude", Tool: "kadu_tasks_run", Route: "POST /api/v1/tasks/{id}/run", ResourceID: "tsk_1",
		ArgsDigest: "sha256:ab", Outcome: store.OutcomeFailed, Status: 402, Detail: "over the cap", RequestID: "req_1",
		TraceID: "4bf92f3577b34da6a3ce929d0e0e4736"})
	if err != nil {
		t.Fatalf("AppendAudit: %v", err)
	}
	call("GET", "/audit_events/{id}", "/audit_events/"+ev.ID, nil)

	for _, r := range routeclass.Routes() {
		if !succeeded[r.String()] {
			t.Errorf("%s: no successful answer was checked against the document", r)
		}
	}

	// Errors share one documented shape: do checks them too.
	e.do("", "GET", "/tasks", nil)                                                                                // 401
	e.do(e.token(user{org, "v", "viewer", []string{"kadu.read"}}), "POST", "/tasks", map[string]any{"name": "x"}) // 403
	e.do(own, "GET", "/tasks/tsk_00000000000000000000000000000000", nil)                                          // 404
	e.do(own, "PUT", "/tasks", nil)                                                                               // 405
	e.do(own, "POST", "/tasks", map[string]any{"name": ""})                                                       // 422
	e.do(own, "GET", "/tasks?limit=0", nil)                                                                       // 422
	e.do(own, "GET", "/nothing", nil)                                                                             // 404
}

// testDocumentServed: GET /api/v1/openapi.json answers the document to
// anyone, as JSON, with a request id.
func testDocumentServed(t *testing.T, db *store.DB) {
	e := newEnv(t, db, nil)
	res, err := e.srv.Client().Get(e.srv.URL + DocumentPath)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") ||
		!strings.HasPrefix(res.Header.Get("X-Request-Id"), "req_") {
		t.Errorf("status %d, Content-Type %q, X-Request-Id %q", res.StatusCode, res.Header.Get("Content-Type"), res.Header.Get("X-Request-Id"))
	}
	if !bytes.Equal(body, openapi.Document()) {
		t.Errorf("served document differs from openapi.Document()")
	}
	// Other methods stay behind the API's authentication.
	if r := e.do("", "POST", "/openapi.json", nil); r.status != http.StatusUnauthorized {
		t.Errorf("POST without a token: %d, want 401", r.status)
	}
}
