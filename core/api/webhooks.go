package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/kobana/kadu/core/store"
	"github.com/kobana/kadu/core/webhook"
)

// Webhook field limits.
const (
	maxWebhookDescriptionLen = 500

	// Rotation overlap (docs/reference/rest.md#routes): how long the previous secret keeps
	// signing deliveries after POST /webhooks/{id}/rotate_secret.
	defaultOverlapSeconds = 86400
	maxOverlapSeconds     = 7 * 86400
)

var (
	createWebhookFields = []string{"url", "description", "event_codes"}
	patchWebhookFields  = []string{"url", "description", "event_codes", "enabled"}
)

// webhookHandlers are the handlers of the /webhooks and /webhook_deliveries
// routes. The table gives all of them the admin role and the admin scope: a
// webhook sends the organisation's data out of Kadu.
func (a *API) webhookHandlers() map[string]handler {
	return map[string]handler{
		"GET /webhooks":                        a.listWebhooks,
		"POST /webhooks":                       a.createWebhook,
		"GET /webhooks/{id}":                   a.getWebhook,
		"PATCH /webhooks/{id}":                 a.updateWebhook,
		"DELETE /webhooks/{id}":                a.deleteWebhook,
		"POST /webhooks/{id}/rotate_secret":    a.rotateWebhookSecret,
		"GET /webhook_deliveries":              a.listDeliveries,
		"GET /webhook_deliveries/{id}":         a.getDelivery,
		"POST /webhook_deliveries/{id}/replay": a.replayDelivery,
	}
}

// webhookJSON is a webhook on the wire. The secret is not part of it: only
// the create and rotate answers carry it (webhookSecretJSON).
type webhookJSON struct {
	ID                      string              `json:"id"`
	URL                     string              `json:"url"`
	Description             string              `json:"description"`
	EventCodes              []string            `json:"event_codes"`
	Status                  store.WebhookStatus `json:"status"`
	DisabledReason          *string             `json:"disabled_reason"`
	PreviousSecretExpiresAt *string             `json:"previous_secret_expires_at"`
	CreatedAt               string              `json:"created_at"`
}

// webhookSecretJSON answers POST /webhooks and rotate_secret: the one time
// the secret is shown.
type webhookSecretJSON struct {
	webhookJSON
	Secret string `json:"secret"`
}

func renderWebhook(w store.Webhook) webhookJSON {
	return webhookJSON{
		ID:                      w.ID,
		URL:                     w.URL,
		Description:             w.Description,
		EventCodes:              nonNil(w.EventCodes),
		Status:                  w.Status,
		DisabledReason:          strPtr(w.DisabledReason),
		PreviousSecretExpiresAt: tsPtr(w.PreviousSecretExpiresAt),
		CreatedAt:               ts(w.CreatedAt),
	}
}

// WebhookJSON is w as GET /webhooks/{id} answers it (no secret), compact:
// the object of a webhook.disabled event (core/jobs).
func WebhookJSON(w store.Webhook) json.RawMessage {
	return bytes.TrimSuffix(encode(renderWebhook(w)), []byte("\n"))
}

type deliveryJSON struct {
	ID            string               `json:"id"`
	WebhookID     string               `json:"webhook_id"`
	EventID       string               `json:"event_id"`
	EventCode     string               `json:"event_code"`
	Status        store.DeliveryStatus `json:"status"`
	AttemptsCount int                  `json:"attempts_count"`
	NextAttemptAt *string              `json:"next_attempt_at"`
	LastAttempt   *lastAttemptJSON     `json:"last_attempt"`
}

type lastAttemptJSON struct {
	At           string  `json:"at"`
	ResponseCode *int    `json:"response_code"` // null: no HTTP response
	DurationMS   int64   `json:"duration_ms"`
	Error        *string `json:"error"`
}

// deliveryDetailJSON is GET /webhook_deliveries/{id}: the delivery and its
// attempts, oldest first.
type deliveryDetailJSON struct {
	deliveryJSON
	Attempts []attemptJSON `json:"attempts"`
}

// attemptJSON is one attempt. ResponseBody is the receiver's answer,
// truncated: untrusted data.
type attemptJSON struct {
	ID           string  `json:"id"`
	At           string  `json:"at"`
	URL          string  `json:"url"`
	ResponseCode *int    `json:"response_code"`
	DurationMS   int64   `json:"duration_ms"`
	Error        *string `json:"error"`
	ResponseBody *string `json:"response_body"`
	Replay       bool    `json:"replay"`
}

