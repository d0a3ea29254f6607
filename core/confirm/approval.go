package confirm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/kobana/kadu/core/audit"
	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/mcp"
	"github.com/kobana/kadu/core/store"
)

// Errors of Decide, for the approval page to tell the person what happened.
var (
	// ErrNotRequester: the person signed in is not the one who made the
	// call (issuer and subject differ). Nothing changes.
	ErrNotRequester = errors.New("confirm: only the person who made the call may decide it")

	// ErrExpired: the approval expired before anyone decided. Nothing ran.
	ErrExpired = errors.New("confirm: the approval has expired")

	// ErrDecided: the approval was already decided (continued, cancelled or
	// failed), by this click's twin or earlier. Nothing changes.
	ErrDecided = errors.New("confirm: the approval was already decided")
)

// timeLayout renders times as the API does: RFC 3339 UTC with
// microseconds, the store's precision.
const timeLayout = "2006-01-02T15:04:05.000000Z07:00"

// approvalRequired is the structuredContent of docs/reference/confirmation.md's approval answer.
type approvalRequired struct {
	Status      string `json:"status"`
	ApprovalID  string `json:"approval_id"`
	ApprovalURL string `json:"approval_url"`
	ExpiresAt   string `json:"expires_at"`
}

// requestApproval records the call as a pending approval and answers with
// the link the person must open. Nothing runs until they continue there.
func (c *Confirmer) requestApproval(ctx context.Context, p *auth.Principal, call *mcp.ToolCall) (*mcp.ToolResult, error) {
	now := c.now()
	args := call.Arguments
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	var clientName string
	if call.Client.Era == mcp.Era2026 && call.Client.Info != nil {
		clientName = call.Client.Info.Name // as reported: nothing vouches for it
	}
	// The approval and its approval.issued event commit together
	// (docs/audit.md#confirmations-and-approvals).
	var a store.Approval
	err := c.db.InTx(ctx, func(tx *store.Tx) error {
		var err error
		a, err = tx.CreateApproval(ctx, p.OrgID, store.Approval{
			Tool:       call.Tool.Name,
			ToolTitle:  title(call.Tool),
			Arguments:  args,
			Principal:  storedPrincipal(p),
			ClientID:   p.ClientID,
			ClientName: clientName,
			ExpiresAt:  now.Add(c.approvalTTL),
		}, now)
		if err != nil {
			return err
		}
		return c.recordApproval(ctx, tx, a, store.AuditApprovalIssued, store.OutcomeSucceeded, call.RequestID)
	})
	if err != nil {
		return nil, fmt.Errorf("confirm: creating approval: %w", err)
	}
	link := c.publicURL + "/approve/" + a.ID
	expires := a.ExpiresAt.Format(timeLayout)
	sc, err := json.Marshal(approvalRequired{Status: "approval_required", ApprovalID: a.ID, ApprovalURL: link, ExpiresAt: expires})
	if err != nil {
		return nil, fmt.Errorf("confirm: encoding the approval answer: %w", err)
	}
	what := c.explain(ctx, p.OrgID, call.Tool.Name, a.ToolTitle, args, "en")
	text := fmt.Sprintf("Nothing has been done yet: this needs the person's approval first. What it will do: %s\n\n"+
		"Ask the person to open %s, sign in as themselves, check the details and choose Continue (or Cancel). "+
		"The link works once and expires at %s. Then call kadu_approvals_get with id %q to learn whether it ran and what it returned. "+
		"Do not call %s again for this: that would ask for another approval.",
		what, link, expires, a.ID, call.Tool.Name)
	c.log.InfoContext(ctx, "confirm: approval requested", append(c.attrs(p, call), slog.String("approval_id", a.ID))...)
	c.approval("issued")
	return &mcp.ToolResult{Content: []mcp.Content{mcp.Text(text)}, StructuredContent: sc}, nil
}

func storedPrincipal(p *auth.Principal) store.ApprovalPrincipal {
	return store.ApprovalPrincipal{Issuer: p.Issuer, Subject: p.Subject, OrgID: p.OrgID, Role: string(p.Role),
		Scopes: slices.Clone(p.Scopes), ClientID: p.ClientID}
}

