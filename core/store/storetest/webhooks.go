package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kobana/kadu/core/store"
)

// webhookTests are the tests of webhooks, events and deliveries (docs/files-webhooks-limits.md#webhooks).
var webhookTests = []suiteTest{
	{"WebhookCRUD", testWebhookCRUD},
	{"WebhookLimit", testWebhookLimit},
	{"WebhookLimitConcurrent", testWebhookLimitConcurrent},
	{"WebhookPagination", testWebhookPagination},
	{"WebhookRotateSecret", testWebhookRotateSecret},
	{"WebhookSoftDeleteCancels", testWebhookSoftDeleteCancels},
	{"WebhookDisable", testWebhookDisable},
	{"WebhookFailing", testWebhookFailing},
	{"EmitEvent", testEmitEvent},
	{"EmitEventInTx", testEmitEventInTx},
	{"DeliveryAttempts", testDeliveryAttempts},
	{"DeliveryStatus", testDeliveryStatus},
	{"DeliveryListFilters", testDeliveryListFilters},
	{"WebhookOrgIsolation", testWebhookOrgIsolation},
	{"WebhookPurge", testWebhookPurge},
}

// Secrets of the tests: the store takes them as opaque text.
const (
	secretA = "whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="
	secretB = "whsec_BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB="
)

// newWebhook creates an enabled webhook of org subscribed to codes.
func newWebhook(t *testing.T, db *store.DB, org string, codes ...string) store.Webhook {
	t.Helper()
	w, err := db.CreateWebhook(t.Context(), org, store.Webhook{
		URL: "https://hooks.example.com/" + strings.Join(codes, "+"), Description: "test", EventCodes: codes, Secret: secretA,
	}, -1)
	if err != nil {
		t.Fatalf("CreateWebhook: %v", err)
	}
	return w
}

// emit emits code with a small object and returns its deliveries.
func emit(t *testing.T, db *store.DB, org, code string) []store.Delivery {
	t.Helper()
	ds, err := db.EmitEvent(t.Context(), org, code, json.RawMessage(`{"id":"exe_1","status":"running"}`))
	if err != nil {
		t.Fatalf("EmitEvent(%s): %v", code, err)
	}
	return ds
}

func deliveryID(d store.Delivery) string { return d.ID }
func webhookID(w store.Webhook) string   { return w.ID }

func testWebhookCRUD(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org := newOrg(t, db)
	in := store.Webhook{
		ID: "whk_ignored", Status: store.WebhookDisabled, // ignored: the store sets them
		URL: "https://hooks.example.com/kadu", Description: "ERP", Secret: secretA,
		EventCodes: []string{store.EventExecutionSucceeded, store.EventExecutionFailed},
	}
	w, err := db.CreateWebhook(ctx, org, in, 5)
	wantOK(t, "CreateWebhook", err)
	if !store.ValidID(store.PrefixWebhook, w.ID) || w.OrgID != org || w.Status != store.WebhookEnabled ||
		w.Secret != secretA || w.PreviousSecret != "" || w.PreviousSecretExpiresAt != nil || w.FailingSince != nil ||
		w.DisabledReason != "" || !slices.Equal(w.EventCodes, in.EventCodes) {
		t.Errorf("CreateWebhook = %+v", w)
	}
	got, err := db.GetWebhook(ctx, org, w.ID)
	wantOK(t, "GetWebhook", err)
	sameJSON(t, "GetWebhook", got, w)
	if n, err := db.CountWebhooks(ctx, org); err != nil || n != 1 {
		t.Errorf("CountWebhooks = %d, %v; want 1", n, err)
	}

	url, codes, off := "https://other.example.com/in", []string{store.EventWebhookDisabled}, false
	upd, err := db.UpdateWebhook(ctx, org, w.ID, store.WebhookPatch{URL: &url, EventCodes: &codes, Enabled: &off})
	wantOK(t, "UpdateWebhook", err)
	if upd.URL != url || upd.Description != "ERP" || !slices.Equal(upd.EventCodes, codes) ||
		upd.Status != store.WebhookDisabled || upd.DisabledReason != store.ReasonDisabledByUser || upd.Secret != secretA ||
		upd.UpdatedAt.Before(w.UpdatedAt) {
		t.Errorf("UpdateWebhook = %+v", upd)
	}
	got, err = db.GetWebhook(ctx, org, w.ID)
	wantOK(t, "GetWebhook after update", err)
	sameJSON(t, "GetWebhook after update", got, upd)

	// Re-enabling forgets why it was disabled and since when it was failing.
	_, err = db.MarkWebhookFailing(ctx, org, w.ID, time.Now())
	wantOK(t, "MarkWebhookFailing", err)
	on := true
	upd, err = db.UpdateWebhook(ctx, org, w.ID, store.WebhookPatch{Enabled: &on})
	wantOK(t, "UpdateWebhook enable", err)
	if upd.Status != store.WebhookEnabled || upd.DisabledReason != "" || upd.FailingSince != nil {
		t.Errorf("re-enabled webhook = %+v", upd)
	}

	_, err = db.UpdateWebhook(ctx, org, "whk_missing", store.WebhookPatch{URL: &url})
	wantErr(t, "UpdateWebhook unknown", err, store.ErrNotFound)
	_, err = db.CreateWebhook(ctx, org, store.Webhook{URL: url, EventCodes: codes}, -1)
	if err == nil {
		t.Errorf("CreateWebhook without a secret: no error")
	}
}

