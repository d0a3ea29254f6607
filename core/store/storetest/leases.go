package storetest

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/kobana/kadu/core/store"
)

var leaseTests = []suiteTest{
	{"RunLease", testRunLease},
	{"RunLeaseRelease", testRunLeaseRelease},
	{"RunLeaseCancelledBeforeClaim", testRunLeaseCancelledBeforeClaim},
	{"RunLeaseClearedOffRunning", testRunLeaseClearedOffRunning},
	{"LostRuns", testLostRuns},
	{"LostRunsConcurrentSweepers", testLostRunsConcurrentSweepers},
}

// running starts a new execution of a new task in org.
func running(t *testing.T, db *store.DB, org string) store.Execution {
	t.Helper()
	task := newTask(t, db, org, "leased")
	e, err := db.StartExecution(t.Context(), org, newExecution(t, db, org, task.ID).ID, 0, nil)
	wantOK(t, "StartExecution", err)
	return e
}

// claim takes the lease of the running execution id for owner.
func claim(t *testing.T, db *store.DB, org, id, owner string, deadline time.Time) {
	t.Helper()
	s, err := db.ClaimRun(t.Context(), org, id, owner, deadline)
	wantOK(t, "ClaimRun by "+owner, err)
	if s != store.StatusRunning {
		t.Errorf("ClaimRun status = %s, want running", s)
	}
}

// lostIDs returns the ids LostRuns reports, failing the test on an error.
func lostIDs(t *testing.T, db *store.DB, staleBefore, overdueBefore time.Time) map[string]store.LostRun {
	t.Helper()
	lost, err := db.LostRuns(t.Context(), staleBefore, overdueBefore, 0)
	wantOK(t, "LostRuns", err)
	out := map[string]store.LostRun{}
	for _, l := range lost {
		out[l.ID] = l
	}
	return out
}

// testRunLease: one owner at a time; only the owner renews; the lease
// follows the execution into cancelling and ends with it.
func testRunLease(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org := newOrg(t, db)
	e := running(t, db, org)
	deadline := time.Now().Add(time.Hour)
	claim(t, db, org, e.ID, "replica-a", deadline)
	_, err := db.ClaimRun(ctx, org, e.ID, "replica-b", deadline)
	wantErr(t, "ClaimRun by b while a holds it", err, store.ErrConflict)
	_, err = db.ClaimRun(ctx, newOrg(t, db), e.ID, "replica-b", deadline)
	wantErr(t, "ClaimRun in another organisation", err, store.ErrConflict)

	s, err := db.Heartbeat(ctx, org, e.ID, "replica-a")
	wantOK(t, "Heartbeat by a", err)
	if s != store.StatusRunning {
		t.Errorf("Heartbeat status = %s, want running", s)
	}
	_, err = db.Heartbeat(ctx, org, e.ID, "replica-b")
	wantErr(t, "Heartbeat by b", err, store.ErrConflict)

	_, err = db.Transition(ctx, org, e.ID, []store.Status{store.StatusRunning}, store.StatusCancelling, nil)
	wantOK(t, "cancelling", err)
	s, err = db.Heartbeat(ctx, org, e.ID, "replica-a")
	wantOK(t, "Heartbeat while cancelling", err)
	if s != store.StatusCancelling {
		t.Errorf("Heartbeat status = %s, want cancelling (the owner must stop the run)", s)
	}
	_, err = db.Transition(ctx, org, e.ID, []store.Status{store.StatusCancelling}, store.StatusCancelled, nil)
	wantOK(t, "cancelled", err)
	_, err = db.Heartbeat(ctx, org, e.ID, "replica-a")
	wantErr(t, "Heartbeat after the end", err, store.ErrConflict)

	q := newExecution(t, db, org, e.TaskID)
	_, err = db.ClaimRun(ctx, org, q.ID, "replica-a", deadline)
	wantErr(t, "ClaimRun of a queued execution", err, store.ErrConflict)
}

