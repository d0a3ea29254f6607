package jobs

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/kobana/kadu/core/internal/fakeclock"
	"github.com/kobana/kadu/core/store"
	"github.com/kobana/kadu/core/webhook"
)

// TestDeliveredOnExecution runs an execution on a started queue: its
// started and succeeded events reach the webhook, signed with its secret,
// in the body docs/reference/rest.md#wire-forms describes.
func TestDeliveredOnExecution(t *testing.T) {
	forEachDB(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		db := open(t)
		rc := newReceiver(t, always(http.StatusNoContent))
		q := newHookQueue(t, db, fakeclock.New(time.Now()), true)
		hook := hookOrg(t, db, "org_hooks", rc.url, store.EventExecutionStarted, store.EventExecutionSucceeded)
		exe := launch(t, db, q, "org_hooks", "developer", playbook(stepParse, stepSummarize))
		waitStatus(t, db, "org_hooks", exe.ID, store.StatusSucceeded)

		reqs := rc.waitFor(t, 2)
		codes := map[string]received{}
		for _, r := range reqs {
			if !r.signedBy(hook.Secret) {
				t.Errorf("request %s is not signed with the webhook's secret: %q", r.id, r.sig)
			}
			if other, _ := webhook.NewSecret(); r.signedBy(other) {
				t.Errorf("request %s verifies with another secret", r.id)
			}
			if r.contentType != "application/json" || !strings.HasPrefix(r.id, "evt_") || r.ts == "" {
				t.Errorf("headers: id %q, timestamp %q, content type %q", r.id, r.ts, r.contentType)
			}
			ev := r.event(t)
			if got := slices.Sorted(maps.Keys(ev)); !slices.Equal(got, []string{"created_at", "event_code", "id", "object", "webhook"}) {
				t.Errorf("event members = %v", got)
			}
			if ev["id"] != r.id || ev["webhook"].(map[string]any)["id"] != hook.ID {
				t.Errorf("event id %v (header %s), webhook %v", ev["id"], r.id, ev["webhook"])
			}
			if _, err := time.Parse(time.RFC3339Nano, ev["created_at"].(string)); err != nil {
				t.Errorf("created_at: %v", err)
			}
			codes[ev["event_code"].(string)] = r
		}
		for code, status := range map[string]string{store.EventExecutionStarted: "running", store.EventExecutionSucceeded: "succeeded"} {
			r, ok := codes[code]
			if !ok {
				t.Errorf("no %s delivered (got %v)", code, slices.Sorted(maps.Keys(codes)))
				continue
			}
			obj := r.event(t)["object"].(map[string]any)
			if obj["id"] != exe.ID || obj["status"] != status || obj["object"] != "execution" || obj["task_id"] != exe.TaskID {
				t.Errorf("%s object = %v", code, obj)
			}
			var compacted bytes.Buffer
			if err := json.Compact(&compacted, r.body); err != nil || !bytes.Equal(compacted.Bytes(), r.body) {
				t.Errorf("body is not compact JSON: %s", r.body)
			}
		}
		// Both deliveries end succeeded after one attempt.
		deadline := time.Now().Add(20 * time.Second)
		for {
			ds := deliveriesTo(t, db, "org_hooks", hook.ID)
			done := len(ds) == 2
			for _, d := range ds {
				done = done && d.Status == store.DeliverySucceeded
			}
			if done {
				for _, d := range ds {
					if d.AttemptsCount != 1 || d.LastAttempt == nil || d.LastAttempt.ResponseCode != 204 || d.NextAttemptAt != nil {
						t.Errorf("delivery = %+v (last %+v)", d, d.LastAttempt)
					}
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("deliveries = %+v", ds)
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}

// TestExecutionEvents: a paused execution emits waiting_input, and the
// maintenance job that expires it emits expired; a subscriber to only
// those gets exactly those.
func TestExecutionEvents(t *testing.T) {
	forEachDB(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		db := open(t)
		rc := newReceiver(t, always(http.StatusOK))
		clock := newClock()
		q := newHookQueue(t, db, clock, true)
		hookOrg(t, db, "org_ev", rc.url, store.EventExecutionWaitingInput, store.EventExecutionExpired)
		exe := launch(t, db, q, "org_ev", "developer", playbook(stepAsk, stepParse))
		waiting := waitStatus(t, db, "org_ev", exe.ID, store.StatusWaitingInput)
		rc.waitFor(t, 1)

		clock.Set(waiting.PendingInput.ExpiresAt.Add(time.Second))
		if err := (&maintenanceWorker{q: q}).Work(context.Background(), &river.Job[maintenanceArgs]{}); err != nil {
			t.Fatal(err)
		}
		waitStatus(t, db, "org_ev", exe.ID, store.StatusExpired)
		reqs := rc.waitFor(t, 2)
		var codes []string
		for _, r := range reqs {
			ev := r.event(t)
			codes = append(codes, ev["event_code"].(string))
			if ev["object"].(map[string]any)["id"] != exe.ID {
				t.Errorf("object = %v", ev["object"])
			}
		}
		if !slices.Equal(codes, []string{store.EventExecutionWaitingInput, store.EventExecutionExpired}) {
			t.Errorf("events = %v", codes)
		}
	})
}