func testWebhookLimit(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org := newOrg(t, db)
	mk := func(limit int) error {
		_, err := db.CreateWebhook(ctx, org, store.Webhook{URL: "https://h.example.com", EventCodes: []string{store.EventFileReady}, Secret: secretA}, limit)
		return err
	}
	wantErr(t, "a plan with no webhooks", mk(0), store.ErrWebhookLimit)
	wantOK(t, "first of 2", mk(2))
	wantOK(t, "second of 2", mk(2))
	wantErr(t, "third of 2", mk(2), store.ErrWebhookLimit)
	page, err := db.ListWebhooks(ctx, org, store.ListParams{})
	wantOK(t, "ListWebhooks", err)
	if len(page.Items) != 2 {
		t.Fatalf("the refused creation stored a webhook: %d webhooks", len(page.Items))
	}
	// A deleted webhook frees its place; a disabled one does not.
	off := false
	_, err = db.UpdateWebhook(ctx, org, page.Items[0].ID, store.WebhookPatch{Enabled: &off})
	wantOK(t, "UpdateWebhook", err)
	wantErr(t, "with one disabled", mk(2), store.ErrWebhookLimit)
	wantOK(t, "SoftDeleteWebhook", db.SoftDeleteWebhook(ctx, org, page.Items[1].ID))
	wantOK(t, "after a delete", mk(2))
	wantOK(t, "no limit", mk(-1))
	wantErr(t, "unprovisioned organisation", func() error {
		_, err := db.CreateWebhook(ctx, "org_unknown", store.Webhook{URL: "https://h.example.com", Secret: secretA}, 5)
		return err
	}(), store.ErrNotFound)
}

// testWebhookLimitConcurrent: creations racing for the last places of the
// plan never pass the limit.
func testWebhookLimitConcurrent(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org := newOrg(t, db)
	var created, refused atomic.Int32
	concurrently(8, func(i int) {
		_, err := db.CreateWebhook(ctx, org, store.Webhook{URL: fmt.Sprintf("https://h%d.example.com", i), Secret: secretA}, 3)
		switch {
		case err == nil:
			created.Add(1)
		case errors.Is(err, store.ErrWebhookLimit):
			refused.Add(1)
		default:
			t.Errorf("CreateWebhook: %v", err)
		}
	})
	if created.Load() != 3 || refused.Load() != 5 {
		t.Errorf("created %d, refused %d; want 3 and 5", created.Load(), refused.Load())
	}
	if n, err := db.CountWebhooks(ctx, org); err != nil || n != 3 {
		t.Errorf("CountWebhooks = %d, %v; want 3", n, err)
	}
}

func testWebhookPagination(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org := newOrg(t, db)
	var want []string
	for range 5 {
		want = append([]string{newWebhook(t, db, org, store.EventFileReady).ID}, want...)
	}
	deleted := newWebhook(t, db, org, store.EventFileReady)
	wantOK(t, "SoftDeleteWebhook", db.SoftDeleteWebhook(ctx, org, deleted.ID))
	var got []string
	p := store.ListParams{Limit: 2}
	for {
		page, err := db.ListWebhooks(ctx, org, p)
		wantOK(t, "ListWebhooks", err)
		got = append(got, ids(page.Items, webhookID)...)
		if !page.More {
			break
		}
		p.Before = page.Items[len(page.Items)-1].ID
	}
	if !slices.Equal(got, want) {
		t.Errorf("pages = %v, want newest first %v", got, want)
	}
}

