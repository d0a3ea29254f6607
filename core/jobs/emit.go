package jobs

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/riverqueue/river"

	"github.com/kobana/kadu/core/store"
)

// Emit records the event code about object (the resource's API JSON) for
// orgID and inserts one deliver job per webhook of the organisation that
// subscribes to it, inside tx, so the event exists exactly when the change
// it reports commits. With tx nil it runs in a transaction of its own. An
// event no webhook subscribes to costs one query and stores nothing.
func (q *Queue) Emit(ctx context.Context, tx *store.Tx, orgID, code string, object json.RawMessage) error {
	if tx == nil {
		return q.opts.Store.InTx(ctx, func(tx *store.Tx) error { return q.Emit(ctx, tx, orgID, code, object) })
	}
	ds, err := tx.EmitEvent(ctx, orgID, code, object)
	if err != nil {
		return fmt.Errorf("emitting %s: %w", code, err)
	}
	if len(ds) == 0 {
		return nil
	}
	params := make([]river.InsertManyParams, 0, len(ds))
	for _, d := range ds {
		params = append(params, river.InsertManyParams{Args: deliverArgs{OrgID: orgID, DeliveryID: d.ID, Attempt: 1}})
	}
	if _, err := q.client.InsertManyTx(ctx, tx.SQL(), params); err != nil {
		return fmt.Errorf("enqueueing deliveries of %s: %w", code, err)
	}
	return nil
}

// transition is Store.Transition plus the event the move is (docs/reference/rest.md#wire-forms:
// started, waiting_input, succeeded, failed, cancelled), emitted in the same
// transaction.
func (q *Queue) transition(ctx context.Context, orgID, id string, from []store.Status, to store.Status, mutate func(*store.Execution)) (store.Execution, error) {
	var out store.Execution
	err := q.opts.Store.InTx(ctx, func(tx *store.Tx) error {
		var err error
		if out, err = tx.Transition(ctx, orgID, id, from, to, mutate); err != nil {
			return err
		}
		return q.emitExecution(ctx, tx, out)
	})
	return out, err
}

// start is Store.StartExecution plus execution.started, in one transaction.
func (q *Queue) start(ctx context.Context, orgID, id string, maxActive int) (store.Execution, error) {
	var out store.Execution
	err := q.opts.Store.InTx(ctx, func(tx *store.Tx) error {
		var err error
		if out, err = tx.StartExecution(ctx, orgID, id, maxActive, nil); err != nil {
			return err
		}
		return q.emitExecution(ctx, tx, out)
	})
	return out, err
}

// emitExecution emits the event of e having entered its status, if that is
// an event.
func (q *Queue) emitExecution(ctx context.Context, tx *store.Tx, e store.Execution) error {
	code := store.ExecutionEvent(e.Status)
	if code == "" {
		return nil
	}
	return q.Emit(ctx, tx, e.OrgID, code, q.opts.ExecutionJSON(e))
}

// minimalExecutionJSON is the object of execution events when
// Options.ExecutionJSON is nil.
func minimalExecutionJSON(e store.Execution) json.RawMessage {
	return mustCompact(struct {
		ID     string       `json:"id"`
		Object string       `json:"object"`
		Status store.Status `json:"status"`
		TaskID string       `json:"task_id"`
	}{e.ID, "execution", e.Status, e.TaskID})
}

// minimalWebhookJSON is the object of webhook.disabled when
// Options.WebhookJSON is nil. It never holds a secret.
func minimalWebhookJSON(w store.Webhook) json.RawMessage {
	return mustCompact(struct {
		ID             string              `json:"id"`
		Object         string              `json:"object"`
		URL            string              `json:"url"`
		Status         store.WebhookStatus `json:"status"`
		DisabledReason string              `json:"disabled_reason"`
	}{w.ID, "webhook", w.URL, w.Status, w.DisabledReason})
}
