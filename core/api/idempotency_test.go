package api

import (
	"bytes"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/kobana/kadu/core/store"
)

func TestIdempotency(t *testing.T) {
	forEachBackend(t, map[string]func(*testing.T, *store.DB){
		"Replay":               testIdempotentReplay,
		"KeyRules":             testIdempotencyKeyRules,
		"WhatIsStored":         testIdempotencyStored,
		"InFlight":             testIdempotencyInFlight,
		"ConcurrentDuplicates": testIdempotencyConcurrentRun,
	})
}

func testIdempotentReplay(t *testing.T, db *store.DB) {
	e := newEnv(t, db, nil)
	org := newOrg()
	tok := e.token(owner(org))
	body := map[string]any{"name": "daily", "input_schema": map[string]any{"type": "object"}}
	first := e.do(tok, "POST", "/tasks", body, "Idempotency-Key", "create-1")
	must(t, first, http.StatusCreated)
	again := e.do(tok, "POST", "/tasks", body, "Idempotency-Key", "create-1")
	if again.status != http.StatusCreated || !bytes.Equal(again.body, first.body) ||
		again.header.Get("Idempotent-Replayed") != "true" || again.header.Get("Location") != first.header.Get("Location") {
		t.Fatalf("replay = %d %q (Location %q), want the first answer replayed:\n%s\n%s", again.status,
			again.header.Get("Idempotent-Replayed"), again.header.Get("Location"), again.body, first.body)
	}
	if first.header.Get("Idempotent-Replayed") != "" {
		t.Error("the first answer says it is replayed")
	}
	// The key in the body is the same key; member order and number
	// spelling do not change the request.
	task := first.json(t)["id"].(string)
	run := e.do(tok, "POST", "/tasks/"+task+"/run", `{"input":{"a":1,"b":[1.0,2]},"idempotency_key":"run-1"}`)
	x := must(t, run, http.StatusAccepted)
	for _, r := range []resp{
		e.do(tok, "POST", "/tasks/"+task+"/run", `{"idempotency_key":"run-1","input":{"b":[1,2.0],"a":1e0}}`),
		e.do(tok, "POST", "/tasks/"+task+"/run", `{"input":{"a":1,"b":[1,2]}}`, "Idempotency-Key", "run-1"),
		e.do(tok, "POST", "/tasks/"+task+"/run", `{"input":{"a":1,"b":[1,2]},"idempotency_key":"run-1"}`, "Idempotency-Key", "run-1"),
	} {
		if r.status != http.StatusAccepted || r.json(t)["id"] != x["id"] || r.header.Get("Idempotent-Replayed") != "true" ||
			r.header.Get("Location") != BasePath+"/executions/"+x["id"].(string) {
			t.Errorf("replay = %d %s %v", r.status, r.body, r.header)
		}
	}
	if enq, _, _ := e.queue.snapshot(); len(enq) != 1 {
		t.Errorf("enqueued %v, want one execution", enq)
	}
	if l := must(t, e.do(tok, "GET", "/tasks", nil), http.StatusOK); len(l["data"].([]any)) != 1 {
		t.Errorf("%d tasks, want 1", len(l["data"].([]any)))
	}
	// Keys belong to an organisation: another may use the same one.
	must(t, e.do(e.token(owner(newOrg())), "POST", "/tasks", body, "Idempotency-Key", "create-1"), http.StatusCreated)
}

