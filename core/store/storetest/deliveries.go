package storetest

import (
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kobana/kadu/core/store"
)

func testDeliveryAttempts(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org := newOrg(t, db)
	w := newWebhook(t, db, org, store.EventExecutionFailed)
	d := emit(t, db, org, store.EventExecutionFailed)[0]
	at := time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC)
	long := strings.Repeat("é", store.MaxResponseBody) // two bytes each
	got, err := db.RecordDeliveryAttempt(ctx, org, store.DeliveryAttempt{
		DeliveryID: d.ID, AttemptedAt: at, URL: w.URL, ResponseCode: 500, DurationMS: 42,
		ResponseBody: "oops\x00\xff" + long,
	})
	wantOK(t, "RecordDeliveryAttempt", err)
	wantAt := at.Truncate(time.Microsecond)
	if got.AttemptsCount != 1 || got.Status != store.DeliveryPending || got.LastAttempt == nil ||
		*got.LastAttempt != (store.LastAttempt{At: wantAt, ResponseCode: 500, DurationMS: 42}) {
		t.Errorf("after a failed attempt: %+v (last %+v)", got, got.LastAttempt)
	}
	_, err = db.RecordDeliveryAttempt(ctx, org, store.DeliveryAttempt{
		DeliveryID: d.ID, URL: w.URL, Error: "dial tcp: connection refused", DurationMS: 3, Replay: true,
	})
	wantOK(t, "RecordDeliveryAttempt replay", err)

	as, err := db.ListDeliveryAttempts(ctx, org, d.ID)
	wantOK(t, "ListDeliveryAttempts", err)
	if len(as) != 2 {
		t.Fatalf("%d attempts, want 2", len(as))
	}
	first, second := as[0], as[1]
	if !store.ValidID(store.PrefixAttempt, first.ID) || first.OrgID != org || first.DeliveryID != d.ID ||
		!first.AttemptedAt.Equal(wantAt) || first.URL != w.URL || first.ResponseCode != 500 || first.DurationMS != 42 ||
		first.Error != "" || first.Replay {
		t.Errorf("first attempt = %+v", first)
	}
	if len(first.ResponseBody) > store.MaxResponseBody || !strings.HasPrefix(first.ResponseBody, "oops\uFFFD") ||
		strings.ContainsRune(first.ResponseBody, 0) || !strings.HasSuffix(first.ResponseBody, "é") {
		t.Errorf("stored response body: %d bytes, starts %q", len(first.ResponseBody), first.ResponseBody[:10])
	}
	if second.ResponseCode != 0 || second.Error != "dial tcp: connection refused" || !second.Replay || second.ResponseBody != "" {
		t.Errorf("second attempt = %+v", second)
	}
	got, err = db.GetDelivery(ctx, org, d.ID)
	wantOK(t, "GetDelivery", err)
	if got.AttemptsCount != 2 || got.LastAttempt.Error != "dial tcp: connection refused" || got.LastAttempt.ResponseCode != 0 {
		t.Errorf("delivery after two attempts = %+v (last %+v)", got, got.LastAttempt)
	}
	_, err = db.RecordDeliveryAttempt(ctx, org, store.DeliveryAttempt{DeliveryID: "dlv_missing"})
	wantErr(t, "RecordDeliveryAttempt unknown", err, store.ErrNotFound)
	_, err = db.ListDeliveryAttempts(ctx, org, "dlv_missing")
	wantErr(t, "ListDeliveryAttempts unknown", err, store.ErrNotFound)
}