// testRunLeaseCancelledBeforeClaim: a run cancelled between its start and
// its claim is claimed as cancelling, for the claimer to end it.
func testRunLeaseCancelledBeforeClaim(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org := newOrg(t, db)
	e := running(t, db, org)
	_, err := db.Transition(ctx, org, e.ID, []store.Status{store.StatusRunning}, store.StatusCancelling, nil)
	wantOK(t, "cancelling", err)
	s, err := db.ClaimRun(ctx, org, e.ID, "replica-a", time.Now().Add(time.Hour))
	wantOK(t, "ClaimRun", err)
	if s != store.StatusCancelling {
		t.Errorf("ClaimRun status = %s, want cancelling", s)
	}
}

// testRunLeaseRelease: a stopping replica hands the run back and the
// retried job, on any replica, claims it.
func testRunLeaseRelease(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org := newOrg(t, db)
	e := running(t, db, org)
	deadline := time.Now().Add(time.Hour)
	claim(t, db, org, e.ID, "replica-a", deadline)
	wantErr(t, "ReleaseRun by b", db.ReleaseRun(ctx, org, e.ID, "replica-b"), store.ErrConflict)
	wantOK(t, "ReleaseRun by a", db.ReleaseRun(ctx, org, e.ID, "replica-a"))
	_, err := db.Heartbeat(ctx, org, e.ID, "replica-a")
	wantErr(t, "Heartbeat after release", err, store.ErrConflict)
	// However long the retry takes, a handed-back run is not stale...
	if l, ok := lostIDs(t, db, time.Now().Add(time.Hour), time.Now())[e.ID]; ok {
		t.Errorf("a handed-back run is reported lost: %+v", l)
	}
	// ...but its deadline still holds.
	if l, ok := lostIDs(t, db, time.Now().Add(time.Hour), deadline.Add(time.Second))[e.ID]; !ok || !l.Overdue || l.Owner != "" {
		t.Errorf("a handed-back run past its deadline: %+v (found %v), want overdue", l, ok)
	}
	claim(t, db, org, e.ID, "replica-b", deadline)
	got, err := db.GetExecution(ctx, org, e.ID)
	wantOK(t, "GetExecution", err)
	if got.Status != store.StatusRunning {
		t.Errorf("status = %s, want running", got.Status)
	}
}

// testRunLeaseClearedOffRunning: leaving running ends the lease, so the
// next run of a resumed execution can be claimed by any replica.
func testRunLeaseClearedOffRunning(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org := newOrg(t, db)
	e := running(t, db, org)
	deadline := time.Now().Add(time.Hour)
	claim(t, db, org, e.ID, "replica-a", deadline)
	_, err := db.Transition(ctx, org, e.ID, []store.Status{store.StatusRunning}, store.StatusWaitingInput, waitFor)
	wantOK(t, "waiting_input", err)
	_, err = db.Transition(ctx, org, e.ID, []store.Status{store.StatusWaitingInput}, store.StatusQueued, nil)
	wantOK(t, "queued", err)
	_, err = db.StartExecution(ctx, org, e.ID, 0, nil)
	wantOK(t, "StartExecution again", err)
	claim(t, db, org, e.ID, "replica-b", deadline)
	// Far in the future: every lease is stale, and the one found is b's.
	lost := lostIDs(t, db, time.Now().Add(time.Hour), time.Now().Add(-time.Hour))
	if l, ok := lost[e.ID]; !ok || l.Owner != "replica-b" || l.Overdue {
		t.Errorf("LostRuns entry = %+v (found %v), want owner replica-b, not overdue", l, ok)
	}
}

