package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/kobana/kadu/core/audit"
	"github.com/kobana/kadu/core/config"
	"github.com/kobana/kadu/core/store"
)

// TestAuditToolCalls calls tools over MCP on the product as shipped (the
// first-party bundles, into /api/v1 in-process) and reads the audit trail
// back (docs/audit.md#what-is-recorded): a tool's route write is recorded as
// an MCP call of that tool by that client, and a confirmed destructive call
// is recorded as a tool call too. On SQLite and PostgreSQL.
func TestAuditToolCalls(t *testing.T) {
	for _, driver := range []string{config.DriverSQLite, config.DriverPostgres} {
		t.Run(driver, func(t *testing.T) {
			t.Parallel()
			srv := startToolsProduct(t, driver)
			org := "org_audit_tools_" + driver
			token, err := MintDevToken(srv.cfg, TokenOptions{OrgID: org, Role: "admin", Subject: "ana", ClientID: "client-desktop"})
			if err != nil {
				t.Fatal(err)
			}
			db := srv.app.backend.db
			const client = "Claude Desktop"

			// A write tool, era 2026: its route write carries the MCP call.
			create := `{"name":"Audited","playbook":{"version":1,"steps":[{"id":"mes","type":"ask","params":{"prompt":"Qual mês?"}}]}}`
			reqID, res := auditMCP(t, srv, token, era2026(client, `{}`), "kadu_tasks_create",
				`{"name":"kadu_tasks_create","arguments":`+create+`}`)
			task := toolJSON(t, res)
			id, _ := task["id"].(string)
			if !strings.HasPrefix(id, "tsk_") {
				t.Fatalf("kadu_tasks_create: %v", res)
			}
			writes := auditFind(t, db, org, func(ev store.AuditEvent) bool { return ev.Route == "POST /api/v1/tasks" })
			if len(writes) != 1 {
				t.Fatalf("%d events of POST /api/v1/tasks, want 1: %+v", len(writes), writes)
			}
			w := writes[0]
			if w.Action != store.AuditRESTWrite || w.Surface != store.SurfaceMCP || w.Tool != "kadu_tasks_create" ||
				w.ClientName != client || w.ClientID != "client-desktop" || w.Subject != "ana" || w.Role != "admin" ||
				w.RequestID != reqID || w.Outcome != store.OutcomeSucceeded || w.Status != http.StatusCreated ||
				w.ArgsDigest != audit.ArgsDigest(json.RawMessage(create)) {
				t.Errorf("route write of the tool call: %+v\nwant surface mcp, tool kadu_tasks_create, client %q, request %s, the arguments' digest", w, client, reqID)
			}
			if slices.ContainsFunc(auditFind(t, db, org, nil), func(ev store.AuditEvent) bool { return ev.Action == store.AuditToolCall }) {
				t.Errorf("a write tool that is not destructive left a tool.call event")
			}

			// A destructive tool, confirmed in the chat: the route write and
			// the tool call, both of the confirmed request.
			caps := `{"elicitation":{}}`
			args := fmt.Sprintf(`{"id":%q}`, id)
			_, res = auditMCP(t, srv, token, era2026(client, caps), "kadu_tasks_delete",
				`{"name":"kadu_tasks_delete","arguments":`+args+`}`)
			result, _ := res["result"].(map[string]any)
			state, _ := result["requestState"].(string)
			if result["resultType"] != "input_required" || state == "" {
				t.Fatalf("kadu_tasks_delete did not ask to confirm: %v", res)
			}
			reqID, res = auditMCP(t, srv, token, era2026(client, caps), "kadu_tasks_delete",
				fmt.Sprintf(`{"name":"kadu_tasks_delete","arguments":%s,"inputResponses":{"confirm":{"action":"accept","content":{"confirm":true}}},"requestState":%q}`, args, state))
			toolJSON(t, res)
			byReq := auditFind(t, db, org, func(ev store.AuditEvent) bool { return ev.RequestID == reqID })
			var route, call *store.AuditEvent
			for i := range byReq {
				switch byReq[i].Action {
				case store.AuditRESTWrite:
					route = &byReq[i]
				case store.AuditToolCall:
					call = &byReq[i]
				}
			}
			if route == nil || call == nil {
				t.Fatalf("events of the confirmed delete: %+v; want a rest.write and a tool.call", byReq)
			}
			if route.Route != "DELETE /api/v1/tasks/{id}" || route.ResourceID != id || route.Surface != store.SurfaceMCP ||
				route.Tool != "kadu_tasks_delete" || route.ClientName != client || route.Outcome != store.OutcomeSucceeded {
				t.Errorf("route write of the delete: %+v", *route)
			}
			if call.Tool != "kadu_tasks_delete" || call.Surface != store.SurfaceMCP || call.ClientName != client ||
				call.ClientID != "client-desktop" || call.Outcome != store.OutcomeSucceeded || call.Route != "" ||
				call.ArgsDigest != audit.ArgsDigest(json.RawMessage(args)) {
				t.Errorf("tool call event: %+v", *call)
			}

			// A requestState Kadu never issued: refused, nothing ran and
			// nothing was confirmed, so no tool.call is recorded.
			calls := func() int {
				return len(auditFind(t, db, org, func(ev store.AuditEvent) bool { return ev.Action == store.AuditToolCall }))
			}
			before := calls()
			// With arguments the schema refuses too: the state is what is
			// refused, not answered as the tool's error.
			for _, forged := range []string{args, `{"id":5}`} {
				reqID, res = auditMCP(t, srv, token, era2026(client, caps), "kadu_tasks_delete",
					fmt.Sprintf(`{"name":"kadu_tasks_delete","arguments":%s,"requestState":"x"}`, forged))
				if e, _ := res["error"].(map[string]any); e == nil || e["message"] != "Invalid or expired requestState" {
					t.Errorf("forged requestState, arguments %s: %v; want -32602 Invalid or expired requestState", forged, res)
				}
				if n := calls(); n != before {
					t.Errorf("a forged requestState (arguments %s) left %d tool.call events (request %s); want none", forged, n-before, reqID)
				}
			}

			// Era 2025: the client's name was said once, at initialize, which
			// a stateless server does not keep; the rest is recorded.
			reqID, res = auditMCP(t, srv, token, nil, "", `{"name":"kadu_tasks_create","arguments":`+create+`}`)
			toolJSON(t, res)
			old := auditFind(t, db, org, func(ev store.AuditEvent) bool { return ev.RequestID == reqID })
			if len(old) != 1 || old[0].Surface != store.SurfaceMCP || old[0].Tool != "kadu_tasks_create" || old[0].ClientName != "" {
				t.Errorf("era-2025 tool call events: %+v; want one, surface mcp, tool kadu_tasks_create, no client name", old)
			}
		})
	}
}

