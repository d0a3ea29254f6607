package app

import (
	"context"
	"errors"
	"log/slog"

	"github.com/kobana/kadu/core/audit"
	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/mcp"
	"github.com/kobana/kadu/core/plugin"
	"github.com/kobana/kadu/core/store"
)

// auditedTools is the Catalog the Confirmer holds back calls for: a
// destructive tool's call reaches it only once its person confirmed it (in
// the chat or on the approval page), and it records that call in the audit
// trail (store.AuditToolCall, docs/audit.md#what-is-recorded) — next to the
// rest.write events of the routes the tool dispatches, which core/api
// records in their own transactions. Every other call passes through
// unrecorded: what it writes is recorded as its routes' writes.
type auditedTools struct {
	mcp.Catalog
	db  *store.DB
	log *slog.Logger
}

// auditTools wraps next so that confirmed destructive calls are recorded.
func auditTools(next mcp.Catalog, db *store.DB, log *slog.Logger) mcp.Catalog {
	return auditedTools{Catalog: next, db: db, log: log}
}

// CallTool runs call and records it when the tool is destructive.
func (t auditedTools) CallTool(ctx context.Context, p *auth.Principal, call *mcp.ToolCall) (*mcp.ToolResult, error) {
	res, err := t.Catalog.CallTool(ctx, p, call)
	if !destructiveTool(call.Tool) || (err == nil && len(res.InputRequests) > 0) {
		// Not destructive, or not finished: the bundle asks for more input
		// and the round that finishes is the one recorded.
		return res, err
	}
	if errors.Is(err, plugin.ErrStateRefused) {
		// The Confirmer passes a requestState it did not issue straight
		// here, trusting the registry to verify it; refused, the call
		// neither ran nor was confirmed, so it is no tool.call.
		return res, err
	}
	rec := audit.NewRecord(ctx, p, store.AuditToolCall)
	rec.Tool = call.Tool.Name
	if rec.RequestID == "" {
		rec.RequestID = call.RequestID
	}
	rec.ArgsDigest = audit.ArgsDigest(call.Arguments)
	switch {
	case err != nil:
		rec.Outcome, rec.Detail = store.OutcomeFailed, "fault"
	case res.IsError:
		rec.Outcome, rec.Detail = store.OutcomeFailed, "tool error"
	default:
		rec.Outcome = store.OutcomeSucceeded
	}
	// Not cancelled with the client: the call ran, its event is due.
	actx := context.WithoutCancel(ctx)
	if _, aerr := t.db.AppendAudit(actx, rec); aerr != nil {
		t.log.ErrorContext(actx, "recording the audit event of a tool call",
			slog.String("request_id", rec.RequestID), slog.String("org_id", rec.OrgID),
			slog.String("tool", rec.Tool), slog.Any("error", aerr))
	}
	return res, err
}

// destructiveTool is the Confirmer's rule (core/confirm): a tool without
// annotations gets the protocol's defaults, under which it is destructive.
func destructiveTool(t *mcp.Tool) bool {
	return t.Annotations == nil || t.Annotations.DestructiveHint
}
