package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Idempotency record lifetimes (docs/reference/rest.md#conventions).
const (
	// IdempotencyRetention is how long a key is remembered. An older record
	// is ignored by BeginIdempotent and removed by PurgeIdempotency.
	IdempotencyRetention = 24 * time.Hour

	// IdempotencyLockTimeout is the default of Options.IdempotencyLock:
	// how long a record may stay in flight. An older in-flight record is
	// presumed left behind by a replica that died mid-request, and the next
	// BeginIdempotent takes the key over. core/app sets the lock from
	// http.write_timeout, which bounds every request; this default is far
	// longer than any request may run, for a DB opened without it.
	IdempotencyLockTimeout = 10 * time.Minute
)

// IdempotencyState is the state of an idempotency record.
type IdempotencyState string

// Idempotency record states.
const (
	IdempotencyInFlight  IdempotencyState = "in_flight"
	IdempotencyCompleted IdempotencyState = "completed"
)

// IdempotencyRecord is what the store remembers about a request made with an
// Idempotency-Key: its parameters and, once completed, its response.
type IdempotencyRecord struct {
	OrgID          string
	Key            string
	Method         string
	Route          string // the request path, e.g. "/api/v1/tasks/tsk_…/run"
	Digest         string // of the canonical request body
	State          IdempotencyState
	ResponseStatus int    // set when completed
	ResponseBody   []byte // set when completed
	CreatedAt      time.Time
}

// Completed reports whether r holds a response to replay.
func (r IdempotencyRecord) Completed() bool { return r.State == IdempotencyCompleted }

// BeginIdempotent claims key for a request (Stripe semantics). It returns:
//
//   - a new record in flight: the caller owns the key, runs the request and
//     then calls CompleteIdempotent, or AbandonIdempotent if the request
//     failed in a way a retry may fix (a 5xx);
//   - the completed record, when the same request already ran: replay
//     ResponseStatus and ResponseBody with Idempotent-Replayed: true;
//   - ErrIdempotencyMismatch when the key was used with another method,
//     route or digest;
//   - ErrIdempotencyInFlight when the first request with the key is still
//     running.
//
// Of concurrent calls with one key, exactly one gets the new record. Records
// created before now-IdempotencyRetention, and in-flight records created
// before now minus Options.IdempotencyLock, are taken over as if absent.
func (o *ops) BeginIdempotent(ctx context.Context, orgID, key, method, route, digest string, now time.Time) (IdempotencyRecord, error) {
	ctx = withoutPending(ctx) // bookkeeping of the request, not the change an audit record describes
	if err := checkOrg(orgID); err != nil {
		return IdempotencyRecord{}, err
	}
	if key == "" {
		return IdempotencyRecord{}, errors.New("store: empty idempotency key")
	}
	now = now.UTC().Truncate(time.Microsecond)
	rec := IdempotencyRecord{OrgID: orgID, Key: key, Method: method, Route: route, Digest: digest,
		State: IdempotencyInFlight, CreatedAt: now}
	// Three rounds are enough: a round fails only when another caller
	// changed the row between our statements.
	for range 3 {
		res, err := o.write.ExecContext(ctx, `INSERT INTO idempotency_keys
			(org_id, key, method, route, digest, state, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)
			ON CONFLICT (org_id, key) DO NOTHING`,
			orgID, key, method, route, digest, string(IdempotencyInFlight), o.d.timeArg(now))
		if n, err := affected(res, err); err != nil {
			return IdempotencyRecord{}, fmt.Errorf("beginning idempotent request: %w", err)
		} else if n == 1 {
			return rec, nil
		}

		cur, err := o.getIdempotency(ctx, o.write, orgID, key)
		if errors.Is(err, ErrNotFound) {
			continue // abandoned or purged meanwhile
		}
		if err != nil {
			return IdempotencyRecord{}, err
		}
		stale := !cur.CreatedAt.After(now.Add(-IdempotencyRetention)) ||
			(cur.State == IdempotencyInFlight && !cur.CreatedAt.After(now.Add(-o.idemLock)))
		if stale {
			res, err := o.write.ExecContext(ctx, `UPDATE idempotency_keys SET method = $3, route = $4, digest = $5,
				state = $6, response_status = NULL, response_body = NULL, created_at = $7
				WHERE org_id = $1 AND key = $2 AND created_at = $8 AND state = $9`,
				orgID, key, method, route, digest, string(IdempotencyInFlight), o.d.timeArg(now),
				o.d.timeArg(cur.CreatedAt), string(cur.State))
			if n, err := affected(res, err); err != nil {
				return IdempotencyRecord{}, fmt.Errorf("taking over idempotency key: %w", err)
			} else if n == 1 {
				return rec, nil
			}
			continue // someone else took it over first
		}
		if cur.Method != method || cur.Route != route || cur.Digest != digest {
			return IdempotencyRecord{}, fmt.Errorf("idempotency key %q was used for %s %s: %w",
				key, cur.Method, cur.Route, ErrIdempotencyMismatch)
		}
		if cur.State == IdempotencyInFlight {
			return IdempotencyRecord{}, fmt.Errorf("idempotency key %q: %w", key, ErrIdempotencyInFlight)
		}
		return cur, nil
	}
	return IdempotencyRecord{}, fmt.Errorf("idempotency key %q: contended: %w", key, ErrIdempotencyInFlight)
}

// CompleteIdempotent stores the response of the request that owns key, for
// replays. A key not in flight is ErrNotFound. The body is encrypted with
// the DB's SecretKeys: a response may carry a secret shown once (a webhook's
// signing secret), and the record repeats it to a replay for 24 h.
func (o *ops) CompleteIdempotent(ctx context.Context, orgID, key string, status int, body []byte) error {
	ctx = withoutPending(ctx) // bookkeeping of the request, not the change an audit record describes
	if err := checkOrg(orgID); err != nil {
		return err
	}
	if body == nil {
		body = []byte{}
	}
	if o.keys != nil {
		sealed, err := o.keys.seal(body, idempotencyAAD(orgID, key))
		if err != nil {
			return err
		}
		body = []byte(sealed)
	}
	res, err := o.write.ExecContext(ctx, `UPDATE idempotency_keys SET state = $3, response_status = $4, response_body = $5
		WHERE org_id = $1 AND key = $2 AND state = $6`,
		orgID, key, string(IdempotencyCompleted), status, body, string(IdempotencyInFlight))
	return oneRow(res, err, "idempotency key", key)
}

// AbandonIdempotent forgets the in-flight key, so that a retry runs the
// request again: for a request that failed with a 5xx. A key not in flight
// is ErrNotFound.
func (o *ops) AbandonIdempotent(ctx context.Context, orgID, key string) error {
	ctx = withoutPending(ctx) // bookkeeping of the request, not the change an audit record describes
	if err := checkOrg(orgID); err != nil {
		return err
	}
	res, err := o.write.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE org_id = $1 AND key = $2 AND state = $3`,
		orgID, key, string(IdempotencyInFlight))
	return oneRow(res, err, "idempotency key", key)
}

// PurgeIdempotency deletes, in every organisation, the records created
// before before (now-IdempotencyRetention for the periodic job) and returns
// how many.
func (o *ops) PurgeIdempotency(ctx context.Context, before time.Time) (int64, error) {
	res, err := o.write.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE created_at < $1`, o.d.timeArg(before))
	n, err := affected(res, err)
	if err != nil {
		return 0, fmt.Errorf("purging idempotency keys: %w", err)
	}
	return n, nil
}

