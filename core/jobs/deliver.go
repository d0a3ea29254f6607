package jobs

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/kobana/kadu/core/store"
	"github.com/kobana/kadu/core/webhook"
)

// Webhook deliveries (docs/files-webhooks-limits.md#webhooks). Emit inserts one deliverArgs job per
// delivery with Attempt 1. Each attempt is recorded; a failed one inserts
// the next attempt as a new job scheduled by webhook.Next, in the same
// transaction, until an attempt succeeds, the schedule runs out, the
// endpoint answers 410 or it has failed for webhook.DisableAfter. A replay
// (POST /webhook_deliveries/{id}/replay) is a replayArgs job: one attempt,
// outside the schedule.
//
// Delivery is at least once: a replica that dies between sending and
// recording sends again. Receivers deduplicate on webhook-id, the event id,
// which every attempt and replay of an event carries.

// deliverArgs is one scheduled attempt of a delivery.
type deliverArgs struct {
	OrgID      string `json:"org_id"`
	DeliveryID string `json:"delivery_id"`
	Attempt    int    `json:"attempt"` // 1-based position in the retry schedule
}

func (deliverArgs) Kind() string { return "webhook_deliver" }

// InsertOpts: River retries a job only when recording failed (the
// database), not when the receiver did; that has its own schedule.
func (deliverArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: queueWebhooks, MaxAttempts: 3}
}

// queueWebhooks is the River queue deliveries and replays run in.
const queueWebhooks = "webhooks"

// replayArgs is one attempt asked for by an admin.
type replayArgs struct {
	OrgID      string `json:"org_id"`
	DeliveryID string `json:"delivery_id"`
}

func (replayArgs) Kind() string { return "webhook_replay" }

func (replayArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: queueWebhooks, MaxAttempts: 3}
}

type deliverWorker struct {
	river.WorkerDefaults[deliverArgs]
	q *Queue
}

// Timeout: see Queue.deliveryTimeout.
func (w *deliverWorker) Timeout(*river.Job[deliverArgs]) time.Duration { return w.q.deliveryTimeout() }

func (w *deliverWorker) Work(ctx context.Context, job *river.Job[deliverArgs]) error {
	if w.q.opts.beforeDeliver != nil {
		w.q.opts.beforeDeliver(ctx, job)
	}
	return w.q.deliver(ctx, job.Args.OrgID, job.Args.DeliveryID, job.Args.Attempt, false)
}

type replayWorker struct {
	river.WorkerDefaults[replayArgs]
	q *Queue
}

// Timeout: see Queue.deliveryTimeout.
func (w *replayWorker) Timeout(*river.Job[replayArgs]) time.Duration { return w.q.deliveryTimeout() }

func (w *replayWorker) Work(ctx context.Context, job *river.Job[replayArgs]) error {
	return w.q.deliver(ctx, job.Args.OrgID, job.Args.DeliveryID, 0, true)
}

// deliveryTimeout bounds a delivery or replay job: one attempt
// (WebhookTimeout) and the store work around it (TimeoutGrace). River's
// rescuer retries the job of a replica that died RescueAfter after that
// (RescueStuckJobsAfter in New), within its own 30 s round: the delivery is
// sent again, once more at most, never lost.
func (q *Queue) deliveryTimeout() time.Duration {
	return cmp.Or(q.opts.WebhookTimeout, webhook.DefaultTimeout) + q.opts.TimeoutGrace
}

// EnqueueReplay inserts, inside tx, the job that makes one more attempt of
// delivery id to its webhook's current URL with its current secrets. It
// does not touch the delivery's retry schedule.
func (q *Queue) EnqueueReplay(ctx context.Context, tx *store.Tx, orgID, deliveryID string) error {
	if _, err := q.client.InsertTx(ctx, tx.SQL(), replayArgs{OrgID: orgID, DeliveryID: deliveryID}, nil); err != nil {
		return fmt.Errorf("enqueueing replay of delivery %s: %w", deliveryID, err)
	}
	return nil
}