func testIdempotencyKeyRules(t *testing.T, db *store.DB) {
	e := newEnv(t, db, nil)
	org := newOrg()
	tok := e.token(owner(org))
	task := e.createTask(tok, "t", nil)
	run := "/tasks/" + task + "/run"
	input := map[string]any{"input": map[string]any{"period": "2026-03"}}
	must(t, e.do(tok, "POST", run, input, "Idempotency-Key", "k1"), http.StatusAccepted)
	tests := []struct {
		name         string
		method, path string
		body         any
		headers      []string
		status       int
		code, param  string
	}{
		{"other body", "POST", run, map[string]any{"input": map[string]any{"period": "2026-04"}}, []string{"Idempotency-Key", "k1"},
			http.StatusUnprocessableEntity, "idempotency_key_reused", "idempotency_key"},
		{"other route", "PATCH", "/tasks/" + task, map[string]any{"name": "x"}, []string{"Idempotency-Key", "k1"},
			http.StatusUnprocessableEntity, "idempotency_key_reused", "idempotency_key"},
		{"header and body differ", "POST", run, map[string]any{"input": map[string]any{"period": "2026-03"}, "idempotency_key": "a"},
			[]string{"Idempotency-Key", "b"}, http.StatusBadRequest, "bad_request", "idempotency_key"},
		{"too long", "POST", run, input, []string{"Idempotency-Key", strings.Repeat("k", 256)},
			http.StatusUnprocessableEntity, "validation_error", "idempotency_key"},
		{"not a string", "POST", run, map[string]any{"input": map[string]any{"period": "2026-03"}, "idempotency_key": 7}, nil,
			http.StatusUnprocessableEntity, "validation_error", "idempotency_key"},
		{"empty in body", "POST", run, map[string]any{"input": map[string]any{"period": "2026-03"}, "idempotency_key": ""}, nil,
			http.StatusUnprocessableEntity, "validation_error", "idempotency_key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantProblem(t, e.do(tok, tt.method, tt.path, tt.body, tt.headers...), tt.status, tt.code, tt.param)
		})
	}
	// 255 characters, accents included, are fine.
	must(t, e.do(tok, "POST", run, map[string]any{"input": map[string]any{"period": "2026-03"}, "idempotency_key": strings.Repeat("ç", 255)}), http.StatusAccepted)
	if enq, _, _ := e.queue.snapshot(); len(enq) != 2 {
		t.Errorf("enqueued %d, want 2", len(enq))
	}
}

// testIdempotencyStored: refusals before the endpoint acted release the
// key (fix and retry with it); its decisions (2xx, 402, 404, 409
// invalid_state) are replayed; a 5xx releases it.
func testIdempotencyStored(t *testing.T, db *store.DB) {
	e := newEnv(t, db, nil)
	org := newOrg()
	tok := e.token(owner(org))
	task := e.createTask(tok, "t", nil)
	run := "/tasks/" + task + "/run"

	wantProblem(t, e.do(tok, "POST", run, map[string]any{"input": map[string]any{"period": "March"}}, "Idempotency-Key", "fix-me"),
		http.StatusUnprocessableEntity, "validation_error", "input.period")
	must(t, e.do(tok, "POST", run, map[string]any{"input": map[string]any{"period": "2026-03"}}, "Idempotency-Key", "fix-me"), http.StatusAccepted)

	e.queue.set(func(q *testQueue) { q.fail = errors.New("queue down") })
	wantProblem(t, e.do(tok, "POST", run, map[string]any{"input": map[string]any{"period": "2026-05"}}, "Idempotency-Key", "flaky"),
		http.StatusInternalServerError, "internal_error", "")
	e.queue.set(func(q *testQueue) { q.fail = nil })
	if r := e.do(tok, "POST", run, map[string]any{"input": map[string]any{"period": "2026-05"}}, "Idempotency-Key", "flaky"); r.status != http.StatusAccepted || r.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("retry after a 5xx: %d %v %s", r.status, r.header, r.body)
	}

	done := e.executionIn(org, task, "owner-1", store.StatusSucceeded)
	first := e.do(tok, "POST", "/executions/"+done.ID+"/cancel", nil, "Idempotency-Key", "cancel-done")
	wantProblem(t, first, http.StatusConflict, "invalid_state", "")
	again := e.do(tok, "POST", "/executions/"+done.ID+"/cancel", nil, "Idempotency-Key", "cancel-done")
	if again.status != http.StatusConflict || !bytes.Equal(again.body, first.body) || again.header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("409 replay = %d %v %s", again.status, again.header, again.body)
	}

	must(t, e.do(tok, "DELETE", "/executions/"+done.ID, nil, "Idempotency-Key", "del"), http.StatusOK)
	if r := e.do(tok, "DELETE", "/executions/"+done.ID, nil, "Idempotency-Key", "del"); r.status != http.StatusOK || r.header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("a repeated delete = %d %s, want the 200 replayed", r.status, r.body)
	}
	wantProblem(t, e.do(tok, "DELETE", "/executions/"+done.ID, nil, "Idempotency-Key", "del-2"), http.StatusNotFound, "not_found", "")
}