func testWebhookRotateSecret(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org := newOrg(t, db)
	w := newWebhook(t, db, org, store.EventFileReady)
	now := time.Now()
	until := now.Add(24 * time.Hour)
	r, err := db.RotateWebhookSecret(ctx, org, w.ID, secretB, &until)
	wantOK(t, "RotateWebhookSecret", err)
	if r.Secret != secretB || r.PreviousSecret != secretA || r.PreviousSecretExpiresAt == nil ||
		!r.PreviousSecretExpiresAt.Equal(until.UTC().Truncate(time.Microsecond)) {
		t.Errorf("rotated = %+v", r)
	}
	got, err := db.GetWebhook(ctx, org, w.ID)
	wantOK(t, "GetWebhook", err)
	sameJSON(t, "GetWebhook after rotation", got, r)
	if s := got.Secrets(now); !slices.Equal(s, []string{secretB, secretA}) {
		t.Errorf("Secrets during the overlap = %d secrets, want the new one then the old one", len(s))
	}
	if s := got.Secrets(until); !slices.Equal(s, []string{secretB}) {
		t.Errorf("Secrets after the overlap = %d secrets, want only the new one", len(s))
	}

	// No overlap: the old secret stops at once.
	r, err = db.RotateWebhookSecret(ctx, org, w.ID, secretA, nil)
	wantOK(t, "RotateWebhookSecret without overlap", err)
	if r.Secret != secretA || r.PreviousSecret != "" || r.PreviousSecretExpiresAt != nil {
		t.Errorf("rotated without overlap = %+v", r)
	}
	if _, err := db.RotateWebhookSecret(ctx, org, w.ID, "", &until); err == nil {
		t.Errorf("rotating to an empty secret: no error")
	}
}

func testWebhookSoftDeleteCancels(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org := newOrg(t, db)
	doomed := newWebhook(t, db, org, store.EventExecutionStarted)
	other := newWebhook(t, db, org, store.EventExecutionStarted)
	first := emit(t, db, org, store.EventExecutionStarted)
	second := emit(t, db, org, store.EventExecutionStarted)
	var done string
	for _, d := range first {
		if d.WebhookID == doomed.ID {
			done = d.ID
			_, err := db.SetDeliveryStatus(ctx, org, d.ID, []store.DeliveryStatus{store.DeliveryPending}, store.DeliverySucceeded, nil)
			wantOK(t, "SetDeliveryStatus", err)
		}
	}

	wantOK(t, "SoftDeleteWebhook", db.SoftDeleteWebhook(ctx, org, doomed.ID))
	_, err := db.GetWebhook(ctx, org, doomed.ID)
	wantErr(t, "GetWebhook after delete", err, store.ErrNotFound)
	wantErr(t, "SoftDeleteWebhook again", db.SoftDeleteWebhook(ctx, org, doomed.ID), store.ErrNotFound)
	if n, _ := db.CountWebhooks(ctx, org); n != 1 {
		t.Errorf("CountWebhooks = %d, want 1", n)
	}
	for _, d := range append(first, second...) {
		got, err := db.GetDelivery(ctx, org, d.ID)
		wantOK(t, "GetDelivery", err)
		want := store.DeliveryPending
		switch {
		case d.ID == done:
			want = store.DeliverySucceeded
		case d.WebhookID == doomed.ID:
			want = store.DeliveryCancelled
		}
		if got.Status != want || (want == store.DeliveryCancelled && got.NextAttemptAt != nil) {
			t.Errorf("delivery to %s is %s (next %v), want %s", d.WebhookID, got.Status, got.NextAttemptAt, want)
		}
	}
	// A deleted webhook receives nothing more.
	for _, d := range emit(t, db, org, store.EventExecutionStarted) {
		if d.WebhookID != other.ID {
			t.Errorf("a deleted webhook got a delivery")
		}
	}
}

