package storetest

import (
	"bytes"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/kobana/kadu/core/store"
)

// newOrg provisions a fresh organisation and returns its id.
func newOrg(t *testing.T, db *store.DB) string {
	t.Helper()
	id := store.NewID("org_")
	if _, _, err := db.EnsureOrg(t.Context(), id, "free"); err != nil {
		t.Fatalf("EnsureOrg: %v", err)
	}
	return id
}

// newTask creates a task with a few fields set.
func newTask(t *testing.T, db *store.DB, org, name string) store.Task {
	t.Helper()
	task, err := db.CreateTask(t.Context(), org, store.Task{
		Name:         name,
		Description:  "description of " + name,
		Instructions: "do it",
		InputSchema:  json.RawMessage(`{"type":"object"}`),
		MaxCostCents: 500,
	})
	if err != nil {
		t.Fatalf("CreateTask: %v", err)
	}
	return task
}

// newExecution launches taskID.
func newExecution(t *testing.T, db *store.DB, org, taskID string) store.Execution {
	t.Helper()
	e, err := db.CreateExecution(t.Context(), org, store.Execution{
		TaskID:     taskID,
		LaunchedBy: "usr_1",
		Input:      json.RawMessage(`{"n":1}`),
	})
	if err != nil {
		t.Fatalf("CreateExecution: %v", err)
	}
	return e
}

// pathTo returns the shortest sequence of transitions from queued to s,
// found in the state machine table itself.
func pathTo(t *testing.T, s store.Status) []store.Status {
	t.Helper()
	table := store.AllowedTransitions()
	prev := map[store.Status]store.Status{}
	seen := map[store.Status]bool{store.StatusQueued: true}
	queue := []store.Status{store.StatusQueued}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		if cur == s {
			var path []store.Status
			for x := s; x != store.StatusQueued; x = prev[x] {
				path = append([]store.Status{x}, path...)
			}
			return path
		}
		for _, next := range table[cur] {
			if !seen[next] {
				seen[next] = true
				prev[next] = cur
				queue = append(queue, next)
			}
		}
	}
	t.Fatalf("status %s is unreachable from queued", s)
	return nil
}

// waitFor sets what entering waiting_input needs.
func waitFor(e *store.Execution) {
	e.PendingInput = &store.PendingInput{
		Kind:      store.PendingQuestion,
		Prompt:    "Which account?",
		ExpiresAt: time.Now().Add(time.Hour),
	}
}

// driveTo moves e from queued to s along pathTo(s).
func driveTo(t *testing.T, db *store.DB, e store.Execution, s store.Status) store.Execution {
	t.Helper()
	for _, next := range pathTo(t, s) {
		var err error
		e, err = db.Transition(t.Context(), e.OrgID, e.ID, []store.Status{e.Status}, next, func(x *store.Execution) {
			if next == store.StatusWaitingInput {
				waitFor(x)
			}
		})
		if err != nil {
			t.Fatalf("driving %s to %s: %v", e.ID, next, err)
		}
	}
	return e
}

// execIn creates an execution of a new task and drives it to s.
func execIn(t *testing.T, db *store.DB, org string, s store.Status) store.Execution {
	t.Helper()
	task := newTask(t, db, org, "task for "+string(s))
	return driveTo(t, db, newExecution(t, db, org, task.ID), s)
}

// wantErr fails unless errors.Is(err, target).
func wantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("%s: error = %v, want %v", what, err, target)
	}
}

// wantOK fails on a non-nil err.
func wantOK(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// sameJSON fails unless got and want marshal to the same JSON: it compares
// values field by field with times as RFC 3339 text.
func sameJSON(t *testing.T, what string, got, want any) {
	t.Helper()
	g, err1 := json.Marshal(got)
	w, err2 := json.Marshal(want)
	if err := errors.Join(err1, err2); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if !bytes.Equal(g, w) {
		t.Errorf("%s:\n got %s\nwant %s", what, g, w)
	}
}

// concurrently runs fn(i) for i in [0, n) at once and waits for all.
func concurrently(n int, fn func(i int)) {
	var start, done sync.WaitGroup
	start.Add(1)
	for i := range n {
		done.Go(func() {
			start.Wait()
			fn(i)
		})
	}
	start.Done()
	done.Wait()
}

func ids[T any](items []T, id func(T) string) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = id(it)
	}
	return out
}

func taskID(t store.Task) string      { return t.ID }
func execID(e store.Execution) string { return e.ID }