// deliver makes attempt number attempt of delivery id (replay: one attempt
// outside the schedule) and records what happened.
func (q *Queue) deliver(ctx context.Context, orgID, id string, attempt int, replay bool) error {
	st := q.opts.Store
	d, err := st.GetDelivery(ctx, orgID, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil // purged meanwhile
	}
	if err != nil {
		return err
	}
	if !replay {
		if d.Status != store.DeliveryPending {
			return nil // settled or cancelled meanwhile
		}
		// River runs a job again if its completion was lost after settle
		// committed; that attempt is in the log, and its successor already
		// scheduled.
		made, err := scheduledAttempts(ctx, st, orgID, id)
		if err != nil {
			return err
		}
		if made >= attempt {
			return nil
		}
	}
	hook, err := st.GetWebhook(ctx, orgID, d.WebhookID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	if err != nil || hook.Status != store.WebhookEnabled {
		// Deleted or disabled since the event: nothing is sent.
		if replay {
			return nil
		}
		_, err := st.SetDeliveryStatus(ctx, orgID, id, []store.DeliveryStatus{store.DeliveryPending}, store.DeliveryCancelled, nil)
		return ignoreConflict(err)
	}
	evt, err := st.GetEvent(ctx, orgID, d.EventID)
	if err != nil {
		return err
	}
	body, err := eventBody(evt, hook.ID)
	if err != nil {
		return fmt.Errorf("delivery %s: %w", id, err)
	}
	now := q.opts.Now()
	res := q.hooks.Send(ctx, webhook.Request{URL: hook.URL, MsgID: evt.ID, Timestamp: now, Body: body, Secrets: hook.Secrets(now)})
	if ctx.Err() != nil {
		return ctx.Err() // this replica is stopping: the attempt is made again
	}
	if err := st.InTx(ctx, func(tx *store.Tx) error {
		return q.settle(ctx, tx, d, hook, attempt, replay, now, res)
	}); err != nil {
		return err
	}
	q.observeDelivery(ctx, d, evt, res, replay)
	return nil
}

// scheduledAttempts counts the attempts of delivery id made on its
// schedule (replays aside).
func scheduledAttempts(ctx context.Context, st *store.DB, orgID, id string) (int, error) {
	as, err := st.ListDeliveryAttempts(ctx, orgID, id)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, a := range as {
		if !a.Replay {
			n++
		}
	}
	return n, nil
}

// settle records the attempt and decides what follows it.
func (q *Queue) settle(ctx context.Context, tx *store.Tx, d store.Delivery, hook store.Webhook, attempt int, replay bool, now time.Time, res webhook.Result) error {
	org := d.OrgID
	a := store.DeliveryAttempt{DeliveryID: d.ID, AttemptedAt: now, URL: hook.URL, ResponseCode: res.StatusCode,
		DurationMS: res.Duration.Milliseconds(), ResponseBody: res.Body, Replay: replay}
	if res.Err != nil {
		a.Error = res.Err.Error() // never holds the URL's path or a secret (webhook.Result)
	}
	cur, err := tx.RecordDeliveryAttempt(ctx, org, a)
	if err != nil {
		return err
	}
	anyStatus := []store.DeliveryStatus{store.DeliveryPending, store.DeliveryFailed, store.DeliveryCancelled}
	if res.OK() {
		if cur.Status != store.DeliverySucceeded {
			if _, err := tx.SetDeliveryStatus(ctx, org, d.ID, anyStatus, store.DeliverySucceeded, nil); err != nil {
				return err
			}
		}
		return ignoreConflict(tx.ClearWebhookFailing(ctx, org, hook.ID))
	}
	if replay || cur.Status != store.DeliveryPending {
		return nil // a failed replay only adds to the log
	}
	pending := []store.DeliveryStatus{store.DeliveryPending}
	dec := webhook.Next(attempt, res)
	if dec.Disable {
		if _, err := tx.SetDeliveryStatus(ctx, org, d.ID, pending, store.DeliveryFailed, nil); err != nil {
			return err
		}
		return q.disableWebhook(ctx, tx, hook, "The endpoint answered 410 Gone: it asked for no more deliveries.")
	}
	failing, err := tx.MarkWebhookFailing(ctx, org, hook.ID, now)
	if err != nil {
		return ignoreConflict(err)
	}
	if since := *failing.FailingSince; now.Sub(since) >= webhook.DisableAfter {
		if _, err := tx.SetDeliveryStatus(ctx, org, d.ID, pending, store.DeliveryFailed, nil); err != nil {
			return err
		}
		return q.disableWebhook(ctx, tx, failing, fmt.Sprintf("Every delivery failed for %d days, since %s.",
			int(webhook.DisableAfter/(24*time.Hour)), since.Format(time.RFC3339)))
	}
	if !dec.Retry {
		_, err := tx.SetDeliveryStatus(ctx, org, d.ID, pending, store.DeliveryFailed, nil)
		return err
	}
	next := now.Add(dec.Delay)
	if _, err := tx.SetDeliveryStatus(ctx, org, d.ID, pending, store.DeliveryPending, &next); err != nil {
		return err
	}
	_, err = q.client.InsertTx(ctx, tx.SQL(), deliverArgs{OrgID: org, DeliveryID: d.ID, Attempt: attempt + 1},
		&river.InsertOpts{ScheduledAt: next})
	if err != nil {
		return fmt.Errorf("scheduling attempt %d of delivery %s: %w", attempt+1, d.ID, err)
	}
	return nil
}

// disableWebhook disables hook with reason, cancels its pending deliveries
// and emits webhook.disabled to the organisation's other webhooks that
// subscribe to it. A webhook someone else disabled first is left alone.
func (q *Queue) disableWebhook(ctx context.Context, tx *store.Tx, hook store.Webhook, reason string) error {
	w, err := tx.DisableWebhook(ctx, hook.OrgID, hook.ID, reason)
	if err != nil {
		return ignoreConflict(err)
	}
	q.log.WarnContext(ctx, "webhook disabled", slog.Any("webhook", w), slog.String("reason", reason))
	return q.Emit(ctx, tx, w.OrgID, store.EventWebhookDisabled, q.opts.WebhookJSON(w))
}

// eventBody is what a delivery sends and signs (docs/reference/rest.md#wire-forms):
// {"id","event_code","created_at","object","webhook":{"id"}}, compact.
func eventBody(evt store.Event, webhookID string) ([]byte, error) {
	type webhookRef struct {
		ID string `json:"id"`
	}
	var obj bytes.Buffer
	if err := json.Compact(&obj, evt.Object); err != nil {
		return nil, fmt.Errorf("event %s: stored object: %w", evt.ID, err)
	}
	return compact(struct {
		ID        string          `json:"id"`
		EventCode string          `json:"event_code"`
		CreatedAt string          `json:"created_at"`
		Object    json.RawMessage `json:"object"`
		Webhook   webhookRef      `json:"webhook"`
	}{evt.ID, evt.Code, evt.CreatedAt.UTC().Format(timeLayout), obj.Bytes(), webhookRef{webhookID}})
}

// timeLayout is how the API writes times (RFC 3339, UTC, microseconds).
const timeLayout = "2006-01-02T15:04:05.000000Z07:00"

// compact marshals v without HTML escaping (receivers get the text as the
// API would show it) and without a final newline.
func compact(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// mustCompact is compact for values of plain strings, which cannot fail.
func mustCompact(v any) json.RawMessage {
	b, err := compact(v)
	if err != nil {
		panic(fmt.Sprintf("jobs: encoding %T: %v", v, err))
	}
	return b
}