func intPtr(n int) *int {
	if n == 0 {
		return nil
	}
	return &n
}

func renderDelivery(d store.Delivery) deliveryJSON {
	out := deliveryJSON{
		ID:            d.ID,
		WebhookID:     d.WebhookID,
		EventID:       d.EventID,
		EventCode:     d.EventCode,
		Status:        d.Status,
		AttemptsCount: d.AttemptsCount,
		NextAttemptAt: tsPtr(d.NextAttemptAt),
	}
	if la := d.LastAttempt; la != nil {
		out.LastAttempt = &lastAttemptJSON{At: ts(la.At), ResponseCode: intPtr(la.ResponseCode),
			DurationMS: la.DurationMS, Error: strPtr(la.Error)}
	}
	return out
}

func renderAttempt(at store.DeliveryAttempt) attemptJSON {
	return attemptJSON{
		ID:           at.ID,
		At:           ts(at.AttemptedAt),
		URL:          at.URL,
		ResponseCode: intPtr(at.ResponseCode),
		DurationMS:   at.DurationMS,
		Error:        strPtr(at.Error),
		ResponseBody: strPtr(at.ResponseBody),
		Replay:       at.Replay,
	}
}

func (a *API) listWebhooks(c *call) (*reply, error) {
	p, err := a.parsePage(c.echo.QueryParams(), "webhooks\x00"+c.org.id)
	if err != nil {
		return nil, err
	}
	pg, err := a.db.ListWebhooks(c.ctx(), c.org.id, store.ListParams{Limit: p.limit, Before: p.after})
	if err != nil {
		return nil, err
	}
	items := make([]webhookJSON, 0, len(pg.Items))
	last := ""
	for _, w := range pg.Items {
		items = append(items, renderWebhook(w))
		last = w.ID
	}
	return ok(makeList(a, p, items, pg.More, last))
}

func (a *API) getWebhook(c *call) (*reply, error) {
	id := c.param("id")
	if !store.ValidID(store.PrefixWebhook, id) {
		return nil, errNotFound("Webhook " + id)
	}
	w, err := a.db.GetWebhook(c.ctx(), c.org.id, id)
	if err != nil {
		return nil, storeErr(err, "Webhook "+id)
	}
	return ok(renderWebhook(w))
}

func (a *API) createWebhook(c *call) (*reply, error) {
	o := c.body
	o.allow(createWebhookFields...)
	var w store.Webhook
	if o.require("url", "Give the https address that should receive the events, e.g. https://hooks.example.com/kadu.") {
		w.URL, _ = a.webhookURL(o)
	}
	w.Description, _ = o.str("description", maxWebhookDescriptionLen, false)
	if o.require("event_codes", "List the events to receive, e.g. [\"execution.succeeded\", \"execution.failed\"].") {
		w.EventCodes, _ = eventCodes(o)
	}
	if err := o.err(); err != nil {
		return nil, err
	}
	secret, err := webhook.NewSecret()
	if err != nil {
		return nil, err
	}
	w.Secret = secret
	limit := c.org.plan.Webhooks
	w, err = a.db.CreateWebhook(c.ctx(), c.org.id, w, limit)
	if errors.Is(err, store.ErrWebhookLimit) {
		e := problem(http.StatusPaymentRequired, "plan_limit_exceeded", "Plan limit exceeded",
			fmt.Sprintf("Your organisation's plan (%s) allows %d webhooks, and it has that many.", c.org.planName, limit),
			"Do not retry: delete a webhook you no longer need (kadu_webhooks_delete), or ask for a plan with more webhooks.")
		e.Problems[0].Extra = map[string]any{"limit": limit, "plan": c.org.planName}
		return nil, e
	}
	if err != nil {
		return nil, err
	}
	return &reply{status: http.StatusCreated, body: webhookSecretJSON{renderWebhook(w), w.Secret}, location: location(w.ID)}, nil
}

