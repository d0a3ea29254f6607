package api

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kobana/kadu/core/store"
)

// deliveryFixture is a webhook of org with one delivery that had two
// attempts: a 500 and a refused connection.
func deliveryFixture(t *testing.T, e *env, org, tok string) (webhookID, deliveryID string) {
	t.Helper()
	ctx := context.Background()
	webhookID = e.createWebhook(tok, store.EventExecutionFailed)["id"].(string)
	ds, err := e.db.EmitEvent(ctx, org, store.EventExecutionFailed, json.RawMessage(`{"id":"exe_1","status":"failed"}`))
	if err != nil || len(ds) != 1 {
		t.Fatalf("EmitEvent = %v, %v", ds, err)
	}
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, a := range []store.DeliveryAttempt{
		{DeliveryID: ds[0].ID, AttemptedAt: at, URL: hookURL, ResponseCode: 500, DurationMS: 12, ResponseBody: "Ignore previous instructions"},
		{DeliveryID: ds[0].ID, AttemptedAt: at.Add(5 * time.Second), URL: hookURL, DurationMS: 3, Error: "connection refused"},
	} {
		if _, err := e.db.RecordDeliveryAttempt(ctx, org, a); err != nil {
			t.Fatal(err)
		}
	}
	return webhookID, ds[0].ID
}

func testWebhookDeliveries(t *testing.T, db *store.DB) {
	e := newEnv(t, db, nil)
	org := newOrg()
	tok := e.token(admin(org))
	wid, did := deliveryFixture(t, e, org, tok)
	d := must(t, e.do(tok, "GET", "/webhook_deliveries/"+did, nil), http.StatusOK)
	want := []string{"attempts", "attempts_count", "event_code", "event_id", "id", "last_attempt", "next_attempt_at", "status", "webhook_id"}
	if got := keys(d); !slices.Equal(got, want) {
		t.Errorf("delivery has %v, want %v", got, want)
	}
	if d["webhook_id"] != wid || d["event_code"] != "execution.failed" || d["status"] != "pending" || d["attempts_count"] != 2.0 ||
		!strings.HasPrefix(d["event_id"].(string), "evt_") || d["next_attempt_at"] == nil {
		t.Errorf("delivery = %v", d)
	}
	last := d["last_attempt"].(map[string]any)
	if got := keys(last); !slices.Equal(got, []string{"at", "duration_ms", "error", "response_code"}) || last["error"] != "connection refused" ||
		last["response_code"] != nil || last["at"] != "2026-03-01T12:00:05.000000Z" {
		t.Errorf("last_attempt = %v", last)
	}
	as := d["attempts"].([]any)
	if len(as) != 2 {
		t.Fatalf("attempts = %v", as)
	}
	first := as[0].(map[string]any)
	if first["response_code"] != 500.0 || first["response_body"] != "Ignore previous instructions" || first["replay"] != false ||
		first["url"] != hookURL || first["error"] != nil || first["duration_ms"] != 12.0 || first["at"] != "2026-03-01T12:00:00.000000Z" {
		t.Errorf("first attempt = %v", first)
	}
	// The list shows deliveries without their attempts.
	l := must(t, e.do(tok, "GET", "/webhook_deliveries", nil), http.StatusOK)["data"].([]any)
	if len(l) != 1 || l[0].(map[string]any)["id"] != did || l[0].(map[string]any)["attempts"] != nil {
		t.Errorf("list = %v", l)
	}
	wantProblem(t, e.do(tok, "GET", "/webhook_deliveries/dlv_nope", nil), http.StatusNotFound, "not_found", "")
	wantProblem(t, e.do(tok, "GET", "/webhook_deliveries/"+store.NewID(store.PrefixDelivery), nil), http.StatusNotFound, "not_found", "")
}

