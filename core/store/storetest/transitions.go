package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/kobana/kadu/core/store"
)

// testStateMachine tries every pair of statuses: each move the table allows
// succeeds, every other one is ErrConflict and changes nothing.
func testStateMachine(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org := newOrg(t, db)
	task := newTask(t, db, org, "machine")
	allowed := store.AllowedTransitions()
	for _, from := range store.Statuses() {
		for _, to := range store.Statuses() {
			t.Run(fmt.Sprintf("%s→%s", from, to), func(t *testing.T) {
				e := driveTo(t, db, newExecution(t, db, org, task.ID), from)
				got, err := db.Transition(ctx, org, e.ID, []store.Status{from}, to, func(x *store.Execution) {
					if to == store.StatusWaitingInput {
						waitFor(x)
					}
				})
				if slices.Contains(allowed[from], to) {
					if !store.CanTransition(from, to) {
						t.Errorf("CanTransition(%s, %s) disagrees with AllowedTransitions", from, to)
					}
					wantOK(t, "allowed transition", err)
					if got.Status != to {
						t.Errorf("status = %s, want %s", got.Status, to)
					}
				} else {
					if store.CanTransition(from, to) {
						t.Errorf("CanTransition(%s, %s) disagrees with AllowedTransitions", from, to)
					}
					wantErr(t, "forbidden transition", err, store.ErrConflict)
				}
				stored, err := db.GetExecution(ctx, org, e.ID)
				wantOK(t, "GetExecution", err)
				if want := map[bool]store.Status{true: to, false: from}[slices.Contains(allowed[from], to)]; stored.Status != want {
					t.Errorf("stored status = %s, want %s", stored.Status, want)
				}
			})
		}
	}
	for _, s := range store.Statuses() {
		if s.Terminal() != (len(allowed[s]) == 0) {
			t.Errorf("%s: Terminal() = %v but has %d moves", s, s.Terminal(), len(allowed[s]))
		}
	}
}

// testTransitionBookkeeping checks the fields the store sets on a move and
// the ones it does not let mutate change.
func testTransitionBookkeeping(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org := newOrg(t, db)
	task := newTask(t, db, org, "book")
	e := newExecution(t, db, org, task.ID)

	running, err := db.Transition(ctx, org, e.ID, []store.Status{store.StatusQueued}, store.StatusRunning, func(x *store.Execution) {
		x.TaskID = "tsk_hijack"  // ignored
		x.Cost.AmountCents = 999 // ignored: cost moves only through AddCost
		x.RunnerState = json.RawMessage(`{"step":1}`)
	})
	wantOK(t, "queued→running", err)
	if running.StartedAt == nil || running.FinishedAt != nil || running.TaskID != task.ID ||
		running.Cost.AmountCents != 0 || string(running.RunnerState) != `{"step":1}` {
		t.Errorf("running = %+v", running)
	}
	started := *running.StartedAt

	_, err = db.Transition(ctx, org, e.ID, []store.Status{store.StatusRunning}, store.StatusWaitingInput, nil)
	if err == nil || errors.Is(err, store.ErrConflict) {
		t.Errorf("waiting_input without PendingInput: error = %v, want a plain error", err)
	}

	expires := time.Now().Add(time.Hour)
	waiting, err := db.Transition(ctx, org, e.ID, []store.Status{store.StatusRunning}, store.StatusWaitingInput, func(x *store.Execution) {
		x.PendingInput = &store.PendingInput{Kind: store.PendingApproval, Prompt: "Pay?", StepID: "stp_1",
			InputSchema: json.RawMessage(`{"type":"boolean"}`), ExpiresAt: expires}
	})
	wantOK(t, "running→waiting_input", err)
	got, err := db.GetExecution(ctx, org, e.ID)
	wantOK(t, "GetExecution", err)
	sameJSON(t, "waiting execution", got, waiting)
	if got.PendingInput == nil || got.PendingInput.Kind != store.PendingApproval ||
		!got.PendingInput.ExpiresAt.Equal(expires.Truncate(time.Microsecond)) {
		t.Errorf("pending input = %+v", got.PendingInput)
	}

	queued, err := db.Transition(ctx, org, e.ID, []store.Status{store.StatusWaitingInput}, store.StatusQueued, nil)
	wantOK(t, "waiting_input→queued", err)
	if queued.PendingInput != nil {
		t.Errorf("pending input kept after continue: %+v", queued.PendingInput)
	}
	_, err = db.AddCost(ctx, org, e.ID, 30)
	wantOK(t, "AddCost", err)
	running, err = db.Transition(ctx, org, e.ID, []store.Status{store.StatusQueued}, store.StatusRunning, nil)
	wantOK(t, "queued→running again", err)
	if !running.StartedAt.Equal(started) {
		t.Errorf("started_at moved on re-entry: %v, want %v", running.StartedAt, started)
	}
	if running.Cost.AmountCents != 30 {
		t.Errorf("cost = %d, want 30 (AddCost between transitions)", running.Cost.AmountCents)
	}

	failed, err := db.Transition(ctx, org, e.ID, []store.Status{store.StatusRunning}, store.StatusFailed, func(x *store.Execution) {
		x.Failure = &store.Failure{Code: "cost_cap_exceeded", Message: "over"}
		x.Output = &store.Output{Summary: "partial", Data: json.RawMessage(`{"rows":3}`), FileIDs: []string{"file_9"}}
	})
	wantOK(t, "running→failed", err)
	if failed.FinishedAt == nil || failed.Failure == nil || failed.Failure.Code != "cost_cap_exceeded" {
		t.Errorf("failed = %+v", failed)
	}
	got, err = db.GetExecution(ctx, org, e.ID)
	wantOK(t, "GetExecution", err)
	sameJSON(t, "failed execution", got, failed)
}