func (a *API) updateWebhook(c *call) (*reply, error) {
	id := c.param("id")
	if !store.ValidID(store.PrefixWebhook, id) {
		return nil, errNotFound("Webhook " + id)
	}
	o := c.body
	o.allow(patchWebhookFields...)
	var patch store.WebhookPatch
	changed := len(o.m) > 0
	if o.has("url") {
		if s, ok := a.webhookURL(o); ok {
			patch.URL = &s
		}
	}
	if s, ok := o.str("description", maxWebhookDescriptionLen, false); ok {
		patch.Description = &s
	}
	if o.has("event_codes") {
		if codes, ok := eventCodes(o); ok {
			patch.EventCodes = &codes
		}
	}
	if b, ok := boolean(o, "enabled"); ok {
		patch.Enabled = &b
	}
	if err := o.err(); err != nil {
		return nil, err
	}
	if !changed {
		return nil, problem(http.StatusUnprocessableEntity, "validation_error", "Nothing to change",
			"The body sets no field.", "Send at least one of: "+strings.Join(patchWebhookFields, ", ")+".")
	}
	w, err := a.db.UpdateWebhook(c.ctx(), c.org.id, id, patch)
	if err != nil {
		return nil, storeErr(err, "Webhook "+id)
	}
	return ok(renderWebhook(w))
}

func (a *API) deleteWebhook(c *call) (*reply, error) {
	id := c.param("id")
	if !store.ValidID(store.PrefixWebhook, id) {
		return nil, errNotFound("Webhook " + id)
	}
	c.body.allow()
	if err := c.body.err(); err != nil {
		return nil, err
	}
	if err := a.db.SoftDeleteWebhook(c.ctx(), c.org.id, id); err != nil {
		return nil, storeErr(err, "Webhook "+id)
	}
	return ok(deletedJSON{ID: id, Deleted: true})
}

// rotateWebhookSecret makes a new secret; the old one keeps signing
// deliveries (next to the new one) for overlap_seconds, so that the
// receiver can switch without refusing any.
func (a *API) rotateWebhookSecret(c *call) (*reply, error) {
	id := c.param("id")
	if !store.ValidID(store.PrefixWebhook, id) {
		return nil, errNotFound("Webhook " + id)
	}
	o := c.body
	o.allow("overlap_seconds")
	overlap := int64(defaultOverlapSeconds)
	if n, ok := o.integer("overlap_seconds", 0, maxOverlapSeconds); ok {
		overlap = n
	}
	if err := o.err(); err != nil {
		return nil, err
	}
	secret, err := webhook.NewSecret()
	if err != nil {
		return nil, err
	}
	var until *time.Time
	if overlap > 0 {
		t := a.now().Add(time.Duration(overlap) * time.Second)
		until = &t
	}
	w, err := a.db.RotateWebhookSecret(c.ctx(), c.org.id, id, secret, until)
	if err != nil {
		return nil, storeErr(err, "Webhook "+id)
	}
	return ok(webhookSecretJSON{renderWebhook(w), w.Secret})
}