func testWebhookDisable(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org := newOrg(t, db)
	w := newWebhook(t, db, org, store.EventExecutionFailed)
	ds := emit(t, db, org, store.EventExecutionFailed)
	got, err := db.DisableWebhook(ctx, org, w.ID, "receiver answered 410 Gone")
	wantOK(t, "DisableWebhook", err)
	if got.Status != store.WebhookDisabled || got.DisabledReason != "receiver answered 410 Gone" {
		t.Errorf("disabled = %+v", got)
	}
	d, err := db.GetDelivery(ctx, org, ds[0].ID)
	wantOK(t, "GetDelivery", err)
	if d.Status != store.DeliveryCancelled {
		t.Errorf("pending delivery of a disabled webhook is %s, want cancelled", d.Status)
	}
	_, err = db.DisableWebhook(ctx, org, w.ID, "again")
	wantErr(t, "DisableWebhook twice", err, store.ErrConflict)
	_, err = db.DisableWebhook(ctx, org, "whk_missing", "x")
	wantErr(t, "DisableWebhook unknown", err, store.ErrNotFound)
	if ds := emit(t, db, org, store.EventExecutionFailed); len(ds) != 0 {
		t.Errorf("a disabled webhook got %d deliveries", len(ds))
	}
	// A manual disable does not overwrite the reason.
	off := false
	got, err = db.UpdateWebhook(ctx, org, w.ID, store.WebhookPatch{Enabled: &off})
	wantOK(t, "UpdateWebhook", err)
	if got.DisabledReason != "receiver answered 410 Gone" {
		t.Errorf("reason = %q after disabling again", got.DisabledReason)
	}
}

func testWebhookFailing(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org := newOrg(t, db)
	w := newWebhook(t, db, org, store.EventFileReady)
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	got, err := db.MarkWebhookFailing(ctx, org, w.ID, t0)
	wantOK(t, "MarkWebhookFailing", err)
	if got.FailingSince == nil || !got.FailingSince.Equal(t0) {
		t.Fatalf("FailingSince = %v, want %v", got.FailingSince, t0)
	}
	got, err = db.MarkWebhookFailing(ctx, org, w.ID, t0.Add(time.Hour))
	wantOK(t, "MarkWebhookFailing again", err)
	if !got.FailingSince.Equal(t0) {
		t.Errorf("a later failure moved FailingSince to %v", got.FailingSince)
	}
	wantOK(t, "ClearWebhookFailing", db.ClearWebhookFailing(ctx, org, w.ID))
	got, err = db.GetWebhook(ctx, org, w.ID)
	wantOK(t, "GetWebhook", err)
	if got.FailingSince != nil {
		t.Errorf("FailingSince = %v after a success", got.FailingSince)
	}
}

func testEmitEvent(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org, other := newOrg(t, db), newOrg(t, db)
	both := newWebhook(t, db, org, store.EventExecutionSucceeded, store.EventExecutionFailed)
	failedOnly := newWebhook(t, db, org, store.EventExecutionFailed)
	disabled := newWebhook(t, db, org, store.EventExecutionSucceeded)
	off := false
	_, err := db.UpdateWebhook(ctx, org, disabled.ID, store.WebhookPatch{Enabled: &off})
	wantOK(t, "UpdateWebhook", err)
	newWebhook(t, db, other, store.EventExecutionSucceeded)

	object := json.RawMessage(`{"id":"exe_1","status":"succeeded","output":{"summary":"ok"}}`)
	before := time.Now().Add(-time.Second)
	ds, err := db.EmitEvent(ctx, org, store.EventExecutionSucceeded, object)
	wantOK(t, "EmitEvent", err)
	if len(ds) != 1 || ds[0].WebhookID != both.ID {
		t.Fatalf("deliveries = %+v, want one to %s", ds, both.ID)
	}
	d := ds[0]
	if !store.ValidID(store.PrefixDelivery, d.ID) || !store.ValidID(store.PrefixEvent, d.EventID) || d.OrgID != org ||
		d.EventCode != store.EventExecutionSucceeded || d.Status != store.DeliveryPending || d.AttemptsCount != 0 ||
		d.LastAttempt != nil || d.NextAttemptAt == nil || d.NextAttemptAt.Before(before) {
		t.Errorf("delivery = %+v", d)
	}
	got, err := db.GetDelivery(ctx, org, d.ID)
	wantOK(t, "GetDelivery", err)
	sameJSON(t, "GetDelivery", got, d)
	evt, err := db.GetEvent(ctx, org, d.EventID)
	wantOK(t, "GetEvent", err)
	if evt.Code != store.EventExecutionSucceeded || string(evt.Object) != string(object) || evt.OrgID != org {
		t.Errorf("event = %+v (object %s)", evt, evt.Object)
	}

	ds, err = db.EmitEvent(ctx, org, store.EventExecutionFailed, object)
	wantOK(t, "EmitEvent failed", err)
	if got := ids(ds, func(d store.Delivery) string { return d.WebhookID }); !slices.Equal(got, []string{both.ID, failedOnly.ID}) {
		t.Errorf("execution.failed went to %v, want %s and %s", got, both.ID, failedOnly.ID)
	}
	if ds[0].EventID != ds[1].EventID {
		t.Errorf("one event has two ids: %s, %s", ds[0].EventID, ds[1].EventID)
	}

	// Nobody subscribes: nothing to deliver, nothing stored.
	ds, err = db.EmitEvent(ctx, org, store.EventFileReady, object)
	wantOK(t, "EmitEvent without subscribers", err)
	if len(ds) != 0 {
		t.Errorf("file.ready got %d deliveries", len(ds))
	}
	page, err := db.ListDeliveries(ctx, org, store.DeliveryFilter{}, store.ListParams{})
	wantOK(t, "ListDeliveries", err)
	if len(page.Items) != 3 {
		t.Errorf("organisation has %d deliveries, want 3", len(page.Items))
	}

	for name, fn := range map[string]func() error{
		"unknown code": func() error {
			_, err := db.EmitEvent(ctx, org, "execution.exploded", object)
			return err
		},
		"invalid object": func() error {
			_, err := db.EmitEvent(ctx, org, store.EventExecutionFailed, json.RawMessage(`{`))
			return err
		},
		"no object": func() error {
			_, err := db.EmitEvent(ctx, org, store.EventExecutionFailed, nil)
			return err
		},
	} {
		if fn() == nil {
			t.Errorf("EmitEvent with %s: no error", name)
		}
	}
}