// idempotencyAAD binds an encrypted response body to its record.
func idempotencyAAD(orgID, key string) string { return "idempotency_keys/" + orgID + "/" + key }

func (o *ops) getIdempotency(ctx context.Context, q querier, orgID, key string) (IdempotencyRecord, error) {
	r := IdempotencyRecord{OrgID: orgID, Key: key}
	var status sql.NullInt64
	err := q.QueryRowContext(ctx, `SELECT method, route, digest, state, response_status, response_body, created_at
		FROM idempotency_keys WHERE org_id = $1 AND key = $2`, orgID, key).
		Scan(&r.Method, &r.Route, &r.Digest, &r.State, &status, &r.ResponseBody, timeCol{&r.CreatedAt})
	if errors.Is(err, sql.ErrNoRows) {
		return IdempotencyRecord{}, fmt.Errorf("idempotency key %q: %w", key, ErrNotFound)
	}
	if err != nil {
		return IdempotencyRecord{}, fmt.Errorf("reading idempotency key %q: %w", key, err)
	}
	r.ResponseStatus = int(status.Int64)
	if isSealed(string(r.ResponseBody)) {
		if o.keys == nil {
			return IdempotencyRecord{}, fmt.Errorf("idempotency key %q: response is encrypted, but the store was opened without SecretKeys", key)
		}
		plain, _, err := o.keys.open(string(r.ResponseBody), idempotencyAAD(orgID, key))
		if err != nil {
			return IdempotencyRecord{}, fmt.Errorf("idempotency key %q: %w", key, err)
		}
		r.ResponseBody = plain
	}
	return r, nil
}

// affected returns the rows an Exec changed.
func affected(res sql.Result, err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