// testIdempotencyInFlight holds a cancel in the queue's CancelRunning and
// repeats it meanwhile.
func testIdempotencyInFlight(t *testing.T, db *store.DB) {
	e := newEnv(t, db, nil)
	org := newOrg()
	tok := e.token(owner(org))
	task := e.createTask(tok, "t", nil)
	x := e.executionIn(org, task, "owner-1", store.StatusRunning)
	entered, block := make(chan struct{}, 1), make(chan struct{})
	e.queue.set(func(q *testQueue) { q.entered, q.block = entered, block })
	path := "/executions/" + x.ID + "/cancel"
	firstDone := make(chan resp)
	go func() { firstDone <- e.do(tok, "POST", path, nil, "Idempotency-Key", "c1") }()
	<-entered
	r := e.do(tok, "POST", path, nil, "Idempotency-Key", "c1")
	wantProblem(t, r, http.StatusConflict, "idempotency_key_in_use", "idempotency_key")
	if r.header.Get("Retry-After") == "" {
		t.Error("409 idempotency_key_in_use without Retry-After")
	}
	e.queue.set(func(q *testQueue) { q.entered, q.block = nil, nil })
	close(block)
	first := <-firstDone
	must(t, first, http.StatusAccepted)
	again := e.do(tok, "POST", path, nil, "Idempotency-Key", "c1")
	if again.status != http.StatusAccepted || !bytes.Equal(again.body, first.body) || again.header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("after the first finished: %d %s", again.status, again.body)
	}
}

// testIdempotencyConcurrentRun: twenty identical launches at once create
// one execution.
func testIdempotencyConcurrentRun(t *testing.T, db *store.DB) {
	e := newEnv(t, db, nil)
	org := newOrg()
	tok := e.token(member(org))
	task := e.createTask(e.token(owner(org)), "t", nil)
	const n = 20
	var wg sync.WaitGroup
	results := make([]resp, n)
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			results[i] = e.do(tok, "POST", "/tasks/"+task+"/run",
				map[string]any{"input": map[string]any{"period": "2026-03"}, "idempotency_key": "same"})
		})
	}
	close(start)
	wg.Wait()
	ids := map[string]bool{}
	var accepted, inUse int
	for _, r := range results {
		switch r.status {
		case http.StatusAccepted:
			accepted++
			ids[r.json(t)["id"].(string)] = true
		case http.StatusConflict:
			if code, _ := r.problem(t); code != "idempotency_key_in_use" {
				t.Errorf("409 %s", r.body)
			}
			inUse++
		default:
			t.Errorf("status %d: %s", r.status, r.body)
		}
	}
	if len(ids) != 1 || accepted == 0 || accepted+inUse != n {
		t.Fatalf("%d accepted with ids %v, %d in use; want one execution", accepted, ids, inUse)
	}
	if enq, _, _ := e.queue.snapshot(); len(enq) != 1 {
		t.Errorf("enqueued %v, want one", enq)
	}
	l := must(t, e.do(tok, "GET", "/executions", nil), http.StatusOK)
	if len(l["data"].([]any)) != 1 {
		t.Errorf("%d executions, want 1", len(l["data"].([]any)))
	}
	t.Logf("%d accepted (1 new, %d replays), %d in use", accepted, accepted-1, inUse)
}