func testDeliveryStatus(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org := newOrg(t, db)
	newWebhook(t, db, org, store.EventExecutionFailed)
	d := emit(t, db, org, store.EventExecutionFailed)[0]
	pending := []store.DeliveryStatus{store.DeliveryPending}
	next := time.Now().Add(5 * time.Minute).UTC().Truncate(time.Microsecond)
	got, err := db.SetDeliveryStatus(ctx, org, d.ID, pending, store.DeliveryPending, &next)
	wantOK(t, "reschedule", err)
	if got.Status != store.DeliveryPending || got.NextAttemptAt == nil || !got.NextAttemptAt.Equal(next) {
		t.Errorf("rescheduled = %+v", got)
	}
	got, err = db.SetDeliveryStatus(ctx, org, d.ID, pending, store.DeliveryFailed, &next)
	wantOK(t, "fail", err)
	if got.Status != store.DeliveryFailed || got.NextAttemptAt != nil {
		t.Errorf("failed = %+v; a finished delivery has no next attempt", got)
	}
	_, err = db.SetDeliveryStatus(ctx, org, d.ID, pending, store.DeliveryCancelled, nil)
	wantErr(t, "from a status not listed", err, store.ErrConflict)
	_, err = db.SetDeliveryStatus(ctx, org, d.ID, []store.DeliveryStatus{store.DeliveryFailed}, "exploded", nil)
	if err == nil {
		t.Errorf("unknown status: no error")
	}
	_, err = db.SetDeliveryStatus(ctx, org, "dlv_missing", pending, store.DeliveryFailed, nil)
	wantErr(t, "unknown delivery", err, store.ErrNotFound)

	// Of concurrent moves out of pending, exactly one wins.
	d = emit(t, db, org, store.EventExecutionFailed)[0]
	var won atomic.Int32
	concurrently(6, func(i int) {
		to := store.DeliverySucceeded
		if i%2 == 1 {
			to = store.DeliveryCancelled
		}
		_, err := db.SetDeliveryStatus(ctx, org, d.ID, pending, to, nil)
		switch {
		case err == nil:
			won.Add(1)
		case !errors.Is(err, store.ErrConflict):
			t.Errorf("SetDeliveryStatus: %v", err)
		}
	})
	if won.Load() != 1 {
		t.Errorf("%d concurrent moves out of pending won, want 1", won.Load())
	}
}

func testDeliveryListFilters(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org := newOrg(t, db)
	a := newWebhook(t, db, org, store.EventExecutionSucceeded, store.EventExecutionFailed)
	b := newWebhook(t, db, org, store.EventExecutionFailed)
	var all []store.Delivery
	for range 2 {
		all = append(all, emit(t, db, org, store.EventExecutionSucceeded)...) // to a
		all = append(all, emit(t, db, org, store.EventExecutionFailed)...)    // to a and b
	}
	_, err := db.SetDeliveryStatus(ctx, org, all[0].ID, []store.DeliveryStatus{store.DeliveryPending}, store.DeliverySucceeded, nil)
	wantOK(t, "SetDeliveryStatus", err)
	newest := func(keep func(store.Delivery) bool) []string {
		var out []string
		for i := len(all) - 1; i >= 0; i-- {
			if keep(all[i]) {
				out = append(out, all[i].ID)
			}
		}
		return out
	}
	// The ids of one event's deliveries are minted in webhook order; sort
	// the expectation the way the store does.
	sorted := func(s []string) []string { slices.Sort(s); slices.Reverse(s); return s }
	tests := []struct {
		name string
		f    store.DeliveryFilter
		want []string
	}{
		{"all", store.DeliveryFilter{}, sorted(newest(func(store.Delivery) bool { return true }))},
		{"webhook a", store.DeliveryFilter{WebhookID: a.ID}, sorted(newest(func(d store.Delivery) bool { return d.WebhookID == a.ID }))},
		{"webhook b, failed events", store.DeliveryFilter{WebhookID: b.ID, EventCode: store.EventExecutionFailed},
			sorted(newest(func(d store.Delivery) bool { return d.WebhookID == b.ID }))},
		{"succeeded events", store.DeliveryFilter{EventCode: store.EventExecutionSucceeded},
			sorted(newest(func(d store.Delivery) bool { return d.EventCode == store.EventExecutionSucceeded }))},
		{"status succeeded", store.DeliveryFilter{Status: store.DeliverySucceeded}, []string{all[0].ID}},
		{"webhook b, succeeded events", store.DeliveryFilter{WebhookID: b.ID, EventCode: store.EventExecutionSucceeded}, nil},
	}
	for _, tt := range tests {
		var got []string
		p := store.ListParams{Limit: 2}
		for {
			page, err := db.ListDeliveries(ctx, org, tt.f, p)
			wantOK(t, "ListDeliveries "+tt.name, err)
			got = append(got, ids(page.Items, deliveryID)...)
			if !page.More {
				break
			}
			p.Before = page.Items[len(page.Items)-1].ID
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}
