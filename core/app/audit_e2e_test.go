package app

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/kobana/kadu/core/store"
)

// testAuditTools reads the audit trail over MCP (docs/audit.md#reading-the-trail):
// kadu_audit_events_list and the kobana://kadu/audit_events/{id} template
// answer an admin the organisation's events, filtered and paged as the
// REST route does, and nothing of another organisation; a member has
// neither. The events are appended to the store directly, as the recording
// of tool calls and writes would.
func testAuditTools(t *testing.T, fx *toolsFixture) {
	const org, other = "org_tools_audit", "org_tools_audit_other"
	db := fx.srv.app.backend.db
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	seed := func(orgID string, recs ...store.AuditRecord) []store.AuditEvent {
		t.Helper()
		var out []store.AuditEvent
		for i, r := range recs {
			r.OrgID, r.OccurredAt = orgID, t0.Add(time.Duration(i)*time.Minute)
			e, err := db.AppendAudit(t.Context(), r)
			if err != nil {
				t.Fatalf("AppendAudit: %v", err)
			}
			out = append(out, e)
		}
		return out
	}
	mine := seed(org,
		store.AuditRecord{Action: store.AuditToolCall, Surface: store.SurfaceMCP, Subject: "user_member", Role: "member",
			ClientName: "Claude", Tool: "kadu_tasks_run", Route: "POST /api/v1/tasks/{id}/run", Outcome: store.OutcomeDeclined},
		store.AuditRecord{Action: store.AuditRESTWrite, Surface: store.SurfaceREST, Subject: "user_admin", Role: "admin",
			Route: "POST /api/v1/tasks", Outcome: store.OutcomeSucceeded, Status: 201},
		store.AuditRecord{Action: store.AuditApprovalApproved, Surface: store.SurfaceApproval, Subject: "user_admin",
			Outcome: store.OutcomeSucceeded},
	)
	theirs := seed(other, store.AuditRecord{Action: store.AuditRESTWrite, Surface: store.SurfaceREST, Subject: "user_admin",
		Route: "POST /api/v1/tasks", Outcome: store.OutcomeSucceeded})
	seeded := func(list map[string]any, events []store.AuditEvent) []string {
		var out []string
		for _, id := range ids(list) {
			if slices.ContainsFunc(events, func(e store.AuditEvent) bool { return e.ID == id }) {
				out = append(out, id)
			}
		}
		return out
	}

	admin := fx.as(t, TokenOptions{OrgID: org, Role: "admin", Scopes: []string{"kadu.admin"}})
	all := admin.ok("kadu_audit_events_list", map[string]any{"limit": 100})
	if got, want := seeded(all, mine), []string{mine[2].ID, mine[1].ID, mine[0].ID}; !slices.Equal(got, want) {
		t.Errorf("kadu_audit_events_list = %v, want %v (newest first)", got, want)
	}
	if got := seeded(all, theirs); len(got) != 0 {
		t.Errorf("kadu_audit_events_list shows another organisation's events %v", got)
	}
	declined := admin.ok("kadu_audit_events_list", map[string]any{"tool": "kadu_tasks_run", "outcome": "declined",
		"since": "2026-03-01T09:00:00-03:00", "until": "2026-03-01T12:05:00Z"})
	if got := ids(declined); !slices.Equal(got, []string{mine[0].ID}) {
		t.Errorf("kadu_audit_events_list of declined kadu_tasks_run = %v, want [%s]", got, mine[0].ID)
	} else if e := declined["data"].([]any)[0].(map[string]any); e["subject"] != "user_member" || e["client_name"] != "Claude" ||
		e["seq"] != float64(mine[0].Seq) || e["hash"] != mine[0].Hash {
		t.Errorf("the declined event = %v", e)
	}
	byRoute := admin.ok("kadu_audit_events_list", map[string]any{"route": "POST /api/v1/tasks", "subject": "user_admin"})
	if got := ids(byRoute); !slices.Equal(got, []string{mine[1].ID}) {
		t.Errorf("kadu_audit_events_list by route and subject = %v, want [%s]", got, mine[1].ID)
	}
	// Pages of one walk the three events.
	var walked []string
	args := map[string]any{"limit": 1, "action": store.AuditApprovalApproved}
	for page := 0; page < 3; page++ {
		res := admin.ok("kadu_audit_events_list", args)
		walked = append(walked, ids(res)...)
		cur, _ := res["meta"].(map[string]any)["next_cursor"].(string)
		if cur == "" {
			break
		}
		args = map[string]any{"limit": 1, "action": store.AuditApprovalApproved, "cursor": cur}
	}
	if !slices.Equal(walked, []string{mine[2].ID}) {
		t.Errorf("paging approval.approved events gave %v, want [%s]", walked, mine[2].ID)
	}
	if p := admin.fails("kadu_audit_events_list", map[string]any{"until": "tomorrow"}, "validation_error"); p["param"] != "until" {
		t.Errorf("a bad until names %v", p["param"])
	}

	uri := "kobana://kadu/audit_events/" + mine[1].ID
	doc := readJSON(admin, uri)
	if doc["id"] != mine[1].ID || doc["seq"] != float64(mine[1].Seq) || doc["prev_hash"] != mine[0].Hash ||
		doc["hash"] != mine[1].Hash || doc["route"] != "POST /api/v1/tasks" || doc["status"] != 201.0 {
		t.Errorf("%s = %v", uri, doc)
	}
	foreign := "kobana://kadu/audit_events/" + theirs[0].ID
	wantNotFound(t, rpcError(admin, "resources/read", foreign, fmt.Sprintf(`{"uri":%q}`, foreign)), foreign)

	// A member has neither the tool nor the document.
	member := fx.as(t, TokenOptions{OrgID: org, Role: "member", Scopes: []string{"kadu.read", "kadu.run"}})
	status, res := member.rpc("tools/call", "kadu_audit_events_list", `{"name":"kadu_audit_events_list","arguments":{}}`)
	if e, _ := res["error"].(map[string]any); status != 200 || e["code"] != float64(-32602) {
		t.Errorf("a member calling kadu_audit_events_list: HTTP %d %v, want -32602 Unknown tool", status, res)
	}
	rpcError(member, "resources/read", uri, fmt.Sprintf(`{"uri":%q}`, uri))
}
