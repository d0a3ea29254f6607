package api

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/store"
)

func TestAuditEvents(t *testing.T) {
	forEachBackend(t, map[string]func(*testing.T, *store.DB){
		"Access":     testAuditAccess,
		"Event":      testAuditEvent,
		"Filters":    testAuditFilters,
		"Pagination": testAuditPagination,
		"BadFilters": testAuditBadFilters,
	})
}

// auditT0 is when the seeded events start: one a minute from it.
var auditT0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// seedAudit appends to org's chain, one a minute from auditT0, the events
// recs describe (OrgID and OccurredAt are set here), and returns them.
func seedAudit(t *testing.T, db *store.DB, org string, recs ...store.AuditRecord) []store.AuditEvent {
	t.Helper()
	var out []store.AuditEvent
	for i, r := range recs {
		r.OrgID = org
		r.OccurredAt = auditT0.Add(time.Duration(i) * time.Minute)
		if r.Surface == "" {
			r.Surface = store.SurfaceREST
		}
		if r.Outcome == "" {
			r.Outcome = store.OutcomeSucceeded
		}
		e, err := db.AppendAudit(t.Context(), r)
		if err != nil {
			t.Fatalf("AppendAudit: %v", err)
		}
		out = append(out, e)
	}
	return out
}

// auditIDs are the ids of a list answer's events that are in seeded, in
// the answer's order: events other features record meanwhile (the
// provisioning of the organisation, say) do not disturb the tests.
func auditIDs(t *testing.T, body map[string]any, seeded []store.AuditEvent) []string {
	t.Helper()
	var out []string
	for _, raw := range body["data"].([]any) {
		id := raw.(map[string]any)["id"].(string)
		if slices.ContainsFunc(seeded, func(e store.AuditEvent) bool { return e.ID == id }) {
			out = append(out, id)
		}
	}
	return out
}

// newest returns the ids of events idx of seeded, newest first.
func newest(seeded []store.AuditEvent, idx ...int) []string {
	out := make([]string, 0, len(idx))
	for _, i := range slices.Backward(idx) {
		out = append(out, seeded[i].ID)
	}
	return out
}

// testAuditAccess: admins and owners with kadu.admin read the trail;
// members and viewers get 403 forbidden_role, an owner without kadu.admin
// the step-up challenge; another organisation's events are invisible and
// their ids 404.
func testAuditAccess(t *testing.T, db *store.DB) {
	e := newEnv(t, db, nil)
	org, other := newOrg(), newOrg()
	mine := seedAudit(t, db, org, store.AuditRecord{Action: store.AuditRESTWrite, Subject: "admin-1", Route: "POST /api/v1/tasks"})
	theirs := seedAudit(t, db, other, store.AuditRecord{Action: store.AuditRESTWrite, Subject: "admin-9", Route: "POST /api/v1/tasks"})

	for _, u := range []user{admin(org), owner(org)} {
		tok := e.token(u)
		if got := auditIDs(t, must(t, e.do(tok, "GET", "/audit_events", nil), http.StatusOK), mine); !slices.Equal(got, newest(mine, 0)) {
			t.Errorf("%s lists %v, want %v", u.role, got, newest(mine, 0))
		}
		must(t, e.do(tok, "GET", "/audit_events/"+mine[0].ID, nil), http.StatusOK)
	}
	for _, u := range []user{member(org), viewer(org), {org, "member-2", auth.RoleMember, []string{auth.ScopeAdmin}}} {
		tok := e.token(u)
		wantProblem(t, e.do(tok, "GET", "/audit_events", nil), http.StatusForbidden, "forbidden_role", "")
		wantProblem(t, e.do(tok, "GET", "/audit_events/"+mine[0].ID, nil), http.StatusForbidden, "forbidden_role", "")
	}
	lacking := e.token(user{org, "owner-2", auth.RoleOwner, []string{auth.ScopeWrite, auth.ScopeRun}})
	for _, path := range []string{"/audit_events", "/audit_events/" + mine[0].ID} {
		r := e.do(lacking, "GET", path, nil)
		wantProblem(t, r, http.StatusForbidden, "insufficient_scope", "")
		if www := r.header.Get("WWW-Authenticate"); !strings.Contains(www, auth.ScopeAdmin) {
			t.Errorf("GET %s without kadu.admin: WWW-Authenticate = %q", path, www)
		}
	}

	tok := e.token(admin(org))
	list := must(t, e.do(tok, "GET", "/audit_events?limit=100", nil), http.StatusOK)
	if got := auditIDs(t, list, theirs); len(got) != 0 {
		t.Errorf("another organisation's events are listed: %v", got)
	}
	for _, raw := range list["data"].([]any) {
		if o := raw.(map[string]any)["org_id"]; o != org {
			t.Errorf("an event of org %v is listed to org %s", o, org)
		}
	}
	wantProblem(t, e.do(tok, "GET", "/audit_events/"+theirs[0].ID, nil), http.StatusNotFound, "not_found", "")
	wantProblem(t, e.do(tok, "GET", "/audit_events/aud_nope", nil), http.StatusNotFound, "not_found", "")
	wantProblem(t, e.do(tok, "GET", "/audit_events/"+store.NewID(store.PrefixAudit), nil), http.StatusNotFound, "not_found", "")
	// The other organisation's admin sees its own.
	if got := auditIDs(t, must(t, e.do(e.token(admin(other)), "GET", "/audit_events", nil), http.StatusOK), theirs); !slices.Equal(got, newest(theirs, 0)) {
		t.Errorf("the other organisation lists %v, want %v", got, newest(theirs, 0))
	}
}