// principalOf rebuilds the principal an approval runs as. It has no expiry:
// the person's decision, not the token, authorises the run.
func principalOf(sp store.ApprovalPrincipal) *auth.Principal {
	return &auth.Principal{Issuer: sp.Issuer, Subject: sp.Subject, OrgID: sp.OrgID, Role: auth.Role(sp.Role),
		Scopes: slices.Clone(sp.Scopes), ClientID: sp.ClientID}
}

// Approval returns the approval id of orgID, with a pending one past its
// expiry reported as expired. An unknown id, or another organisation's, is
// store.ErrNotFound. It does not check who is asking: the page shows an
// approval only to its requester (Decide enforces it for changes).
func (c *Confirmer) Approval(ctx context.Context, orgID, id string) (store.Approval, error) {
	if !store.ValidID(store.PrefixApproval, id) {
		return store.Approval{}, fmt.Errorf("approval %s: %w", id, store.ErrNotFound)
	}
	a, err := c.db.GetApproval(ctx, orgID, id)
	if err != nil {
		return store.Approval{}, err
	}
	if a, err = c.Settle(ctx, a); err != nil {
		return store.Approval{}, err
	}
	a.Status = a.StatusAt(c.now())
	return a, nil
}

// Settle returns a, read from the store, as it should be read: an approved
// approval still without outcome RunLimit after its decision was left by a
// server that stopped mid-run, and is first finished as failed with an
// outcome saying so (interrupted.go), once, whoever reads it first; the
// call is not run again. Readers of approvals that bypass Approval (the
// REST API behind kadu_approvals_get) call it.
func (c *Confirmer) Settle(ctx context.Context, a store.Approval) (store.Approval, error) {
	if a.Status != store.ApprovalApproved || a.Outcome != nil || a.DecidedAt == nil || !c.stale(*a.DecidedAt, c.now()) {
		return a, nil
	}
	return c.interruptApproval(ctx, a)
}

// Decide records signedIn's choice on the approval id of orgID. signedIn
// must be the person who made the call (same issuer and subject), else
// ErrNotRequester; the approval must be pending and unexpired, else
// ErrExpired or ErrDecided. The choice is a compare-and-set: of concurrent
// decisions (two Continue clicks, two replicas) exactly one wins, so the
// call runs at most once.
//
// proceed runs the call in-process as the principal stored with the
// approval (never a token), through Next, and records its result as the
// outcome: status approved, or failed when the tool is gone, no longer
// allowed to that principal, asked for input, or faulted. !proceed cancels
// it; nothing runs. It returns the approval as it ended.
func (c *Confirmer) Decide(ctx context.Context, signedIn *auth.Principal, orgID, id string, proceed bool) (store.Approval, error) {
	a, err := c.Approval(ctx, orgID, id)
	if err != nil {
		return store.Approval{}, err
	}
	if signedIn == nil || signedIn.Issuer != a.Principal.Issuer || signedIn.Subject != a.Principal.Subject {
		return store.Approval{}, ErrNotRequester
	}
	to := store.ApprovalCancelled
	if proceed {
		to = store.ApprovalApproved
	}
	now := c.now()
	// The decision and its audit event commit together; a refused
	// decision (ErrConflict) changes nothing and records nothing.
	action := store.AuditApprovalCancelled
	if proceed {
		action = store.AuditApprovalApproved
	}
	err = c.db.InTx(ctx, func(tx *store.Tx) error {
		var err error
		if a, err = tx.DecideApproval(ctx, orgID, id, to, now); err != nil {
			return err
		}
		return c.recordApproval(ctx, tx, a, action, store.OutcomeSucceeded, "")
	})
	if errors.Is(err, store.ErrConflict) {
		a.Status = a.StatusAt(now)
		if a.Status == store.ApprovalExpired {
			c.approval("expired")
			return a, ErrExpired
		}
		return a, ErrDecided
	}
	if err != nil {
		return store.Approval{}, fmt.Errorf("confirm: deciding approval %s: %w", id, err)
	}
	log := []any{slog.String("org_id", orgID), slog.String("approval_id", id), slog.String("tool", a.Tool)}
	if !proceed {
		c.log.InfoContext(ctx, "confirm: approval cancelled; nothing ran", log...)
		c.approval("cancelled")
		return a, nil
	}
	// Won: run it to the end, even if the browser goes away.
	runCtx := context.WithoutCancel(ctx)
	status, out := c.runApproved(runCtx, a)
	a, err = c.db.FinishApproval(runCtx, orgID, id, status, out, c.now())
	if errors.Is(err, store.ErrConflict) && a.Outcome != nil {
		// The run outlasted RunLimit and was recorded as interrupted
		// (interrupted.go): that outcome stands.
		c.log.WarnContext(ctx, "confirm: an approved call finished after its outcome was recorded as interrupted; the recorded outcome stands", log...)
		return a, nil
	}
	if err != nil {
		return store.Approval{}, fmt.Errorf("confirm: recording the outcome of approval %s: %w", id, err)
	}
	c.log.InfoContext(ctx, "confirm: approval continued", append(log, slog.String("status", string(a.Status)))...)
	c.approval("approved")
	return a, nil
}

