package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Event codes (docs/reference/rest.md#wire-forms): what webhooks subscribe to.
const (
	EventExecutionStarted      = "execution.started"
	EventExecutionWaitingInput = "execution.waiting_input"
	EventExecutionSucceeded    = "execution.succeeded"
	EventExecutionFailed       = "execution.failed"
	EventExecutionCancelled    = "execution.cancelled"
	EventExecutionExpired      = "execution.expired"
	EventFileReady             = "file.ready"
	EventWebhookDisabled       = "webhook.disabled"
)

// EventCodes returns every event code, in the order of docs/reference/rest.md#wire-forms. The slice
// is a fresh copy.
func EventCodes() []string {
	return []string{EventExecutionStarted, EventExecutionWaitingInput, EventExecutionSucceeded,
		EventExecutionFailed, EventExecutionCancelled, EventExecutionExpired, EventFileReady, EventWebhookDisabled}
}

// ValidEventCode reports whether code is one of EventCodes.
func ValidEventCode(code string) bool { return slices.Contains(EventCodes(), code) }

// ExecutionEvent returns the event code of an execution entering s, or ""
// when entering s is not an event (queued, cancelling).
func ExecutionEvent(s Status) string {
	switch s {
	case StatusRunning:
		return EventExecutionStarted
	case StatusWaitingInput:
		return EventExecutionWaitingInput
	case StatusSucceeded:
		return EventExecutionSucceeded
	case StatusFailed:
		return EventExecutionFailed
	case StatusCancelled:
		return EventExecutionCancelled
	case StatusExpired:
		return EventExecutionExpired
	}
	return ""
}

// Event is something that happened to a resource of an organisation, as
// its webhooks receive it. Object is the resource's API JSON at that
// moment; it may hold untrusted data (an execution's output).
type Event struct {
	ID        string
	OrgID     string
	Code      string
	Object    json.RawMessage
	CreatedAt time.Time
}

const eventColumns = `id, org_id, event_code, object, created_at`

// EmitEvent records the event code about object for orgID and one pending
// delivery of it for each enabled webhook of orgID that subscribes to code,
// and returns those deliveries, due now. With no such webhook it stores
// nothing and returns none: nobody would ever read the event.
//
// Call it on a Tx to record the event in the same transaction as the change
// it reports, and to insert the jobs that deliver it there too.
func (o *ops) EmitEvent(ctx context.Context, orgID, code string, object json.RawMessage) ([]Delivery, error) {
	if err := checkOrg(orgID); err != nil {
		return nil, err
	}
	if !ValidEventCode(code) {
		return nil, fmt.Errorf("store: EmitEvent: unknown event code %q", code)
	}
	obj, err := rawJSONArg("object", object)
	if err != nil {
		return nil, err
	}
	if obj == nil {
		return nil, errors.New("store: EmitEvent: no object")
	}
	var out []Delivery
	err = o.inTx(ctx, func(q querier) error {
		hooks, err := subscribers(ctx, q, orgID, code)
		if err != nil || len(hooks) == 0 {
			return err
		}
		now := o.clock()
		evt := NewID(PrefixEvent)
		_, err = q.ExecContext(ctx, `INSERT INTO events (id, org_id, event_code, object, created_at)
			VALUES ($1, $2, $3, $4, $5)`, evt, orgID, code, obj, o.d.timeArg(now))
		if err != nil {
			return fmt.Errorf("recording event %s: %w", code, err)
		}
		for _, w := range hooks {
			d := Delivery{
				ID:            NewID(PrefixDelivery),
				OrgID:         orgID,
				WebhookID:     w.ID,
				EventID:       evt,
				EventCode:     code,
				Status:        DeliveryPending,
				NextAttemptAt: new(now),
				CreatedAt:     now,
				UpdatedAt:     now,
			}
			_, err := q.ExecContext(ctx, `INSERT INTO deliveries (id, org_id, webhook_id, event_id, event_code, status,
				attempts_count, next_attempt_at, created_at, updated_at)
				VALUES ($1, $2, $3, $4, $5, $6, 0, $7, $7, $7)`,
				d.ID, orgID, d.WebhookID, evt, code, string(d.Status), o.d.timeArg(now))
			if err != nil {
				return fmt.Errorf("recording delivery of %s to webhook %s: %w", code, w.ID, err)
			}
			out = append(out, d)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// GetEvent returns the event id of orgID.
func (o *ops) GetEvent(ctx context.Context, orgID, id string) (Event, error) {
	if err := checkOrg(orgID); err != nil {
		return Event{}, err
	}
	var e Event
	err := o.read.QueryRowContext(ctx, `SELECT `+eventColumns+` FROM events WHERE org_id = $1 AND id = $2`, orgID, id).
		Scan(&e.ID, &e.OrgID, &e.Code, rawJSONCol{&e.Object}, timeCol{&e.CreatedAt})
	if errors.Is(err, sql.ErrNoRows) {
		return Event{}, fmt.Errorf("event %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return Event{}, fmt.Errorf("getting event %s: %w", id, err)
	}
	return e, nil
}