// era2026 is the _meta of an era-2026 request from a client named name
// that declared caps.
func era2026(name, caps string) map[string]json.RawMessage {
	info, _ := json.Marshal(map[string]string{"name": name, "version": "1.0"})
	return map[string]json.RawMessage{
		"io.modelcontextprotocol/protocolVersion":    json.RawMessage(`"2026-07-28"`),
		"io.modelcontextprotocol/clientCapabilities": json.RawMessage(caps),
		"io.modelcontextprotocol/clientInfo":         info,
	}
}

// auditMCP sends tools/call with params; meta nil sends an era-2025
// request. It returns the X-Request-Id and the JSON-RPC response.
func auditMCP(t *testing.T, srv *testServer, token string, meta map[string]json.RawMessage, name, params string) (string, map[string]any) {
	t.Helper()
	var p map[string]json.RawMessage
	if err := json.Unmarshal([]byte(params), &p); err != nil {
		t.Fatal(err)
	}
	if meta != nil {
		m, _ := json.Marshal(meta)
		p["_meta"] = m
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": p})
	req, _ := http.NewRequest(http.MethodPost, srv.cfg.MCPURL(), strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	if meta != nil {
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", name)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("tools/call: %d %s", res.StatusCode, raw)
	}
	return res.Header.Get("X-Request-Id"), out
}

// toolJSON returns a successful tool result's text as a JSON object.
func toolJSON(t *testing.T, res map[string]any) map[string]any {
	t.Helper()
	result, _ := res["result"].(map[string]any)
	content, _ := result["content"].([]any)
	if result == nil || result["isError"] == true || len(content) != 1 {
		t.Fatalf("not a successful tool result: %v", res)
	}
	var m map[string]any
	text, _ := content[0].(map[string]any)["text"].(string)
	if err := json.Unmarshal([]byte(text), &m); err != nil {
		t.Fatalf("tool text is not JSON: %s", text)
	}
	return m
}

// auditFind returns org's events that keep holds for (all when nil),
// newest first.
func auditFind(t *testing.T, db *store.DB, org string, keep func(store.AuditEvent) bool) []store.AuditEvent {
	t.Helper()
	var out []store.AuditEvent
	var lp store.ListParams
	for {
		page, err := db.ListAudit(context.Background(), org, store.AuditFilter{}, lp)
		if err != nil {
			t.Fatalf("ListAudit: %v", err)
		}
		for _, ev := range page.Items {
			if keep == nil || keep(ev) {
				out = append(out, ev)
			}
		}
		if !page.More || len(page.Items) == 0 {
			return out
		}
		lp.Before = page.Items[len(page.Items)-1].ID
	}
}

// TestAuditEventCarriesTraceID: with tracing on and the caller's trace
// trusted, the route write a tool call makes is recorded with that trace's
// id, so an auditor can go from the event to the request's spans.
func TestAuditEventCarriesTraceID(t *testing.T) {
	srv, _ := startTracedProduct(t, true, nil)
	const org = "org_audit_traced"
	token, err := MintDevToken(srv.cfg, TokenOptions{OrgID: org, Role: "admin"})
	if err != nil {
		t.Fatal(err)
	}
	tracedCall(t, srv, token, traceparent, "kadu_tasks_create", map[string]any{"name": "Traced",
		"playbook": map[string]any{"version": 1, "steps": []any{map[string]any{"id": "mes", "type": "ask", "params": map[string]any{"prompt": "Qual mês?"}}}}})
	evs := auditFind(t, srv.app.backend.db, org, func(ev store.AuditEvent) bool { return ev.Route == "POST /api/v1/tasks" })
	if len(evs) != 1 || evs[0].TraceID != callerTrace {
		t.Fatalf("events %+v, want one with trace id %s", evs, callerTrace)
	}
}
