package audit

import (
	"context"
	"slices"

	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/store"
)

// The confirmation path of a destructive call (docs/audit.md#confirmations-and-approvals):
// each step is recorded with the call it confirms — its tool, the digest
// of its arguments, the client that made it — and the confirmation's id
// (the requestState's nonce, or the approval's apr_ id) as ResourceID, so
// that an auditor can follow one call from its request to its decision.

// Confirmation returns a record of action (store.AuditConfirmAccepted or
// AuditConfirmDeclined) on the in-chat confirmation nonce of p's call of
// tool with args. clientName is what the client reported (clientInfo.name),
// used when the request's Call does not carry one.
func Confirmation(ctx context.Context, p *auth.Principal, tool string, args []byte, clientName, nonce, action, outcome string) store.AuditRecord {
	rec := NewRecord(ctx, p, action)
	if rec.Surface == store.SurfaceSystem {
		rec.Surface = store.SurfaceMCP // an in-chat answer only ever comes through MCP
	}
	if rec.ClientName == "" {
		rec.ClientName = clientName
	}
	rec.Tool = tool
	rec.ResourceID = nonce
	rec.ArgsDigest = ArgsDigest(args)
	rec.Outcome = outcome
	return rec
}

// Approval returns a record of action (store.AuditApproval…) on approval
// a, with outcome. The principal is the requester the approval stores:
// only they can decide it (the approval page checks issuer and subject),
// and their role and scopes are what the call runs with. The client is the
// one that made the call, not the approval page's.
func Approval(ctx context.Context, a store.Approval, action, outcome string) store.AuditRecord {
	rec := NewRecord(ctx, principalOf(a), action)
	rec.OrgID = a.OrgID
	if a.ClientID != "" {
		rec.ClientID = a.ClientID
	}
	if a.ClientName != "" {
		rec.ClientName = a.ClientName
	}
	rec.Tool = a.Tool
	rec.ResourceID = a.ID
	rec.ArgsDigest = ArgsDigest(a.Arguments)
	rec.Outcome = outcome
	return rec
}

func principalOf(a store.Approval) *auth.Principal {
	sp := a.Principal
	return &auth.Principal{Issuer: sp.Issuer, Subject: sp.Subject, OrgID: a.OrgID, Role: auth.Role(sp.Role),
		Scopes: slices.Clone(sp.Scopes), ClientID: sp.ClientID}
}

// SignIn returns a record of a sign-in to the approval page. p is who the
// sign-in proved (nil when it failed before proving anyone: the record
// then belongs to the installation's chain, store.InstallationChain),
// approvalID the approval it was for ("" when unknown), detail why it
// failed.
func SignIn(ctx context.Context, p *auth.Principal, approvalID, outcome, detail string) store.AuditRecord {
	rec := NewRecord(ctx, p, store.AuditApprovalSignIn)
	rec.Surface = store.SurfaceApproval
	if p == nil {
		rec.OrgID = store.InstallationChain
	}
	rec.ResourceID = approvalID
	rec.Outcome = outcome
	rec.Detail = detail
	return rec
}
