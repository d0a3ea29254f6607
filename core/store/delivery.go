package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Delivery is one event on its way to one webhook (docs/reference/rest.md#wire-forms): pending
// until an attempt succeeds, the retries run out, or the webhook goes away.
// It is not a wire type: core/api renders it. Values returned by the store
// belong to the caller.
type Delivery struct {
	ID            string
	OrgID         string
	WebhookID     string
	EventID       string
	EventCode     string
	Status        DeliveryStatus
	AttemptsCount int          // every attempt made, replays included
	NextAttemptAt *time.Time   // when the next scheduled attempt is due; nil unless pending
	LastAttempt   *LastAttempt // nil before the first attempt
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// LastAttempt sums up a delivery's latest attempt.
type LastAttempt struct {
	At           time.Time `json:"at"`
	ResponseCode int       `json:"response_code,omitempty"` // 0: no HTTP response
	DurationMS   int64     `json:"duration_ms"`
	Error        string    `json:"error,omitempty"`
}

// DeliveryStatus is where a delivery is in its life.
type DeliveryStatus string

// Delivery statuses.
const (
	DeliveryPending   DeliveryStatus = "pending"
	DeliverySucceeded DeliveryStatus = "succeeded"
	DeliveryFailed    DeliveryStatus = "failed"    // the retries ran out, or the endpoint is gone
	DeliveryCancelled DeliveryStatus = "cancelled" // its webhook was deleted or disabled first
)

// DeliveryStatuses returns every delivery status.
func DeliveryStatuses() []DeliveryStatus {
	return []DeliveryStatus{DeliveryPending, DeliverySucceeded, DeliveryFailed, DeliveryCancelled}
}

// Valid reports whether s is one of DeliveryStatuses.
func (s DeliveryStatus) Valid() bool { return slices.Contains(DeliveryStatuses(), s) }

// DeliveryAttempt is one HTTP request of a delivery. ResponseBody holds
// untrusted data.
type DeliveryAttempt struct {
	ID           string
	OrgID        string
	DeliveryID   string
	AttemptedAt  time.Time
	URL          string // where it was sent: the webhook's URL at the time
	ResponseCode int    // 0: no HTTP response (Error says why)
	DurationMS   int64
	Error        string
	ResponseBody string // at most MaxResponseBody bytes of it
	Replay       bool   // asked for with POST /webhook_deliveries/{id}/replay
}

// PrefixAttempt prefixes delivery attempt ids.
const PrefixAttempt = "dla_"

// MaxResponseBody is how much of a receiver's answer an attempt keeps, in
// bytes; MaxAttemptError the same for an error message.
const (
	MaxResponseBody = 4096
	MaxAttemptError = 1024
)

// MaxAttemptsListed is the most attempts ListDeliveryAttempts returns: the
// latest ones.
const MaxAttemptsListed = 100

const deliveryColumns = `id, org_id, webhook_id, event_id, event_code, status, attempts_count,
	next_attempt_at, last_attempt, created_at, updated_at`

func scanDelivery(s scanner) (Delivery, error) {
	var d Delivery
	err := s.Scan(&d.ID, &d.OrgID, &d.WebhookID, &d.EventID, &d.EventCode, &d.Status, &d.AttemptsCount,
		nullTimeCol{&d.NextAttemptAt}, nullJSONCol[LastAttempt]{&d.LastAttempt},
		timeCol{&d.CreatedAt}, timeCol{&d.UpdatedAt})
	return d, err
}

const attemptColumns = `id, org_id, delivery_id, attempted_at, url, response_code, duration_ms, error,
	response_body, replay`

func scanAttempt(s scanner) (DeliveryAttempt, error) {
	var a DeliveryAttempt
	var code sql.NullInt64
	err := s.Scan(&a.ID, &a.OrgID, &a.DeliveryID, timeCol{&a.AttemptedAt}, &a.URL, &code, &a.DurationMS,
		nullStringCol{&a.Error}, nullStringCol{&a.ResponseBody}, &a.Replay)
	a.ResponseCode = int(code.Int64)
	return a, err
}

// GetDelivery returns the delivery id of orgID.
func (o *ops) GetDelivery(ctx context.Context, orgID, id string) (Delivery, error) {
	if err := checkOrg(orgID); err != nil {
		return Delivery{}, err
	}
	return getDelivery(ctx, o.read, orgID, id)
}

func getDelivery(ctx context.Context, q querier, orgID, id string) (Delivery, error) {
	d, err := scanDelivery(q.QueryRowContext(ctx, `SELECT `+deliveryColumns+` FROM deliveries
		WHERE org_id = $1 AND id = $2`, orgID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Delivery{}, fmt.Errorf("delivery %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return Delivery{}, fmt.Errorf("getting delivery %s: %w", id, err)
	}
	return d, nil
}

// DeliveryFilter narrows ListDeliveries; zero fields do not filter.
type DeliveryFilter struct {
	WebhookID string
	EventCode string
	Status    DeliveryStatus
}

// ListDeliveries returns a page of orgID's deliveries matching f, newest
// first. Deliveries of a deleted webhook stay listed until purged: they are
// the log of what was sent.
func (o *ops) ListDeliveries(ctx context.Context, orgID string, f DeliveryFilter, p ListParams) (Page[Delivery], error) {
	if err := checkOrg(orgID); err != nil {
		return Page[Delivery]{}, err
	}
	var a args
	conds := []string{"org_id = " + a.add(orgID)}
	if f.WebhookID != "" {
		conds = append(conds, "webhook_id = "+a.add(f.WebhookID))
	}
	if f.EventCode != "" {
		conds = append(conds, "event_code = "+a.add(f.EventCode))
	}
	if f.Status != "" {
		conds = append(conds, "status = "+a.add(string(f.Status)))
	}
	if p.Before != "" {
		conds = append(conds, "id < "+a.add(p.Before))
	}
	limit := clampLimit(p.Limit)
	query := `SELECT ` + deliveryColumns + ` FROM deliveries` + where(conds) + ` ORDER BY id DESC LIMIT ` + a.add(limit+1)
	return listPage(ctx, o.read, query, a, limit, scanDelivery)
}

// ListDeliveryAttempts returns the attempts of the delivery deliveryID of
// orgID, oldest first: the latest MaxAttemptsListed of them. A delivery
// that is not visible to orgID is ErrNotFound.
func (o *ops) ListDeliveryAttempts(ctx context.Context, orgID, deliveryID string) ([]DeliveryAttempt, error) {
	if err := checkOrg(orgID); err != nil {
		return nil, err
	}
	if _, err := getDelivery(ctx, o.read, orgID, deliveryID); err != nil {
		return nil, err
	}
	page, err := listPage(ctx, o.read, `SELECT `+attemptColumns+` FROM delivery_attempts
		WHERE org_id = $1 AND delivery_id = $2 ORDER BY id DESC LIMIT $3`,
		args{orgID, deliveryID, MaxAttemptsListed + 1}, MaxAttemptsListed, scanAttempt)
	if err != nil {
		return nil, fmt.Errorf("attempts of delivery %s: %w", deliveryID, err)
	}
	slices.Reverse(page.Items)
	return page.Items, nil
}

// RecordDeliveryAttempt stores attempt a of the delivery a.DeliveryID of
// orgID, counts it and makes it the delivery's LastAttempt, and returns the
// delivery as stored; its status does not change (SetDeliveryStatus does
// that). The store sets ID and OrgID, AttemptedAt if it is zero, and keeps
// at most MaxResponseBody bytes of the response body and MaxAttemptError of
// the error, as valid UTF-8.
//
// On PostgreSQL it locks the delivery until the transaction ends: call it
// on a Tx, then SetDeliveryStatus, to decide on the status it returns.
func (o *ops) RecordDeliveryAttempt(ctx context.Context, orgID string, a DeliveryAttempt) (Delivery, error) {
	if err := checkOrg(orgID); err != nil {
		return Delivery{}, err
	}
	a.ID, a.OrgID = NewID(PrefixAttempt), orgID
	if a.AttemptedAt.IsZero() {
		a.AttemptedAt = o.clock()
	}
	a.AttemptedAt = a.AttemptedAt.UTC().Truncate(time.Microsecond)
	a.ResponseBody = cleanText(a.ResponseBody, MaxResponseBody)
	a.Error = cleanText(a.Error, MaxAttemptError)
	last := LastAttempt{At: a.AttemptedAt, ResponseCode: a.ResponseCode, DurationMS: a.DurationMS, Error: a.Error}
	var code any
	if a.ResponseCode != 0 {
		code = a.ResponseCode
	}
	var out Delivery
	err := o.inTx(ctx, func(q querier) error {
		d, err := scanDelivery(q.QueryRowContext(ctx, `UPDATE deliveries
			SET attempts_count = attempts_count + 1, last_attempt = $3, updated_at = $4
			WHERE org_id = $1 AND id = $2 RETURNING `+deliveryColumns,
			orgID, a.DeliveryID, mustJSON(last), o.d.timeArg(o.clock())))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("delivery %s: %w", a.DeliveryID, ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("recording attempt of delivery %s: %w", a.DeliveryID, err)
		}
		_, err = q.ExecContext(ctx, `INSERT INTO delivery_attempts (`+attemptColumns+`)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
			a.ID, orgID, a.DeliveryID, o.d.timeArg(a.AttemptedAt), a.URL, code, a.DurationMS,
			nullStringArg(a.Error), nullStringArg(a.ResponseBody), a.Replay)
		if err != nil {
			return fmt.Errorf("recording attempt of delivery %s: %w", a.DeliveryID, err)
		}
		out = d
		return nil
	})
	return out, err
}

// SetDeliveryStatus moves the delivery id of orgID to status to if its
// status is one of from (ErrConflict otherwise), with next as its
// NextAttemptAt (only kept while pending), and returns it as stored.
func (o *ops) SetDeliveryStatus(ctx context.Context, orgID, id string, from []DeliveryStatus, to DeliveryStatus, next *time.Time) (Delivery, error) {
	if err := checkOrg(orgID); err != nil {
		return Delivery{}, err
	}
	if !to.Valid() {
		return Delivery{}, fmt.Errorf("store: SetDeliveryStatus: unknown status %q", to)
	}
	if to != DeliveryPending {
		next = nil
	}
	var out Delivery
	err := o.inTx(ctx, func(q querier) error {
		cur, err := getDelivery(ctx, q, orgID, id)
		if err != nil {
			return err
		}
		if !slices.Contains(from, cur.Status) {
			return fmt.Errorf("delivery %s is %s, cannot become %s: %w", id, cur.Status, to, ErrConflict)
		}
		d, err := scanDelivery(q.QueryRowContext(ctx, `UPDATE deliveries SET status = $3, next_attempt_at = $4, updated_at = $5
			WHERE org_id = $1 AND id = $2 AND status = $6 RETURNING `+deliveryColumns,
			orgID, id, string(to), o.d.nullTimeArg(next), o.d.timeArg(o.clock()), string(cur.Status)))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("delivery %s changed status concurrently: %w", id, ErrConflict)
		}
		if err != nil {
			return fmt.Errorf("updating delivery %s: %w", id, err)
		}
		out = d
		return nil
	})
	return out, err
}

// cancelPending cancels the pending deliveries of webhook webhookID.
func (o *ops) cancelPending(ctx context.Context, q querier, orgID, webhookID string, now time.Time) error {
	_, err := q.ExecContext(ctx, `UPDATE deliveries SET status = $3, next_attempt_at = NULL, updated_at = $4
		WHERE org_id = $1 AND webhook_id = $2 AND status = $5`,
		orgID, webhookID, string(DeliveryCancelled), o.d.timeArg(now), string(DeliveryPending))
	if err != nil {
		return fmt.Errorf("cancelling deliveries of webhook %s: %w", webhookID, err)
	}
	return nil
}

// cleanText makes s storable as text on both databases (valid UTF-8, no
// NUL, which PostgreSQL refuses) and cuts it to at most limit bytes on a rune
// boundary.
func cleanText(s string, limit int) string {
	s = strings.ToValidUTF8(strings.ReplaceAll(s, "\x00", ""), "\uFFFD")
	if len(s) <= limit {
		return s
	}
	s = s[:limit]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}

// DeliveryWithAttempts reads the delivery id of orgID and its attempts (as
// ListDeliveryAttempts) from one snapshot, so that attempts_count and the
// attempts listed agree while a worker records another one.
func (db *DB) DeliveryWithAttempts(ctx context.Context, orgID, id string) (Delivery, []DeliveryAttempt, error) {
	if err := checkOrg(orgID); err != nil {
		return Delivery{}, nil, err
	}
	// SQLite in WAL mode keeps the snapshot of a transaction's first read;
	// PostgreSQL needs REPEATABLE READ for that (READ COMMITTED takes a new
	// snapshot per statement).
	opts := &sql.TxOptions{}
	if db.driver == DriverPostgres {
		opts = &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true}
	}
	tx, err := db.reader.BeginTx(ctx, opts)
	if err != nil {
		return Delivery{}, nil, fmt.Errorf("delivery %s: %w", id, err)
	}
	defer tx.Rollback() //nolint:errcheck // read-only: nothing to keep
	q := db.ops
	q.read = tx
	d, err := q.GetDelivery(ctx, orgID, id)
	if err != nil {
		return Delivery{}, nil, err
	}
	attempts, err := q.ListDeliveryAttempts(ctx, orgID, id)
	if err != nil {
		return Delivery{}, nil, err
	}
	return d, attempts, nil
}
