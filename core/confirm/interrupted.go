package confirm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/mcp"
	"github.com/kobana/kadu/core/store"
)

// DefaultRunLimit is Options.RunLimit when it is 0. It covers a bundle
// call under the plugin defaults (core/plugin/options.go): up to
// DefaultMemoryWait (5 s) for memory, _initialize of a fresh instance and
// kadu_handle under DefaultTimeout (10 s) each, plus 30 s for recording the
// outcome and the clocks of replicas disagreeing a little.
const DefaultRunLimit = time.Minute

// A confirmed call claims its state (in-chat) or its approval (link) in
// the shared store, runs, then records its outcome. A replica killed in
// between leaves a claim with no outcome that nothing would ever complete:
// every retry would hear "still running" until the state expired. The run
// is bounded (it ignores the client going away, but not the bundle's own
// timeout), so a claim older than RunLimit without an outcome was left by a
// server that stopped. The next retry then records the interrupted outcome
// below, with the store's compare-and-set (an outcome is only written
// where there is none), so every retry, on any replica, and a run that
// finishes late all agree on one outcome. The call is never run again: it
// may have taken effect.

// stale reports whether a claim made at claimedAt, still without an
// outcome at now, was left by a server that stopped mid-run.
func (c *Confirmer) stale(claimedAt, now time.Time) bool {
	return !now.Before(claimedAt.Add(c.runLimit))
}

// interruptedText is what the client and the person are told about a
// confirmed call whose server stopped before recording its outcome.
func interruptedText(toolTitle, tool string) string {
	return fmt.Sprintf("The server running this confirmed call of %s stopped before it recorded the outcome, "+
		"so the call may or may not have taken effect. It will not be run again with this confirmation. "+
		"Check with the matching read tool (for example the list or get tool of what %s changes) whether it took effect; "+
		"if it did not and it is still wanted, call %s again without requestState to get a new confirmation.",
		toolTitle, tool, tool)
}

// interruptedResult is the definitive answer to a confirmed in-chat call
// whose server stopped mid-run.
func interruptedResult(toolTitle, tool string) *mcp.ToolResult {
	sc, _ := json.Marshal(struct {
		Status string `json:"status"`
		Reason string `json:"reason"`
	}{"outcome_unknown", "server_stopped"})
	return &mcp.ToolResult{IsError: true, Content: []mcp.Content{mcp.Text(interruptedText(toolTitle, tool))}, StructuredContent: sc}
}

// interrupt records the interrupted outcome for cs (a stale accepted state
// without outcome), unless an outcome was recorded meanwhile, and returns
// the state with whichever outcome the store holds.
func (c *Confirmer) interrupt(ctx context.Context, p *auth.Principal, call *mcp.ToolCall, cs store.ConfirmState) (store.ConfirmState, error) {
	out, err := encodeOutcome(interruptedResult(title(call.Tool), call.Tool.Name), nil)
	if err != nil {
		return cs, err
	}
	err = c.db.RecordConfirmOutcome(ctx, p.OrgID, cs.Nonce, out)
	switch {
	case err == nil:
		c.log.WarnContext(ctx, "confirm: the server running a confirmed call stopped before recording its outcome; recorded it as interrupted, not run again",
			append(c.attrs(p, call), slog.Time("claimed_at", cs.CreatedAt))...)
		c.confirmation("interrupted")
		cs.Outcome = out
		return cs, nil
	case errors.Is(err, store.ErrConflict):
		// Another retry, or the original run, recorded first: theirs stands.
		if cs, err = c.db.GetConfirmState(ctx, p.OrgID, cs.Nonce); err != nil {
			return cs, fmt.Errorf("confirm: reading the outcome of a confirmed call: %w", err)
		}
		if cs.Outcome == nil {
			return cs, errors.New("confirm: a confirmed call's state refused an outcome but holds none")
		}
		return cs, nil
	}
	return cs, fmt.Errorf("confirm: recording an interrupted confirmed call: %w", err)
}

// interruptApproval finishes a (stale) approved approval without outcome as
// failed with the interrupted outcome, unless it finished meanwhile, and
// returns it as the store holds it.
func (c *Confirmer) interruptApproval(ctx context.Context, a store.Approval) (store.Approval, error) {
	out, err := json.Marshal(mcp.ToolResult{IsError: true, Content: []mcp.Content{mcp.Text(interruptedText(a.ToolTitle, a.Tool))}})
	if err != nil {
		return a, fmt.Errorf("confirm: encoding an interrupted outcome: %w", err)
	}
	got, err := c.db.FinishApproval(ctx, a.OrgID, a.ID, store.ApprovalFailed, out, c.now())
	switch {
	case err == nil:
		c.log.WarnContext(ctx, "confirm: the server running an approved call stopped before recording its outcome; recorded it as failed, not run again",
			slog.String("org_id", a.OrgID), slog.String("approval_id", a.ID), slog.String("tool", a.Tool))
		c.approval("interrupted")
		return got, nil
	case errors.Is(err, store.ErrConflict) && got.Outcome != nil:
		return got, nil // finished meanwhile: that outcome stands
	}
	return a, fmt.Errorf("confirm: recording an interrupted approval %s: %w", a.ID, err)
}