func testTransitionFromList(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org := newOrg(t, db)
	e := execIn(t, db, org, store.StatusQueued)
	// Allowed by the machine, but the caller expected another status.
	_, err := db.Transition(ctx, org, e.ID, []store.Status{store.StatusWaitingInput}, store.StatusCancelled, nil)
	wantErr(t, "status not in from", err, store.ErrConflict)
	// Several candidates: cancel from whichever it is in.
	got, err := db.Transition(ctx, org, e.ID, []store.Status{store.StatusQueued, store.StatusWaitingInput}, store.StatusCancelled, nil)
	wantOK(t, "cancel", err)
	if got.Status != store.StatusCancelled || got.FinishedAt == nil {
		t.Errorf("cancelled = %+v", got)
	}
	_, err = db.Transition(ctx, org, "exe_missing", []store.Status{store.StatusQueued}, store.StatusRunning, nil)
	wantErr(t, "missing execution", err, store.ErrNotFound)
}

// testTransitionConcurrent races moves out of one status: exactly one wins.
func testTransitionConcurrent(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org := newOrg(t, db)
	for round := range 3 {
		e := execIn(t, db, org, store.StatusRunning)
		targets := []store.Status{store.StatusSucceeded, store.StatusFailed, store.StatusCancelling, store.StatusWaitingInput}
		const n = 12
		errs := make([]error, n)
		concurrently(n, func(i int) {
			to := targets[i%len(targets)]
			_, errs[i] = db.Transition(ctx, org, e.ID, []store.Status{store.StatusRunning}, to, func(x *store.Execution) {
				if to == store.StatusWaitingInput {
					waitFor(x)
				}
			})
		})
		var winner store.Status
		wins := 0
		for i, err := range errs {
			switch {
			case err == nil:
				wins++
				winner = targets[i%len(targets)]
			case !errors.Is(err, store.ErrConflict):
				t.Errorf("round %d, caller %d: %v, want nil or ErrConflict", round, i, err)
			}
		}
		if wins != 1 {
			t.Fatalf("round %d: %d transitions won, want 1", round, wins)
		}
		got, err := db.GetExecution(ctx, org, e.ID)
		wantOK(t, "GetExecution", err)
		if got.Status != winner {
			t.Errorf("round %d: status %s, winner moved it to %s", round, got.Status, winner)
		}
	}
}

