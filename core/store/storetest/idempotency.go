package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/kobana/kadu/core/store"
)

const (
	route  = "POST /tasks/{id}/run"
	digest = "sha256:aaaa"
)

// testIdempotencyConcurrentBegin: of N concurrent first requests with one
// key, exactly one owns it and the others are told it is in flight.
func testIdempotencyConcurrentBegin(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org := newOrg(t, db)
	now := time.Now()
	const n = 16
	recs := make([]store.IdempotencyRecord, n)
	errs := make([]error, n)
	concurrently(n, func(i int) {
		recs[i], errs[i] = db.BeginIdempotent(ctx, org, "key-1", "POST", route, digest, now)
	})
	owners := 0
	for i, err := range errs {
		switch {
		case err == nil:
			owners++
			if recs[i].State != store.IdempotencyInFlight || recs[i].Completed() {
				t.Errorf("owner got %+v", recs[i])
			}
		case !errors.Is(err, store.ErrIdempotencyInFlight):
			t.Errorf("caller %d: %v, want nil or ErrIdempotencyInFlight", i, err)
		}
	}
	if owners != 1 {
		t.Errorf("%d owners, want 1", owners)
	}
}

// testIdempotencyOneExecutionPerKey plays N concurrent duplicates of
// POST /tasks/{id}/run the way core/api will: one execution is created and
// every duplicate ends up with its id.
func testIdempotencyOneExecutionPerKey(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org := newOrg(t, db)
	task := newTask(t, db, org, "once")
	const n = 12
	got := make([]string, n)
	errs := make([]error, n)
	concurrently(n, func(i int) {
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			rec, err := db.BeginIdempotent(ctx, org, "run-1", "POST", route, digest, time.Now())
			if errors.Is(err, store.ErrIdempotencyInFlight) {
				time.Sleep(2 * time.Millisecond)
				continue
			}
			if err != nil {
				errs[i] = err
				return
			}
			if rec.Completed() {
				got[i] = string(rec.ResponseBody)
				return
			}
			var id string
			err = db.InTx(ctx, func(tx *store.Tx) error {
				e, err := tx.CreateExecution(ctx, org, store.Execution{TaskID: task.ID})
				id = e.ID
				return err
			})
			if err != nil {
				errs[i] = errors.Join(err, db.AbandonIdempotent(ctx, org, "run-1"))
				return
			}
			errs[i] = db.CompleteIdempotent(ctx, org, "run-1", 202, []byte(id))
			got[i] = id
			return
		}
		errs[i] = errors.New("still in flight after 10 s")
	})
	for i, err := range errs {
		wantOK(t, "duplicate "+string(rune('a'+i)), err)
	}
	page, err := db.ListExecutions(ctx, org, store.ExecutionFilter{}, store.ListParams{})
	wantOK(t, "ListExecutions", err)
	if len(page.Items) != 1 {
		t.Fatalf("%d executions for one key, want 1", len(page.Items))
	}
	for i, id := range got {
		if id != page.Items[0].ID {
			t.Errorf("duplicate %d saw execution %q, want %s", i, id, page.Items[0].ID)
		}
	}
}

func testIdempotencyReplayAndMismatch(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org, other := newOrg(t, db), newOrg(t, db)
	now := time.Now()

	rec, err := db.BeginIdempotent(ctx, org, "k", "POST", route, digest, now)
	wantOK(t, "BeginIdempotent", err)
	if rec.Completed() || rec.Key != "k" || rec.OrgID != org {
		t.Errorf("new record = %+v", rec)
	}
	_, err = db.BeginIdempotent(ctx, org, "k", "POST", route, digest, now)
	wantErr(t, "while in flight", err, store.ErrIdempotencyInFlight)
	_, err = db.BeginIdempotent(ctx, org, "k", "POST", route, "sha256:bbbb", now)
	wantErr(t, "other digest while in flight", err, store.ErrIdempotencyMismatch)

	body := []byte(`{"id":"exe_1"}`)
	wantOK(t, "CompleteIdempotent", db.CompleteIdempotent(ctx, org, "k", 202, body))
	wantErr(t, "CompleteIdempotent twice", db.CompleteIdempotent(ctx, org, "k", 500, nil), store.ErrNotFound)

	replay, err := db.BeginIdempotent(ctx, org, "k", "POST", route, digest, now.Add(time.Minute))
	wantOK(t, "replay", err)
	if !replay.Completed() || replay.ResponseStatus != 202 || string(replay.ResponseBody) != string(body) ||
		!replay.CreatedAt.Equal(now.Truncate(time.Microsecond)) {
		t.Errorf("replay = %+v", replay)
	}
	for _, tt := range []struct{ method, route, digest string }{
		{"POST", route, "sha256:bbbb"},
		{"POST", "POST /tasks", digest},
		{"PATCH", route, digest},
	} {
		_, err = db.BeginIdempotent(ctx, org, "k", tt.method, tt.route, tt.digest, now)
		wantErr(t, "reuse with "+tt.method+" "+tt.route+" "+tt.digest, err, store.ErrIdempotencyMismatch)
	}

	// Keys are scoped by organisation.
	theirs, err := db.BeginIdempotent(ctx, other, "k", "PATCH", "PATCH /tasks/{id}", "sha256:cccc", now)
	wantOK(t, "same key, other organisation", err)
	if theirs.Completed() {
		t.Errorf("other organisation replayed our response")
	}
	wantErr(t, "AbandonIdempotent of an unknown key", db.AbandonIdempotent(ctx, org, "nope"), store.ErrNotFound)
}