// testEmitEventInTx: an event emitted in a transaction that rolls back
// leaves no event and no delivery, like the change it reported.
func testEmitEventInTx(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org := newOrg(t, db)
	newWebhook(t, db, org, store.EventExecutionStarted)
	boom := errors.New("boom")
	var evt string
	err := db.InTx(ctx, func(tx *store.Tx) error {
		ds, err := tx.EmitEvent(ctx, org, store.EventExecutionStarted, json.RawMessage(`{}`))
		if err != nil {
			return err
		}
		evt = ds[0].EventID
		return boom
	})
	wantErr(t, "InTx", err, boom)
	_, err = db.GetEvent(ctx, org, evt)
	wantErr(t, "event of a rolled back transaction", err, store.ErrNotFound)
	page, err := db.ListDeliveries(ctx, org, store.DeliveryFilter{}, store.ListParams{})
	wantOK(t, "ListDeliveries", err)
	if len(page.Items) != 0 {
		t.Errorf("rolled back emission left %d deliveries", len(page.Items))
	}
}

// testWebhookOrgIsolation: organisation B reaches none of A's webhooks,
// events or deliveries, and its attempts change nothing.
func testWebhookOrgIsolation(t *testing.T, db *store.DB) {
	ctx := t.Context()
	a, b := newOrg(t, db), newOrg(t, db)
	w := newWebhook(t, db, a, store.EventExecutionStarted)
	d := emit(t, db, a, store.EventExecutionStarted)[0]
	url, off := "https://evil.example.com", false

	notFound := map[string]error{}
	_, notFound["GetWebhook"] = db.GetWebhook(ctx, b, w.ID)
	_, notFound["UpdateWebhook"] = db.UpdateWebhook(ctx, b, w.ID, store.WebhookPatch{URL: &url, Enabled: &off})
	_, notFound["RotateWebhookSecret"] = db.RotateWebhookSecret(ctx, b, w.ID, secretB, nil)
	_, notFound["MarkWebhookFailing"] = db.MarkWebhookFailing(ctx, b, w.ID, time.Now())
	notFound["ClearWebhookFailing"] = db.ClearWebhookFailing(ctx, b, w.ID)
	_, notFound["DisableWebhook"] = db.DisableWebhook(ctx, b, w.ID, "evil")
	notFound["SoftDeleteWebhook"] = db.SoftDeleteWebhook(ctx, b, w.ID)
	_, notFound["GetEvent"] = db.GetEvent(ctx, b, d.EventID)
	_, notFound["GetDelivery"] = db.GetDelivery(ctx, b, d.ID)
	_, notFound["ListDeliveryAttempts"] = db.ListDeliveryAttempts(ctx, b, d.ID)
	_, notFound["RecordDeliveryAttempt"] = db.RecordDeliveryAttempt(ctx, b, store.DeliveryAttempt{DeliveryID: d.ID, URL: url})
	_, notFound["SetDeliveryStatus"] = db.SetDeliveryStatus(ctx, b, d.ID, []store.DeliveryStatus{store.DeliveryPending}, store.DeliveryCancelled, nil)
	for method, err := range notFound {
		wantErr(t, method+" from another organisation", err, store.ErrNotFound)
	}
	if page, err := db.ListWebhooks(ctx, b, store.ListParams{}); err != nil || len(page.Items) != 0 {
		t.Errorf("ListWebhooks of B = %d items, %v", len(page.Items), err)
	}
	for _, f := range []store.DeliveryFilter{{}, {WebhookID: w.ID}} {
		if page, err := db.ListDeliveries(ctx, b, f, store.ListParams{}); err != nil || len(page.Items) != 0 {
			t.Errorf("ListDeliveries(%+v) of B = %d items, %v", f, len(page.Items), err)
		}
	}
	if n, err := db.CountWebhooks(ctx, b); err != nil || n != 0 {
		t.Errorf("CountWebhooks of B = %d, %v", n, err)
	}
	// B's events never reach A's webhooks.
	if ds := emit(t, db, b, store.EventExecutionStarted); len(ds) != 0 {
		t.Errorf("B's event went to %d webhooks", len(ds))
	}

	gotW, err := db.GetWebhook(ctx, a, w.ID)
	wantOK(t, "GetWebhook", err)
	sameJSON(t, "A's webhook", gotW, w)
	gotD, err := db.GetDelivery(ctx, a, d.ID)
	wantOK(t, "GetDelivery", err)
	sameJSON(t, "A's delivery", gotD, d)
}

