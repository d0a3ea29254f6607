package audit

import (
	"context"
	"encoding/json"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/store"
)

// TestConfirmationRecords: the records of the confirmation path carry the
// requester, the client that made the call, the tool, the digest of its
// arguments, the confirmation's id, the surface, the request's id and the
// trace.
func TestConfirmationRecords(t *testing.T) {
	traceID := trace.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	ctx := trace.ContextWithSpanContext(context.Background(),
		trace.NewSpanContext(trace.SpanContextConfig{TraceID: traceID, SpanID: trace.SpanID{1}}))
	args := json.RawMessage(`{"id":"tsk_1","api_key":"s3cret"}`)
	alice := &auth.Principal{Issuer: "https://issuer.test", Subject: "alice", OrgID: "org_a", Role: auth.RoleMember,
		Scopes: []string{auth.ScopeRun}, ClientID: "client-a"}
	approval := store.Approval{ID: "apr_1", OrgID: "org_a", Tool: "kadu_tasks_run", Arguments: args,
		Principal: store.ApprovalPrincipal{Issuer: alice.Issuer, Subject: "alice", OrgID: "org_a", Role: "member",
			Scopes: []string{auth.ScopeRun}, ClientID: "client-a"}, ClientID: "client-a", ClientName: "Claude"}
	onPage := WithCall(ctx, Call{Surface: store.SurfaceApproval, RequestID: "req_page"})
	viaMCP := WithCall(ctx, Call{Surface: store.SurfaceMCP, ClientName: "Claude", RequestID: "req_mcp"})

	tests := []struct {
		name string
		rec  store.AuditRecord
		want store.AuditRecord
	}{
		{"in-chat accepted, no Call in ctx", Confirmation(ctx, alice, "kadu_tasks_run", args, "Claude", "n1", store.AuditConfirmAccepted, store.OutcomeSucceeded),
			store.AuditRecord{OrgID: "org_a", Action: store.AuditConfirmAccepted, Surface: store.SurfaceMCP, Subject: "alice",
				ClientID: "client-a", ClientName: "Claude", Tool: "kadu_tasks_run", ResourceID: "n1", Outcome: store.OutcomeSucceeded}},
		{"in-chat declined through MCP", Confirmation(viaMCP, alice, "kadu_tasks_run", args, "", "n2", store.AuditConfirmDeclined, store.OutcomeDeclined),
			store.AuditRecord{OrgID: "org_a", Action: store.AuditConfirmDeclined, Surface: store.SurfaceMCP, Subject: "alice",
				ClientID: "client-a", ClientName: "Claude", Tool: "kadu_tasks_run", ResourceID: "n2", Outcome: store.OutcomeDeclined, RequestID: "req_mcp"}},
		{"approval decided on the page", Approval(onPage, approval, store.AuditApprovalApproved, store.OutcomeSucceeded),
			store.AuditRecord{OrgID: "org_a", Action: store.AuditApprovalApproved, Surface: store.SurfaceApproval, Subject: "alice",
				ClientID: "client-a", ClientName: "Claude", Tool: "kadu_tasks_run", ResourceID: "apr_1", Outcome: store.OutcomeSucceeded, RequestID: "req_page"}},
		{"approval expired by the system", Approval(ctx, approval, store.AuditApprovalExpired, store.OutcomeDeclined),
			store.AuditRecord{OrgID: "org_a", Action: store.AuditApprovalExpired, Surface: store.SurfaceSystem, Subject: "alice",
				ClientID: "client-a", ClientName: "Claude", Tool: "kadu_tasks_run", ResourceID: "apr_1", Outcome: store.OutcomeDeclined}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, want := tt.rec, tt.want
			if got.OrgID != want.OrgID || got.Action != want.Action || got.Surface != want.Surface || got.Subject != want.Subject ||
				got.Issuer != alice.Issuer || got.Role != "member" || len(got.Scopes) != 1 || got.ClientID != want.ClientID ||
				got.ClientName != want.ClientName || got.Tool != want.Tool || got.ResourceID != want.ResourceID ||
				got.Outcome != want.Outcome || got.RequestID != want.RequestID || got.TraceID != traceID.String() ||
				got.ArgsDigest != ArgsDigest(json.RawMessage(`{"id":"tsk_1"}`)) {
				t.Errorf("got  %+v\nwant %+v (trace %s, digest without the secret)", got, want, traceID)
			}
		})
	}
}

// TestSignInRecords: a failed sign-in belongs to the installation's chain
// and names no one; a successful one, to the organisation it proved.
func TestSignInRecords(t *testing.T) {
	ctx := WithCall(context.Background(), Call{Surface: store.SurfaceApproval, RequestID: "req_1"})
	failed := SignIn(ctx, nil, "apr_1", store.OutcomeFailed, "the access token did not verify")
	if failed.OrgID != store.InstallationChain || failed.Subject != "" || failed.Surface != store.SurfaceApproval ||
		failed.ResourceID != "apr_1" || failed.RequestID != "req_1" || failed.Action != store.AuditApprovalSignIn {
		t.Errorf("failed sign-in %+v", failed)
	}
	p := &auth.Principal{Issuer: "https://issuer.test", Subject: "alice", OrgID: "org_a", Role: auth.RoleMember}
	ok := SignIn(context.Background(), p, "apr_1", store.OutcomeSucceeded, "")
	if ok.OrgID != "org_a" || ok.Subject != "alice" || ok.Surface != store.SurfaceApproval || ok.Outcome != store.OutcomeSucceeded {
		t.Errorf("sign-in %+v", ok)
	}
}