func (a *API) listDeliveries(c *call) (*reply, error) {
	q := c.echo.QueryParams()
	var f store.DeliveryFilter
	var v validation
	if s := q.Get("webhook_id"); s != "" {
		if !store.ValidID(store.PrefixWebhook, s) {
			v.add("webhook_id", fmt.Sprintf("webhook_id is %q, not a webhook id (whk_ followed by 32 hex digits).", s),
				"Use an id from kadu_webhooks_list, or leave webhook_id out.")
		}
		f.WebhookID = s
	}
	if s := q.Get("event_code"); s != "" {
		if !store.ValidEventCode(s) {
			v.add("event_code", fmt.Sprintf("event_code is %q, not an event code.", s),
				"Use one of: "+strings.Join(store.EventCodes(), ", ")+".")
		}
		f.EventCode = s
	}
	if s := q.Get("status"); s != "" {
		f.Status = store.DeliveryStatus(s)
		if !f.Status.Valid() {
			names := make([]string, 0, 4)
			for _, st := range store.DeliveryStatuses() {
				names = append(names, string(st))
			}
			v.add("status", fmt.Sprintf("status is %q, not a delivery status.", s), "Use one of: "+strings.Join(names, ", ")+".")
		}
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	p, err := a.parsePage(q, fmt.Sprintf("deliveries\x00%s\x00%s\x00%s\x00%s", c.org.id, f.WebhookID, f.EventCode, f.Status))
	if err != nil {
		return nil, err
	}
	pg, err := a.db.ListDeliveries(c.ctx(), c.org.id, f, store.ListParams{Limit: p.limit, Before: p.after})
	if err != nil {
		return nil, err
	}
	items := make([]deliveryJSON, 0, len(pg.Items))
	last := ""
	for _, d := range pg.Items {
		items = append(items, renderDelivery(d))
		last = d.ID
	}
	return ok(makeList(a, p, items, pg.More, last))
}

func (a *API) getDelivery(c *call) (*reply, error) {
	id := c.param("id")
	if !store.ValidID(store.PrefixDelivery, id) {
		return nil, errNotFound("Delivery " + id)
	}
	d, attempts, err := a.db.DeliveryWithAttempts(c.ctx(), c.org.id, id)
	if err != nil {
		return nil, storeErr(err, "Delivery "+id)
	}
	out := deliveryDetailJSON{deliveryJSON: renderDelivery(d), Attempts: make([]attemptJSON, 0, len(attempts))}
	for _, at := range attempts {
		out.Attempts = append(out.Attempts, renderAttempt(at))
	}
	return ok(out)
}

// replayDelivery enqueues one more attempt of a delivery, whatever its
// status, to its webhook's current URL with the current secret; 202. It
// does not restart the retry schedule. The webhook must exist and be
// enabled.
func (a *API) replayDelivery(c *call) (*reply, error) {
	id := c.param("id")
	if !store.ValidID(store.PrefixDelivery, id) {
		return nil, errNotFound("Delivery " + id)
	}
	c.body.allow()
	if err := c.body.err(); err != nil {
		return nil, err
	}
	ctx := c.ctx()
	var d store.Delivery
	err := a.db.InTx(ctx, func(tx *store.Tx) error {
		var err error
		if d, err = tx.GetDelivery(ctx, c.org.id, id); err != nil {
			return storeErr(err, "Delivery "+id)
		}
		w, err := tx.GetWebhook(ctx, c.org.id, d.WebhookID)
		if errors.Is(err, store.ErrNotFound) {
			return errInvalidState(fmt.Sprintf("Webhook %s of delivery %s was deleted: there is nowhere to send it.", d.WebhookID, id),
				"Nothing to do; create a new webhook to receive future events.")
		}
		if err != nil {
			return err
		}
		if w.Status != store.WebhookEnabled {
			return errInvalidState(fmt.Sprintf("Webhook %s is disabled, so nothing is sent to it.", w.ID),
				"Enable it first (kadu_webhooks_update with \"enabled\": true), then replay.")
		}
		return a.queue.EnqueueReplay(ctx, tx, c.org.id, id)
	})
	if err != nil {
		return nil, err
	}
	return &reply{status: http.StatusAccepted, body: renderDelivery(d), location: location(id)}, nil
}

// webhookURL reads url and applies the endpoint policy (webhook.ValidateURL).
func (a *API) webhookURL(o *object) (string, bool) {
	s, ok := o.str("url", webhook.MaxURLLength, true)
	if !ok {
		return "", false
	}
	if err := webhook.ValidateURL(s, a.webhookAllowHosts); err != nil {
		detail := err.Error()
		if ue, isURL := errors.AsType[*webhook.URLError](err); isURL {
			detail = ue.Problem
		}
		o.v.add(o.prefix+"url", detail,
			"Use an https address of your receiver on the public internet, e.g. https://hooks.example.com/kadu.")
		return "", false
	}
	return s, true
}

// eventCodes reads event_codes: a non-empty list of distinct codes of
// docs/reference/rest.md#wire-forms.
func eventCodes(o *object) ([]string, bool) {
	all := store.EventCodes()
	codes, ok := o.strings("event_codes", len(all), func(s string) string {
		if !store.ValidEventCode(s) {
			return fmt.Sprintf("is %q, not an event code; want one of: %s.", s, strings.Join(all, ", "))
		}
		return ""
	})
	if !ok {
		return nil, false
	}
	if len(codes) == 0 {
		o.fail("event_codes", "is empty.", "List at least one event, e.g. [\"execution.succeeded\"].")
		return nil, false
	}
	return codes, true
}

// boolean returns the boolean member name. ok is false when it is absent
// (not a problem) or not a boolean (a problem recorded).
func boolean(o *object, name string) (b, ok bool) {
	v, present := o.m[name]
	if !present {
		return false, false
	}
	if json.Unmarshal(v, &b) != nil || string(v) == "null" {
		o.fail(name, "must be true or false.", "Send a JSON boolean.")
		return false, false
	}
	return b, true
}