func testWebhookPurge(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org := newOrg(t, db)
	doomed := newWebhook(t, db, org, store.EventExecutionStarted)
	live := newWebhook(t, db, org, store.EventExecutionFailed)
	for _, d := range emit(t, db, org, store.EventExecutionStarted) {
		_, err := db.RecordDeliveryAttempt(ctx, org, store.DeliveryAttempt{DeliveryID: d.ID, URL: doomed.URL, ResponseCode: 500})
		wantOK(t, "RecordDeliveryAttempt", err)
	}
	finished := emit(t, db, org, store.EventExecutionFailed)[0]
	_, err := db.SetDeliveryStatus(ctx, org, finished.ID, []store.DeliveryStatus{store.DeliveryPending}, store.DeliverySucceeded, nil)
	wantOK(t, "SetDeliveryStatus", err)
	pending := emit(t, db, org, store.EventExecutionFailed)[0]
	wantOK(t, "SoftDeleteWebhook", db.SoftDeleteWebhook(ctx, org, doomed.ID))

	p, err := db.PurgeDeleted(ctx, time.Now().Add(-time.Hour))
	wantOK(t, "PurgeDeleted an hour ago", err)
	if p != (store.Purged{}) {
		t.Errorf("purged %+v of rows from just now", p)
	}
	p, err = db.PurgeDeleted(ctx, time.Now().Add(time.Second))
	wantOK(t, "PurgeDeleted", err)
	if p.Webhooks != 1 || p.Deliveries != 2 || p.Events != 2 {
		t.Errorf("purged %+v, want 1 webhook, 2 deliveries (the deleted webhook's and the finished one), 2 events", p)
	}
	count := func(table string) int {
		var n int
		if err := db.Writer().QueryRowContext(ctx, `SELECT COUNT(*) FROM `+table).Scan(&n); err != nil {
			t.Fatalf("counting %s: %v", table, err)
		}
		return n
	}
	if count("webhooks") != 1 || count("deliveries") != 1 || count("delivery_attempts") != 0 || count("events") != 1 {
		t.Errorf("after purge: %d webhooks, %d deliveries, %d attempts, %d events",
			count("webhooks"), count("deliveries"), count("delivery_attempts"), count("events"))
	}
	if _, err := db.GetDelivery(ctx, org, pending.ID); err != nil {
		t.Errorf("a pending delivery was purged: %v", err)
	}
	if _, err := db.GetWebhook(ctx, org, live.ID); err != nil {
		t.Errorf("live webhook: %v", err)
	}
}