func testIdempotencyAbandon(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org := newOrg(t, db)
	now := time.Now()
	_, err := db.BeginIdempotent(ctx, org, "k", "POST", route, digest, now)
	wantOK(t, "BeginIdempotent", err)
	wantOK(t, "AbandonIdempotent", db.AbandonIdempotent(ctx, org, "k"))
	wantErr(t, "CompleteIdempotent after abandon", db.CompleteIdempotent(ctx, org, "k", 200, nil), store.ErrNotFound)
	rec, err := db.BeginIdempotent(ctx, org, "k", "POST", route, "sha256:other", now)
	wantOK(t, "BeginIdempotent after abandon", err)
	if rec.Completed() {
		t.Errorf("retry after abandon = %+v", rec)
	}
	wantOK(t, "CompleteIdempotent", db.CompleteIdempotent(ctx, org, "k", 200, nil))
	wantErr(t, "AbandonIdempotent of a completed key", db.AbandonIdempotent(ctx, org, "k"), store.ErrNotFound)
}

func testIdempotencyExpiry(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org := newOrg(t, db)
	t0 := time.Now().Add(-48 * time.Hour)

	_, err := db.BeginIdempotent(ctx, org, "done", "POST", route, digest, t0)
	wantOK(t, "BeginIdempotent", err)
	wantOK(t, "CompleteIdempotent", db.CompleteIdempotent(ctx, org, "done", 201, []byte("first")))
	rec, err := db.BeginIdempotent(ctx, org, "done", "POST", route, digest, t0.Add(store.IdempotencyRetention-time.Second))
	wantOK(t, "within retention", err)
	if !rec.Completed() || string(rec.ResponseBody) != "first" {
		t.Errorf("within retention = %+v, want the replay", rec)
	}
	// Past retention the key is new again, whatever it was used for.
	rec, err = db.BeginIdempotent(ctx, org, "done", "PUT", "PUT /tasks/{id}/destinations", "sha256:new", t0.Add(store.IdempotencyRetention))
	wantOK(t, "past retention", err)
	if rec.Completed() || rec.Method != "PUT" {
		t.Errorf("past retention = %+v, want a new record in flight", rec)
	}

	// An in-flight record older than the lock timeout is taken over.
	_, err = db.BeginIdempotent(ctx, org, "stuck", "POST", route, digest, t0)
	wantOK(t, "BeginIdempotent", err)
	_, err = db.BeginIdempotent(ctx, org, "stuck", "POST", route, digest, t0.Add(store.IdempotencyLockTimeout-time.Second))
	wantErr(t, "before the lock timeout", err, store.ErrIdempotencyInFlight)
	const n = 8
	errs := make([]error, n)
	concurrently(n, func(i int) {
		_, errs[i] = db.BeginIdempotent(ctx, org, "stuck", "POST", route, digest, t0.Add(store.IdempotencyLockTimeout))
	})
	owners := 0
	for _, err := range errs {
		if err == nil {
			owners++
		} else if !errors.Is(err, store.ErrIdempotencyInFlight) {
			t.Errorf("takeover: %v", err)
		}
	}
	if owners != 1 {
		t.Errorf("%d callers took the stuck key over, want 1", owners)
	}

	// Purge removes records created before the cut-off, in every organisation.
	other := newOrg(t, db)
	_, err = db.BeginIdempotent(ctx, other, "old", "POST", route, digest, t0.Add(-time.Hour))
	wantOK(t, "BeginIdempotent", err)
	_, err = db.BeginIdempotent(ctx, org, "fresh", "POST", route, digest, time.Now())
	wantOK(t, "BeginIdempotent", err)
	n2, err := db.PurgeIdempotency(ctx, t0)
	wantOK(t, "PurgeIdempotency", err)
	if n2 != 1 {
		t.Errorf("purged %d records before t0, want 1", n2)
	}
	n2, err = db.PurgeIdempotency(ctx, time.Now().Add(-time.Hour))
	wantOK(t, "PurgeIdempotency", err)
	if n2 != 2 { // "done" and "stuck", re-begun at t0+24h and t0+10min
		t.Errorf("purged %d records an hour ago, want 2", n2)
	}
	_, err = db.BeginIdempotent(ctx, org, "fresh", "POST", route, digest, time.Now())
	wantErr(t, "fresh key survives the purge", err, store.ErrIdempotencyInFlight)
}