// testStartExecutionLimit starts more executions than the limit at once:
// exactly the limit run, the rest stay queued.
func testStartExecutionLimit(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org := newOrg(t, db)
	task := newTask(t, db, org, "limited")
	const n, limit = 8, 3
	var es []store.Execution
	for range n {
		es = append(es, newExecution(t, db, org, task.ID))
	}
	errs := make([]error, n)
	concurrently(n, func(i int) {
		_, errs[i] = db.StartExecution(ctx, org, es[i].ID, limit, nil)
	})
	started := 0
	for i, err := range errs {
		switch {
		case err == nil:
			started++
		case !errors.Is(err, store.ErrActiveLimit):
			t.Errorf("start %d: %v, want nil or ErrActiveLimit", i, err)
		}
	}
	if started != limit {
		t.Errorf("%d executions started, want %d", started, limit)
	}
	active, err := db.CountActive(ctx, org)
	wantOK(t, "CountActive", err)
	if active != limit {
		t.Errorf("CountActive = %d, want %d", active, limit)
	}

	// cancelling still counts; cancelled frees a slot.
	var runningID, queuedID string
	for i, err := range errs {
		if err == nil && runningID == "" {
			runningID = es[i].ID
		}
		if err != nil && queuedID == "" {
			queuedID = es[i].ID
		}
	}
	_, err = db.Transition(ctx, org, runningID, []store.Status{store.StatusRunning}, store.StatusCancelling, nil)
	wantOK(t, "running→cancelling", err)
	_, err = db.StartExecution(ctx, org, queuedID, limit, nil)
	wantErr(t, "start with a cancelling one", err, store.ErrActiveLimit)
	_, err = db.Transition(ctx, org, runningID, []store.Status{store.StatusCancelling}, store.StatusCancelled, nil)
	wantOK(t, "cancelling→cancelled", err)
	e, err := db.StartExecution(ctx, org, queuedID, limit, nil)
	wantOK(t, "start after a slot freed", err)
	if e.Status != store.StatusRunning || e.StartedAt == nil {
		t.Errorf("started = %+v", e)
	}
	_, err = db.StartExecution(ctx, org, queuedID, 0, nil)
	wantErr(t, "start a running execution", err, store.ErrConflict)

	// The limit is checked under the organisation's row lock: no row, no start.
	ghost := store.NewID("org_")
	_, err = db.StartExecution(ctx, ghost, queuedID, limit, nil)
	wantErr(t, "start in an unprovisioned organisation", err, store.ErrNotFound)
}

func testExpireWaiting(t *testing.T, db *store.DB) {
	ctx := t.Context()
	orgA, orgB := newOrg(t, db), newOrg(t, db)
	now := time.Now()
	wait := func(org string, expires time.Time) store.Execution {
		e := execIn(t, db, org, store.StatusRunning)
		e, err := db.Transition(ctx, org, e.ID, []store.Status{store.StatusRunning}, store.StatusWaitingInput, func(x *store.Execution) {
			x.PendingInput = &store.PendingInput{Kind: store.PendingQuestion, Prompt: "?", ExpiresAt: expires}
		})
		wantOK(t, "→waiting_input", err)
		return e
	}
	pastA := wait(orgA, now.Add(-time.Minute))
	futureA := wait(orgA, now.Add(time.Hour))
	pastB := wait(orgB, now.Add(-time.Second))
	exactA := wait(orgA, now)
	runningA := execIn(t, db, orgA, store.StatusRunning)

	expired, err := db.ExpireWaiting(ctx, now)
	wantOK(t, "ExpireWaiting", err)
	got := ids(expired, execID)
	slices.Sort(got)
	want := []string{pastA.ID, pastB.ID, exactA.ID}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("expired %q, want %q", got, want)
	}
	for _, e := range expired {
		if e.Status != store.StatusExpired || e.FinishedAt == nil || e.PendingInput != nil {
			t.Errorf("expired execution = %+v", e)
		}
		stored, err := db.GetExecution(ctx, e.OrgID, e.ID)
		wantOK(t, "GetExecution", err)
		sameJSON(t, "stored expired execution", stored, e)
	}
	for _, e := range []store.Execution{futureA, runningA} {
		stored, err := db.GetExecution(ctx, orgA, e.ID)
		wantOK(t, "GetExecution", err)
		if stored.Status != e.Status {
			t.Errorf("%s moved from %s to %s", e.ID, e.Status, stored.Status)
		}
	}

	again, err := db.ExpireWaiting(ctx, now)
	wantOK(t, "ExpireWaiting again", err)
	if len(again) != 0 {
		t.Errorf("second ExpireWaiting expired %d more", len(again))
	}
	later, err := db.ExpireWaiting(ctx, now.Add(2*time.Hour))
	wantOK(t, "ExpireWaiting later", err)
	if got := ids(later, execID); !slices.Equal(got, []string{futureA.ID}) {
		t.Errorf("later expired %q, want [%s]", got, futureA.ID)
	}
}

func testExpireWaitingConcurrent(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org := newOrg(t, db)
	const n = 6
	for range n {
		execIn(t, db, org, store.StatusWaitingInput)
	}
	later := time.Now().Add(2 * time.Hour)
	results := make([][]store.Execution, 4)
	errs := make([]error, 4)
	concurrently(4, func(i int) {
		results[i], errs[i] = db.ExpireWaiting(ctx, later)
	})
	seen := map[string]int{}
	for i := range results {
		wantOK(t, "ExpireWaiting", errs[i])
		for _, e := range results[i] {
			seen[e.ID]++
		}
	}
	if len(seen) != n {
		t.Errorf("%d executions expired, want %d", len(seen), n)
	}
	for id, k := range seen {
		if k != 1 {
			t.Errorf("%s expired %d times", id, k)
		}
	}
}
