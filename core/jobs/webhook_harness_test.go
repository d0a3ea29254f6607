package jobs

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/kobana/kadu/core/agent"
	"github.com/kobana/kadu/core/internal/fakeclock"
	"github.com/kobana/kadu/core/store"
	"github.com/kobana/kadu/core/webhook"
)

// The delivery tests send to real loopback HTTP receivers (httptest binds
// 127.0.0.1, which the queue allow-lists) that check the Standard Webhooks
// signature with their own HMAC code, not core/webhook's. Time is a fake
// clock: the tests run due jobs themselves instead of starting River,
// except where a whole execution runs.

// received is one request a receiver got.
type received struct {
	id, ts, sig, contentType string
	body                     []byte
}

// signedBy reports whether one of r's signatures is the HMAC-SHA256 of
// "id.ts.body" under secret, verified the way a receiver would.
func (r received) signedBy(secret string) bool {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return false
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(r.id + "." + r.ts + "."))
	mac.Write(r.body)
	want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	for _, s := range strings.Fields(r.sig) {
		if hmac.Equal([]byte(s), []byte(want)) {
			return true
		}
	}
	return false
}

// event decodes r's body.
func (r received) event(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body is not JSON: %v: %s", err, r.body)
	}
	return m
}

// receiver is a webhook endpoint on loopback that answers with respond.
type receiver struct {
	url string
	mu  sync.Mutex
	got []received // guarded by mu
}

// reply is what a receiver answers: a status, headers in pairs, a body.
type reply struct {
	status  int
	headers []string
	body    string
}

func newReceiver(t *testing.T, respond func(n int) reply) *receiver {
	t.Helper()
	rc := &receiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got = append(rc.got, received{id: r.Header.Get("webhook-id"), ts: r.Header.Get("webhook-timestamp"),
			sig: r.Header.Get("webhook-signature"), contentType: r.Header.Get("Content-Type"), body: body})
		n := len(rc.got)
		rc.mu.Unlock()
		rep := respond(n)
		for i := 0; i+1 < len(rep.headers); i += 2 {
			w.Header().Set(rep.headers[i], rep.headers[i+1])
		}
		w.WriteHeader(rep.status)
		_, _ = io.WriteString(w, rep.body)
	}))
	t.Cleanup(srv.Close)
	rc.url = srv.URL + "/hooks/kadu"
	return rc
}

func always(status int) func(int) reply { return func(int) reply { return reply{status: status} } }

func (rc *receiver) requests() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.got)
}

// waitFor waits (bounded) until the receiver has n requests.
func (rc *receiver) waitFor(t *testing.T, n int) []received {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if got := rc.requests(); len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("receiver got %d requests, want %d", len(rc.requests()), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// newClock is the queue's clock in these tests. It starts a minute ahead of
// the real time, so that jobs River schedules "now" (by the database's clock)
// are due at the clock's start.
func newClock() *fakeclock.Clock {
	return fakeclock.New(time.Now().UTC().Add(time.Minute).Truncate(time.Second))
}

// newHookQueue builds a queue on db whose deliveries may reach 127.0.0.1,
// on clock; start runs River (for tests of whole executions).
func newHookQueue(t *testing.T, db *store.DB, clock *fakeclock.Clock, start bool) *Queue {
	t.Helper()
	q, err := New(context.Background(), Options{
		Store: db, Runner: agent.NewBuiltinRunner(nil), Plans: testPlans, DefaultPlan: "developer", OutputDir: t.TempDir(),
		PollInterval: 50 * time.Millisecond, CancelCheck: 50 * time.Millisecond,
		WebhookAllowHosts: []string{"127.0.0.1"}, Now: clock.Now,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	if start {
		if err := q.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := q.Stop(ctx); err != nil {
				t.Errorf("Stop: %v", err)
			}
		})
	}
	t.Cleanup(q.Close)
	return q
}

// hookOrg provisions org and gives it a webhook to url for codes.
func hookOrg(t *testing.T, db *store.DB, org, url string, codes ...string) store.Webhook {
	t.Helper()
	ctx := context.Background()
	if _, _, err := db.EnsureOrg(ctx, org, "developer"); err != nil {
		t.Fatal(err)
	}
	secret, err := webhook.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	w, err := db.CreateWebhook(ctx, org, store.Webhook{URL: url, EventCodes: codes, Secret: secret}, -1)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// due lists the jobs of kind not yet run, whose time has come at now.
func due(t *testing.T, q *Queue, kind string, now time.Time) []*rivertype.JobRow {
	t.Helper()
	res, err := q.client.JobList(context.Background(), river.NewJobListParams().Kinds(kind).
		States(rivertype.JobStateAvailable, rivertype.JobStateScheduled).First(1000))
	if err != nil {
		t.Fatal(err)
	}
	var out []*rivertype.JobRow
	for _, j := range res.Jobs {
		if !j.ScheduledAt.After(now) {
			out = append(out, j)
		}
	}
	return out
}

// runDue works every deliver and replay job due at the clock's time, as
// River would, and removes it; it returns how many ran.
func runDue(t *testing.T, q *Queue, clock *fakeclock.Clock) int {
	t.Helper()
	ctx := context.Background()
	n := 0
	for _, j := range due(t, q, deliverArgs{}.Kind(), clock.Now()) {
		var args deliverArgs
		if err := json.Unmarshal(j.EncodedArgs, &args); err != nil {
			t.Fatal(err)
		}
		if err := (&deliverWorker{q: q}).Work(ctx, &river.Job[deliverArgs]{JobRow: j, Args: args}); err != nil {
			t.Fatalf("deliver %+v: %v", args, err)
		}
		n++
		if _, err := q.client.JobDelete(ctx, j.ID); err != nil {
			t.Fatal(err)
		}
	}
	for _, j := range due(t, q, replayArgs{}.Kind(), clock.Now()) {
		var args replayArgs
		if err := json.Unmarshal(j.EncodedArgs, &args); err != nil {
			t.Fatal(err)
		}
		if err := (&replayWorker{q: q}).Work(ctx, &river.Job[replayArgs]{JobRow: j, Args: args}); err != nil {
			t.Fatalf("replay %+v: %v", args, err)
		}
		n++
		if _, err := q.client.JobDelete(ctx, j.ID); err != nil {
			t.Fatal(err)
		}
	}
	return n
}

// deliveriesTo returns the deliveries of webhook id, oldest first.
func deliveriesTo(t *testing.T, db *store.DB, org, id string) []store.Delivery {
	t.Helper()
	page, err := db.ListDeliveries(context.Background(), org, store.DeliveryFilter{WebhookID: id}, store.ListParams{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	slices.Reverse(page.Items)
	return page.Items
}

func getDelivery(t *testing.T, db *store.DB, org, id string) store.Delivery {
	t.Helper()
	d, err := db.GetDelivery(context.Background(), org, id)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func emitObject(t *testing.T, q *Queue, org, code string) {
	t.Helper()
	if err := q.Emit(context.Background(), nil, org, code, json.RawMessage(`{"id":"exe_1", "status":"failed"}`)); err != nil {
		t.Fatalf("Emit: %v", err)
	}
}