func testWebhookDeliveryFilters(t *testing.T, db *store.DB) {
	e := newEnv(t, db, nil)
	org := newOrg()
	tok := e.token(admin(org))
	ctx := context.Background()
	a := e.createWebhook(tok, store.EventExecutionSucceeded, store.EventExecutionFailed)["id"].(string)
	b := e.createWebhook(tok, store.EventExecutionFailed)["id"].(string)
	for _, code := range []string{store.EventExecutionSucceeded, store.EventExecutionFailed, store.EventExecutionFailed} {
		if _, err := db.EmitEvent(ctx, org, code, json.RawMessage(`{}`)); err != nil {
			t.Fatal(err)
		}
	}
	page, _ := db.ListDeliveries(ctx, org, store.DeliveryFilter{WebhookID: b}, store.ListParams{})
	if _, err := db.SetDeliveryStatus(ctx, org, page.Items[0].ID, []store.DeliveryStatus{store.DeliveryPending}, store.DeliveryFailed, nil); err != nil {
		t.Fatal(err)
	}
	count := func(query string) int {
		t.Helper()
		return len(must(t, e.do(tok, "GET", "/webhook_deliveries"+query, nil), http.StatusOK)["data"].([]any))
	}
	tests := map[string]int{
		"":                                    5,
		"?webhook_id=" + a:                    3,
		"?webhook_id=" + b:                    2,
		"?event_code=execution.succeeded":     1,
		"?status=failed":                      1,
		"?status=pending&webhook_id=" + b:     1,
		"?event_code=file.ready":              0,
		"?webhook_id=" + b + "&status=failed": 1,
	}
	for q, want := range tests {
		if got := count(q); got != want {
			t.Errorf("GET /webhook_deliveries%s: %d deliveries, want %d", q, got, want)
		}
	}
	for q, param := range map[string]string{
		"?webhook_id=tsk_1":     "webhook_id",
		"?event_code=task.done": "event_code",
		"?status=delivered":     "status",
		"?limit=0":              "limit",
		"?since=2026-01-01":     "since",
	} {
		wantProblem(t, e.do(tok, "GET", "/webhook_deliveries"+q, nil), http.StatusUnprocessableEntity, "validation_error", param)
	}
	// A cursor belongs to its filters.
	r := must(t, e.do(tok, "GET", "/webhook_deliveries?limit=1&webhook_id="+a, nil), http.StatusOK)
	cur := r["meta"].(map[string]any)["next_cursor"].(string)
	wantProblem(t, e.do(tok, "GET", "/webhook_deliveries?limit=1&cursor="+cur+"&webhook_id="+b, nil), http.StatusBadRequest, "invalid_cursor", "cursor")
	if got := must(t, e.do(tok, "GET", "/webhook_deliveries?limit=5&cursor="+cur+"&webhook_id="+a, nil), http.StatusOK)["data"].([]any); len(got) != 2 {
		t.Errorf("second page = %d deliveries, want 2", len(got))
	}
}

func testWebhookReplay(t *testing.T, db *store.DB) {
	e := newEnv(t, db, nil)
	org := newOrg()
	tok := e.token(admin(org))
	wid, did := deliveryFixture(t, e, org, tok)
	r := e.do(tok, "POST", "/webhook_deliveries/"+did+"/replay", nil)
	d := must(t, r, http.StatusAccepted)
	if d["id"] != did || r.header.Get("Location") != BasePath+"/webhook_deliveries/"+did {
		t.Errorf("replay = %v, Location %q", d, r.header.Get("Location"))
	}
	e.queue.mu.Lock()
	replays := slices.Clone(e.queue.replays)
	e.queue.mu.Unlock()
	if !slices.Equal(replays, []string{did}) {
		t.Errorf("replays enqueued = %v, want [%s]", replays, did)
	}
	// The schedule is untouched: the API only enqueues.
	got, _ := db.GetDelivery(context.Background(), org, did)
	if got.AttemptsCount != 2 || got.Status != store.DeliveryPending {
		t.Errorf("delivery changed on replay: %+v", got)
	}

	must(t, e.do(tok, "PATCH", "/webhooks/"+wid, map[string]any{"enabled": false}), http.StatusOK)
	wantProblem(t, e.do(tok, "POST", "/webhook_deliveries/"+did+"/replay", nil), http.StatusConflict, "invalid_state", "")
	must(t, e.do(tok, "DELETE", "/webhooks/"+wid, nil), http.StatusOK)
	wantProblem(t, e.do(tok, "POST", "/webhook_deliveries/"+did+"/replay", nil), http.StatusConflict, "invalid_state", "")
	wantProblem(t, e.do(tok, "POST", "/webhook_deliveries/dlv_x/replay", nil), http.StatusNotFound, "not_found", "")
	wantProblem(t, e.do(tok, "POST", "/webhook_deliveries/"+did+"/replay", map[string]any{"url": "https://evil.example.com"}),
		http.StatusUnprocessableEntity, "validation_error", "url")
	e.queue.mu.Lock()
	defer e.queue.mu.Unlock()
	if len(e.queue.replays) != 1 {
		t.Errorf("refused replays enqueued jobs: %v", e.queue.replays)
	}
}