// testAuditEvent: an event on the wire carries every member of the stored
// event, absent ones as null, and the chain links: each prev_hash is the
// hash of the event before.
func testAuditEvent(t *testing.T, db *store.DB) {
	e := newEnv(t, db, nil)
	org := newOrg()
	tok := e.token(admin(org))
	seeded := seedAudit(t, db, org,
		store.AuditRecord{Action: store.AuditToolCall, Surface: store.SurfaceMCP, Issuer: "https://issuer.test", Subject: "member-1",
			Role: "member", Scopes: []string{"kadu.read", "kadu.run"}, ClientID: "cli_1", ClientName: "Claude", Tool: "kadu_tasks_run",
			Route: "POST /api/v1/tasks/{id}/run", ResourceID: "tsk_1", ArgsDigest: "sha256:ab", Outcome: store.OutcomeDeclined,
			Status: 0, Detail: "declined in chat", RequestID: "req_1", TraceID: "4bf92f3577b34da6a3ce929d0e0e4736"},
		store.AuditRecord{Action: store.AuditApprovalExpired, Surface: store.SurfaceSystem, Outcome: store.OutcomeDeclined},
	)
	first := must(t, e.do(tok, "GET", "/audit_events/"+seeded[0].ID, nil), http.StatusOK)
	want := map[string]any{
		"id": seeded[0].ID, "org_id": org, "seq": float64(seeded[0].Seq), "occurred_at": "2026-03-01T12:00:00.000000Z",
		"action": "tool.call", "surface": "mcp", "issuer": "https://issuer.test", "subject": "member-1", "role": "member",
		"scopes": []any{"kadu.read", "kadu.run"}, "client_id": "cli_1", "client_name": "Claude", "tool": "kadu_tasks_run",
		"route": "POST /api/v1/tasks/{id}/run", "resource_id": "tsk_1", "args_digest": "sha256:ab", "outcome": "declined",
		"status": nil, "detail": "declined in chat", "request_id": "req_1", "trace_id": "4bf92f3577b34da6a3ce929d0e0e4736",
		"prev_hash": nilIfEmpty(seeded[0].PrevHash), "hash": seeded[0].Hash,
	}
	for k, v := range want {
		if got, ok := first[k]; !ok || !jsonEqual(got, v) {
			t.Errorf("%s = %v, want %v", k, got, v)
		}
	}
	if len(first) != len(want) {
		t.Errorf("event has members %v, want %d", keys(first), len(want))
	}
	second := must(t, e.do(tok, "GET", "/audit_events/"+seeded[1].ID, nil), http.StatusOK)
	for _, k := range []string{"issuer", "subject", "role", "client_id", "client_name", "tool", "route", "resource_id",
		"args_digest", "status", "detail", "request_id", "trace_id"} {
		if second[k] != nil {
			t.Errorf("a system event's %s = %v, want null", k, second[k])
		}
	}
	if s, ok := second["scopes"].([]any); !ok || len(s) != 0 {
		t.Errorf("a system event's scopes = %v, want []", second["scopes"])
	}
	if second["seq"] != first["seq"].(float64)+1 || second["prev_hash"] != first["hash"] {
		t.Errorf("second event seq %v prev_hash %v; want %v and the first's hash %v", second["seq"], second["prev_hash"], first["seq"].(float64)+1, first["hash"])
	}
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// jsonEqual compares decoded JSON values.
func jsonEqual(a, b any) bool {
	as, aok := a.([]any)
	bs, bok := b.([]any)
	if aok || bok {
		return aok && bok && slices.Equal(as, bs)
	}
	return a == b
}

// testAuditFilters: each filter narrows the list to the events it names,
// and filters combine.
func testAuditFilters(t *testing.T, db *store.DB) {
	e := newEnv(t, db, nil)
	org := newOrg()
	tok := e.token(owner(org))
	const run, create = "POST /api/v1/tasks/{id}/run", "POST /api/v1/tasks"
	seeded := seedAudit(t, db, org,
		/* 0 */ store.AuditRecord{Action: store.AuditRESTWrite, Subject: "ana", Route: create},
		/* 1 */ store.AuditRecord{Action: store.AuditToolCall, Surface: store.SurfaceMCP, Subject: "ana", Tool: "kadu_tasks_run", Route: run},
		/* 2 */ store.AuditRecord{Action: store.AuditConfirmDeclined, Surface: store.SurfaceMCP, Subject: "bia", Tool: "kadu_tasks_run", Route: run, Outcome: store.OutcomeDeclined},
		/* 3 */ store.AuditRecord{Action: store.AuditRESTWrite, Subject: "bia", Route: create, Outcome: store.OutcomeFailed, Status: 402},
		/* 4 */ store.AuditRecord{Action: store.AuditApprovalSignIn, Surface: store.SurfaceApproval, Subject: "ana"},
	)
	at := func(i int) string {
		return url.QueryEscape(auditT0.Add(time.Duration(i) * time.Minute).Format(time.RFC3339))
	}
	tests := []struct {
		query string
		want  []int
	}{
		{"", []int{0, 1, 2, 3, 4}},
		{"since=" + at(3), []int{3, 4}},
		{"until=" + at(2), []int{0, 1}},
		{"since=" + at(1) + "&until=" + at(3), []int{1, 2}},
		{"since=" + url.QueryEscape("2026-03-01T09:02:00-03:00"), []int{2, 3, 4}}, // any offset
		{"subject=bia", []int{2, 3}},
		{"subject=nobody", nil},
		{"tool=kadu_tasks_run", []int{1, 2}},
		{"route=" + url.QueryEscape(create), []int{0, 3}},
		{"route=" + url.QueryEscape(run), []int{1, 2}},
		{"action=rest.write", []int{0, 3}},
		{"action=approval_page.sign_in", []int{4}},
		{"outcome=succeeded", []int{0, 1, 4}},
		{"outcome=failed", []int{3}},
		{"outcome=declined", []int{2}},
		{"subject=ana&tool=kadu_tasks_run", []int{1}},
		{"subject=bia&outcome=failed&since=" + at(3), []int{3}},
	}
	for _, tt := range tests {
		got := auditIDs(t, must(t, e.do(tok, "GET", "/audit_events?limit=100&"+tt.query, nil), http.StatusOK), seeded)
		if want := newest(seeded, tt.want...); !slices.Equal(got, want) {
			t.Errorf("GET /audit_events?%s = %v, want %v", tt.query, got, want)
		}
	}
}

// testAuditPagination: pages of limit walk the whole trail once, newest
// first, and a cursor belongs to its filters.
func testAuditPagination(t *testing.T, db *store.DB) {
	e := newEnv(t, db, nil)
	org := newOrg()
	tok := e.token(admin(org))
	recs := make([]store.AuditRecord, 7)
	for i := range recs {
		recs[i] = store.AuditRecord{Action: store.AuditRESTWrite, Subject: "ana", Route: "POST /api/v1/tasks"}
	}
	seeded := seedAudit(t, db, org, recs...)
	var got []string
	query := "/audit_events?limit=3&subject=ana"
	for pages := 0; ; pages++ {
		if pages > 3 {
			t.Fatalf("more than 4 pages of 3 for 7 events: %v", got)
		}
		body := must(t, e.do(tok, "GET", query, nil), http.StatusOK)
		meta := body["meta"].(map[string]any)
		if n := len(body["data"].([]any)); n > 3 || meta["limit"] != 3.0 {
			t.Fatalf("a page of limit 3 has %d events, meta %v", n, meta)
		}
		got = append(got, auditIDs(t, body, seeded)...)
		cur, _ := meta["next_cursor"].(string)
		if cur == "" {
			break
		}
		if pages == 0 {
			wantProblem(t, e.do(tok, "GET", "/audit_events?limit=3&subject=bia&cursor="+url.QueryEscape(cur), nil),
				http.StatusBadRequest, "invalid_cursor", "cursor")
		}
		query = "/audit_events?limit=3&subject=ana&cursor=" + url.QueryEscape(cur)
	}
	if want := newest(seeded, 0, 1, 2, 3, 4, 5, 6); !slices.Equal(got, want) {
		t.Errorf("walking the pages gave %v, want %v", got, want)
	}
}

// testAuditBadFilters: a filter that cannot be right is 422
// validation_error naming it; a forged cursor is 400.
func testAuditBadFilters(t *testing.T, db *store.DB) {
	e := newEnv(t, db, nil)
	org := newOrg()
	tok := e.token(admin(org))
	tests := map[string]string{
		"since=yesterday":            "since",
		"until=2026-13-01T00:00:00Z": "until",
		"since=2026-03-02T00:00:00Z&until=2026-03-01T00:00:00Z": "until",
		"outcome=maybe":     "outcome",
		"outcome=SUCCEEDED": "outcome",
		"route=tasks":       "route",
		"route=" + url.QueryEscape("post /api/v1/tasks"): "route",
		"subject=" + strings.Repeat("x", 256):            "subject",
		"tool=" + url.QueryEscape("a\nb"):                "tool",
		"action=" + strings.Repeat("a", 201):             "action",
		"limit=0":                                        "limit",
		"status=failed":                                  "status",
	}
	for q, param := range tests {
		wantProblem(t, e.do(tok, "GET", "/audit_events?"+q, nil), http.StatusUnprocessableEntity, "validation_error", param)
	}
	wantProblem(t, e.do(tok, "GET", "/audit_events?cursor=forged", nil), http.StatusBadRequest, "invalid_cursor", "cursor")
}

// FuzzAuditFilter: no query string makes the filter parser panic, and
// whatever it accepts is within the limits it promises.
func FuzzAuditFilter(f *testing.F) {
	for _, s := range []string{"", "since=2026-03-01T00:00:00Z", "outcome=failed&route=POST+%2Fapi%2Fv1%2Ftasks",
		"until=x", "subject=%00", "route=%20"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		flt, err := auditFilter(q)
		if err != nil {
			return
		}
		if len(flt.Subject) > maxAuditSubjectLen || len(flt.Tool) > maxAuditNameLen || len(flt.Route) > maxAuditNameLen ||
			len(flt.Action) > maxAuditNameLen {
			t.Errorf("accepted an overlong filter: %+v", flt)
		}
		if flt.Outcome != "" && !slices.Contains(auditOutcomes, flt.Outcome) {
			t.Errorf("accepted outcome %q", flt.Outcome)
		}
		if !flt.Since.IsZero() && !flt.Until.IsZero() && !flt.Since.Before(flt.Until) {
			t.Errorf("accepted since %v not before until %v", flt.Since, flt.Until)
		}
	})
}
