package api

import (
	"encoding/json"
	"time"

	"github.com/kobana/kadu/core/store"
)

// approvalHandlers serve GET /approvals/{id}: how a model learns
// what became of a destructive call it sent the person to approve.
// Approvals are created and decided by core/confirm, never through the API.
func (a *API) approvalHandlers() map[string]handler {
	return map[string]handler{
		"GET /approvals/{id}": a.getApproval,
	}
}

// approvalJSON is an approval on the wire. outcome is the CallToolResult of
// the call once it ran (untrusted data, like any output), null before.
type approvalJSON struct {
	ID        string               `json:"id"`
	Status    store.ApprovalStatus `json:"status"`
	Tool      string               `json:"tool"`
	Arguments json.RawMessage      `json:"arguments"`
	Client    approvalClientJSON   `json:"client"`
	CreatedAt string               `json:"created_at"`
	ExpiresAt string               `json:"expires_at"`
	DecidedAt *string              `json:"decided_at"`
	Outcome   json.RawMessage      `json:"outcome"`
}

// approvalClientJSON is the client that made the call: the OAuth client of
// its token, and the name the client reported itself (nothing vouches
// for that one).
type approvalClientJSON struct {
	ID   *string `json:"id"`
	Name *string `json:"name"`
}

func (a *API) getApproval(c *call) (*reply, error) {
	id := c.param("id")
	if !store.ValidID(store.PrefixApproval, id) {
		return nil, errNotFound("Approval " + id)
	}
	ap, err := a.db.GetApproval(c.ctx(), c.org.id, id)
	if err != nil {
		return nil, storeErr(err, "Approval "+id)
	}
	// Only the person who made the call may read it: an approval holds the
	// call's arguments and its outcome. Anyone else gets the same 404 as
	// for an id that does not exist.
	if ap.Principal.Issuer != c.p.Issuer || ap.Principal.Subject != c.p.Subject {
		return nil, errNotFound("Approval " + id)
	}
	if a.settleApproval != nil {
		if ap, err = a.settleApproval(c.ctx(), ap); err != nil {
			return nil, storeErr(err, "Approval "+id)
		}
	}
	return ok(renderApproval(ap, a.now()))
}

// renderApproval renders ap as seen at now: a pending approval past its
// expiry is expired, whether or not maintenance has written it yet.
func renderApproval(ap store.Approval, now time.Time) approvalJSON {
	return approvalJSON{
		ID:        ap.ID,
		Status:    ap.StatusAt(now),
		Tool:      ap.Tool,
		Arguments: rawOrNull(ap.Arguments),
		Client:    approvalClientJSON{ID: strPtr(ap.ClientID), Name: strPtr(ap.ClientName)},
		CreatedAt: ts(ap.CreatedAt),
		ExpiresAt: ts(ap.ExpiresAt),
		DecidedAt: tsPtr(ap.DecidedAt),
		Outcome:   rawOrNull(ap.Outcome),
	}
}
