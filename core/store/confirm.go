package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// ConfirmState is the answer recorded for one in-chat confirmation
// (docs/reference/confirmation.md#in-chat-confirmation): the nonce of a sealed requestState that a client answered, so that
// each state is accepted once whichever replica receives the retry.
// Values returned by the store belong to the caller.
type ConfirmState struct {
	Nonce  string
	OrgID  string
	Status ConfirmStatus
	// Outcome is what the accepted call answered, for replays (its
	// encoding is core/confirm's); nil while it runs, and for declined.
	Outcome   json.RawMessage
	CreatedAt time.Time
	ExpiresAt time.Time // the requestState's own expiry
}

// ConfirmStatus is the answer a confirmation got.
type ConfirmStatus string

// Confirm statuses.
const (
	ConfirmAccepted ConfirmStatus = "accepted" // the call ran, or is running
	ConfirmDeclined ConfirmStatus = "declined" // declined or cancelled: nothing ran
)

// ClaimConfirmState records the answer status for nonce, valid until
// expiresAt, if nonce has none yet: then it returns the new record and
// claimed == true, and the caller acts on the answer (runs the call, then
// RecordConfirmOutcome). Otherwise it returns the record already there and
// claimed == false. Of concurrent claims of one nonce exactly one gets
// claimed == true. A nonce recorded for another organisation is
// ErrConflict.
func (o *ops) ClaimConfirmState(ctx context.Context, orgID, nonce string, status ConfirmStatus, expiresAt, now time.Time) (ConfirmState, bool, error) {
	if err := checkOrg(orgID); err != nil {
		return ConfirmState{}, false, err
	}
	if nonce == "" {
		return ConfirmState{}, false, errors.New("store: ClaimConfirmState: empty nonce")
	}
	if status != ConfirmAccepted && status != ConfirmDeclined {
		return ConfirmState{}, false, fmt.Errorf("store: ClaimConfirmState: unknown status %q", status)
	}
	now = now.UTC().Truncate(time.Microsecond)
	expiresAt = expiresAt.UTC().Truncate(time.Microsecond)
	res, err := o.write.ExecContext(ctx, `INSERT INTO confirm_states (nonce, org_id, status, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT (nonce) DO NOTHING`,
		nonce, orgID, string(status), o.d.timeArg(now), o.d.timeArg(expiresAt))
	n, err := affected(res, err)
	if err != nil {
		return ConfirmState{}, false, fmt.Errorf("claiming confirm state: %w", err)
	}
	if n == 1 {
		return ConfirmState{Nonce: nonce, OrgID: orgID, Status: status, CreatedAt: now, ExpiresAt: expiresAt}, true, nil
	}
	cur, err := getConfirmState(ctx, o.write, nonce)
	if err != nil {
		return ConfirmState{}, false, err
	}
	if cur.OrgID != orgID {
		return ConfirmState{}, false, fmt.Errorf("confirm state of another organisation: %w", ErrConflict)
	}
	return cur, false, nil
}

// GetConfirmState returns the record of nonce in orgID; ErrNotFound when
// it was never answered (or purged).
func (o *ops) GetConfirmState(ctx context.Context, orgID, nonce string) (ConfirmState, error) {
	if err := checkOrg(orgID); err != nil {
		return ConfirmState{}, err
	}
	cs, err := getConfirmState(ctx, o.read, nonce)
	if err != nil {
		return ConfirmState{}, err
	}
	if cs.OrgID != orgID {
		return ConfirmState{}, fmt.Errorf("confirm state: %w", ErrNotFound)
	}
	return cs, nil
}

func getConfirmState(ctx context.Context, q querier, nonce string) (ConfirmState, error) {
	cs := ConfirmState{Nonce: nonce}
	err := q.QueryRowContext(ctx, `SELECT org_id, status, outcome, created_at, expires_at
		FROM confirm_states WHERE nonce = $1`, nonce).
		Scan(&cs.OrgID, &cs.Status, rawJSONCol{&cs.Outcome}, timeCol{&cs.CreatedAt}, timeCol{&cs.ExpiresAt})
	if errors.Is(err, sql.ErrNoRows) {
		return ConfirmState{}, fmt.Errorf("confirm state: %w", ErrNotFound)
	}
	if err != nil {
		return ConfirmState{}, fmt.Errorf("reading confirm state: %w", err)
	}
	return cs, nil
}

// RecordConfirmOutcome stores what the accepted call of nonce answered, once:
// a nonce that is not accepted, or already has an outcome, is ErrConflict;
// an unknown one ErrNotFound. It is a compare-and-set (only where there is
// no outcome yet): of the run itself and the retries that record it as
// interrupted after its server stopped (core/confirm/interrupted.go),
// whichever writes first is the outcome everyone reads; the others get
// ErrConflict and overwrite nothing.
func (o *ops) RecordConfirmOutcome(ctx context.Context, orgID, nonce string, outcome json.RawMessage) error {
	if err := checkOrg(orgID); err != nil {
		return err
	}
	if outcome == nil {
		return errors.New("store: RecordConfirmOutcome: no outcome")
	}
	out, err := rawJSONArg("confirm outcome", outcome)
	if err != nil {
		return err
	}
	res, err := o.write.ExecContext(ctx, `UPDATE confirm_states SET outcome = $3
		WHERE org_id = $1 AND nonce = $2 AND status = $4 AND outcome IS NULL`,
		orgID, nonce, out, string(ConfirmAccepted))
	n, err := affected(res, err)
	if err != nil {
		return fmt.Errorf("recording confirm outcome: %w", err)
	}
	if n == 0 {
		if _, err := o.GetConfirmState(ctx, orgID, nonce); err != nil {
			return err
		}
		return fmt.Errorf("confirm state is not an accepted one without outcome: %w", ErrConflict)
	}
	return nil
}