// runApproved runs an approved call as its stored principal and returns
// the approval's final status and outcome (a CallToolResult).
func (c *Confirmer) runApproved(ctx context.Context, a store.Approval) (store.ApprovalStatus, json.RawMessage) {
	p := principalOf(a.Principal)
	tools, err := c.next.Tools(ctx, p)
	if err != nil {
		c.log.ErrorContext(ctx, "confirm: listing tools for an approved call", slog.String("approval_id", a.ID), slog.Any("error", err))
		return store.ApprovalFailed, failure("The tool list could not be read, so %s did not run. Nothing was done; ask for it again later.", a.ToolTitle)
	}
	i := slices.IndexFunc(tools, func(t mcp.Tool) bool { return t.Name == a.Tool })
	if i < 0 || !p.Allows(tools[i].Access.MinRole, tools[i].Access.Scope) {
		return store.ApprovalFailed, failure("%s (%s) is no longer available to the person who asked for it, so nothing was done.", a.ToolTitle, a.Tool)
	}
	tool := tools[i]
	// The call runs in the approval page's request, whose audit.Call names
	// no tool and no client: name them, so the writes of the tool's routes
	// say which tool made them and for which client (the page's surface
	// stays, docs/audit.md#what-is-recorded).
	ctx = audit.WithCall(ctx, audit.Call{Tool: a.Tool, ClientName: a.ClientName})
	res, err := c.next.CallTool(ctx, p, &mcp.ToolCall{Tool: &tool, Arguments: a.Arguments, RequestID: a.ID})
	var rpc *mcp.Error
	switch {
	case errors.As(err, &rpc):
		return store.ApprovalFailed, failure("%s refused the call: %s. Nothing was done.", a.ToolTitle, rpc.Message)
	case err != nil || res == nil:
		c.log.ErrorContext(ctx, "confirm: an approved call failed", slog.String("approval_id", a.ID), slog.String("tool", a.Tool), slog.Any("error", err))
		return store.ApprovalFailed, failure("%s failed on the server before it could answer. Check whether it took effect before asking again.", a.ToolTitle)
	case len(res.InputRequests) > 0:
		return store.ApprovalFailed, failure("%s asked for more input, which an approval link cannot give, so it did not finish. "+
			"Make the call again from a client that can answer questions in the chat.", a.ToolTitle)
	}
	if res.Content == nil {
		res.Content = []mcp.Content{}
	}
	out, err := json.Marshal(res)
	if err != nil {
		c.log.ErrorContext(ctx, "confirm: encoding the outcome of an approved call", slog.String("approval_id", a.ID), slog.Any("error", err))
		return store.ApprovalFailed, failure("%s ran, but what it answered could not be recorded.", a.ToolTitle)
	}
	return store.ApprovalApproved, out
}

// failure is an isError CallToolResult saying why an approved call did not
// run to an answer.
func failure(format string, args ...any) json.RawMessage {
	out, _ := json.Marshal(mcp.ToolResult{IsError: true, Content: []mcp.Content{mcp.Text(fmt.Sprintf(format, args...))}})
	return out
}

// recordApproval appends the audit event action of approval a in tx, the
// transaction of the change it records.
func (c *Confirmer) recordApproval(ctx context.Context, tx *store.Tx, a store.Approval, action, outcome, requestID string) error {
	rec := audit.Approval(ctx, a, action, outcome)
	if action == store.AuditApprovalIssued && rec.Surface == store.SurfaceSystem {
		rec.Surface = store.SurfaceMCP // a link is only ever issued to an MCP call
	}
	if rec.RequestID == "" {
		rec.RequestID = requestID
	}
	if _, err := tx.AppendAudit(ctx, rec); err != nil {
		return fmt.Errorf("recording the audit event %s: %w", action, err)
	}
	return nil
}