// testLostRuns: a run is lost when its lease is stale or its deadline
// passed; a live, in-time run, a waiting or a finished execution is not.
func testLostRuns(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org := newOrg(t, db)
	now := time.Now()
	live := running(t, db, org)
	claim(t, db, org, live.ID, "replica-a", now.Add(time.Hour))
	unclaimed := running(t, db, org) // started; its replica died before claiming
	overdue := running(t, db, org)
	claim(t, db, org, overdue.ID, "replica-a", now.Add(-time.Minute))
	cancelling := running(t, db, org)
	claim(t, db, org, cancelling.ID, "replica-a", now.Add(-time.Minute))
	_, err := db.Transition(ctx, org, cancelling.ID, []store.Status{store.StatusRunning}, store.StatusCancelling, nil)
	wantOK(t, "cancelling", err)
	waiting := execIn(t, db, org, store.StatusWaitingInput)
	done := execIn(t, db, org, store.StatusSucceeded)

	// Nothing is stale an hour ago: only the overdue run is lost (a
	// cancelling run has no deadline any more: it is ending).
	lost := lostIDs(t, db, now.Add(-time.Hour), now)
	if got := slices.Sorted(maps.Keys(lost)); !slices.Equal(got, []string{overdue.ID}) {
		t.Errorf("lost with fresh leases = %v, want only the overdue run %s", got, overdue.ID)
	}
	if l := lost[overdue.ID]; !l.Overdue || l.Owner != "replica-a" || l.Status != store.StatusRunning {
		t.Errorf("overdue entry = %+v", l)
	}

	// Every lease is stale an hour from now.
	lost = lostIDs(t, db, now.Add(time.Hour), now.Add(-time.Hour))
	want := []string{live.ID, unclaimed.ID, overdue.ID, cancelling.ID}
	if got := slices.Sorted(maps.Keys(lost)); !slices.Equal(got, slices.Sorted(slices.Values(want))) {
		t.Errorf("lost with stale leases = %v, want %v (not waiting %s nor finished %s)", got, want, waiting.ID, done.ID)
	}
	if l := lost[unclaimed.ID]; l.Owner != "" || l.Overdue {
		t.Errorf("unclaimed entry = %+v, want no owner", l)
	}
	if l := lost[cancelling.ID]; l.Status != store.StatusCancelling {
		t.Errorf("cancelling entry = %+v", l)
	}

	// A renewed lease is live again.
	s, err := db.Heartbeat(ctx, org, live.ID, "replica-a")
	wantOK(t, "Heartbeat", err)
	if s != store.StatusRunning {
		t.Errorf("Heartbeat status = %s", s)
	}
	if _, ok := lostIDs(t, db, time.Now().Add(-time.Second), now.Add(-time.Hour))[live.ID]; ok {
		t.Errorf("a just renewed lease is reported lost")
	}
}

// testLostRunsConcurrentSweepers: replicas sweeping at once settle each
// lost run exactly once (the move is a compare-and-set on the status).
func testLostRunsConcurrentSweepers(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org := newOrg(t, db)
	e := running(t, db, org)
	claim(t, db, org, e.ID, "replica-a", time.Now().Add(time.Hour))
	const n = 6
	errs := make([]error, n)
	concurrently(n, func(i int) {
		lost, err := db.LostRuns(ctx, time.Now().Add(time.Hour), time.Now(), 0)
		switch {
		case err != nil:
			errs[i] = err
			return
		case len(lost) == 0: // another sweeper settled it first
			errs[i] = store.ErrConflict
			return
		}
		_, errs[i] = db.Transition(ctx, org, lost[0].ID, []store.Status{store.StatusRunning}, store.StatusFailed, func(x *store.Execution) {
			x.Failure = &store.Failure{Code: "replica_lost", Message: "gone"}
		})
	})
	won := 0
	for i, err := range errs {
		if err == nil {
			won++
		} else {
			wantErr(t, fmt.Sprintf("sweeper %d", i), err, store.ErrConflict)
		}
	}
	if won != 1 {
		t.Errorf("%d sweepers settled the run, want exactly 1", won)
	}
	if lost := lostIDs(t, db, time.Now().Add(time.Hour), time.Now()); len(lost) != 0 {
		t.Errorf("still lost after the sweep: %v", lost)
	}
}
