package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kobana/kadu/core/store"
)

func TestExecutions(t *testing.T) {
	forEachBackend(t, map[string]func(*testing.T, *store.DB){
		"Run":             testRun,
		"RunInvalid":      testRunInvalid,
		"LaunchPolicy":    testLaunchPolicy,
		"RunAtomic":       testRunAtomic,
		"List":            testExecutionList,
		"Steps":           testSteps,
		"StateMachine":    testStateMachine,
		"Continue":        testContinue,
		"LauncherOrAdmin": testLauncherOrAdmin,
		"SoftDelete":      testExecutionSoftDelete,
	})
}

func testRun(t *testing.T, db *store.DB) {
	e := newEnv(t, db, nil)
	org := newOrg()
	task := e.createTask(e.token(owner(org)), "t", map[string]any{"max_cost_cents": 300})
	tok := e.token(member(org))
	r := e.do(tok, "POST", "/tasks/"+task+"/run", map[string]any{"input": map[string]any{"period": "2026-03", "limit": 5}, "input_file_ids": []string{}})
	x := must(t, r, http.StatusAccepted)
	id := x["id"].(string)
	if r.header.Get("Location") != BasePath+"/executions/"+id {
		t.Errorf("Location = %q", r.header.Get("Location"))
	}
	want := map[string]any{"task_id": task, "task_version": 1.0, "status": "queued", "launched_by": "member-1",
		"previous_execution_id": nil, "output": nil, "pending_input": nil, "failure": nil, "started_at": nil, "finished_at": nil}
	for k, v := range want {
		if got, ok := x[k]; !ok || got != v {
			t.Errorf("%s = %v, want %v", k, got, v)
		}
	}
	if len(x) != 16 {
		t.Errorf("execution has %d fields, want 16: %v", len(x), x)
	}
	if in := x["input"].(map[string]any); in["period"] != "2026-03" || in["limit"] != 5.0 {
		t.Errorf("input = %v", in)
	}
	if c := x["cost"].(map[string]any); c["amount_cents"] != 0.0 || c["max_cost_cents"] != 300.0 || c["currency"] != "BRL" {
		t.Errorf("cost = %v", c)
	}
	if f := x["input_file_ids"].([]any); len(f) != 0 {
		t.Errorf("input_file_ids = %v", f)
	}
	if enq, _, _ := e.queue.snapshot(); !slices.Equal(enq, []string{id}) {
		t.Errorf("enqueued = %v, want [%s]", enq, id)
	}
	got := must(t, e.do(tok, "GET", "/executions/"+id, nil), http.StatusOK)
	if got["id"] != id || got["created_at"] != x["created_at"] {
		t.Errorf("get = %v", got)
	}
	// No input at all is {} (valid when the schema requires nothing).
	open := e.createTask(e.token(owner(org)), "open", map[string]any{"input_schema": map[string]any{"type": "object"}})
	if x := must(t, e.do(tok, "POST", "/tasks/"+open+"/run", nil), http.StatusAccepted); fmt.Sprint(x["input"]) != "map[]" {
		t.Errorf("input = %v, want {}", x["input"])
	}
}

func testRunInvalid(t *testing.T, db *store.DB) {
	e := newEnv(t, db, nil)
	org := newOrg()
	task := e.createTask(e.token(owner(org)), "t", nil)
	tok := e.token(member(org))
	tests := []struct {
		name       string
		body       any
		wantParams []string
	}{
		{name: "input against the schema", body: map[string]any{"input": map[string]any{"period": "march", "limit": 0}}, wantParams: []string{"input.limit", "input.period"}},
		{name: "required missing", body: map[string]any{"input": map[string]any{}}, wantParams: []string{"input"}},
		{name: "input not an object", body: map[string]any{"input": []int{1}}, wantParams: []string{"input"}},
		{name: "files not yet", body: map[string]any{"input": map[string]any{"period": "2026-03"}, "input_file_ids": []string{store.NewID(store.PrefixFile)}}, wantParams: []string{"input_file_ids"}},
		{name: "file id shape", body: map[string]any{"input": map[string]any{"period": "2026-03"}, "input_file_ids": []any{"f1"}}, wantParams: []string{"input_file_ids[0]"}},
		{name: "unknown field", body: map[string]any{"input": map[string]any{"period": "2026-03"}, "files": []string{}}, wantParams: []string{"files"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.do(tok, "POST", "/tasks/"+task+"/run", tt.body)
			if r.status != http.StatusUnprocessableEntity {
				t.Fatalf("status %d, want 422: %s", r.status, r.body)
			}
			if got := r.params(t); strings.Join(got, ",") != strings.Join(tt.wantParams, ",") {
				t.Fatalf("params = %v, want %v: %s", got, tt.wantParams, r.body)
			}
		})
	}
	if enq, _, _ := e.queue.snapshot(); len(enq) != 0 {
		t.Errorf("refused launches enqueued %v", enq)
	}
}

func testLaunchPolicy(t *testing.T, db *store.DB) {
	e := newEnv(t, db, nil)
	org := newOrg()
	own := e.token(owner(org))
	task := e.createTask(own, "t", nil)
	bob := user{org, "bob", "member", []string{"kadu.run"}}
	tests := []struct {
		name   string
		policy map[string]any
		caller user
		want   int
	}{
		{"empty policy, member", map[string]any{}, member(org), http.StatusAccepted},
		{"admins only, member", map[string]any{"roles": []string{"admin"}}, member(org), http.StatusForbidden},
		{"admins only, admin", map[string]any{"roles": []string{"admin"}}, admin(org), http.StatusAccepted},
		{"members listed, member", map[string]any{"roles": []string{"member"}}, member(org), http.StatusAccepted},
		{"bob only, bob", map[string]any{"user_ids": []string{"bob"}}, bob, http.StatusAccepted},
		{"bob only, another member", map[string]any{"user_ids": []string{"bob"}}, member(org), http.StatusForbidden},
		{"bob only, owner", map[string]any{"user_ids": []string{"bob"}}, owner(org), http.StatusAccepted},
		{"viewer never", map[string]any{}, viewer(org), http.StatusForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			must(t, e.do(own, "PUT", "/tasks/"+task+"/launch_policy", tt.policy), http.StatusOK)
			r := e.do(e.token(tt.caller), "POST", "/tasks/"+task+"/run", map[string]any{"input": map[string]any{"period": "2026-03"}})
			if r.status != tt.want {
				t.Fatalf("status %d, want %d: %s", r.status, tt.want, r.body)
			}
			if tt.want == http.StatusForbidden {
				wantProblem(t, r, http.StatusForbidden, "forbidden_role", "")
			}
		})
	}
}

// testRunAtomic: when the job cannot be enqueued, no execution remains.
func testRunAtomic(t *testing.T, db *store.DB) {
	e := newEnv(t, db, nil)
	org := newOrg()
	tok := e.token(owner(org))
	task := e.createTask(tok, "t", nil)
	e.queue.set(func(q *testQueue) { q.fail = errors.New("queue down") })
	wantProblem(t, e.do(tok, "POST", "/tasks/"+task+"/run", map[string]any{"input": map[string]any{"period": "2026-03"}}),
		http.StatusInternalServerError, "internal_error", "")
	if l := must(t, e.do(tok, "GET", "/executions", nil), http.StatusOK); len(l["data"].([]any)) != 0 {
		t.Fatalf("an execution without a job was left: %v", l)
	}
	if u := must(t, e.do(tok, "GET", "/usage", nil), http.StatusOK); u["month_to_date"].(map[string]any)["executions"] != 0.0 {
		t.Errorf("usage counts the failed launch: %v", u)
	}
}

func testExecutionList(t *testing.T, db *store.DB) {
	e := newEnv(t, db, nil)
	org := newOrg()
	tok := e.token(owner(org))
	t1, t2 := e.createTask(tok, "one", nil), e.createTask(tok, "two", nil)
	start := time.Now().UTC().Add(-time.Second)
	a := e.executionIn(org, t1, "owner-1", store.StatusSucceeded)
	b := e.executionIn(org, t1, "owner-1", store.StatusFailed)
	c := e.executionIn(org, t2, "owner-1", store.StatusSucceeded)
	ids := func(path string) []string {
		t.Helper()
		l := must(t, e.do(tok, "GET", path, nil), http.StatusOK)
		var out []string
		for _, it := range l["data"].([]any) {
			out = append(out, it.(map[string]any)["id"].(string))
		}
		return out
	}
	q := url.QueryEscape
	tests := []struct {
		query string
		want  []string
	}{
		{"", []string{c.ID, b.ID, a.ID}},
		{"task_id=" + t1, []string{b.ID, a.ID}},
		{"status=succeeded", []string{c.ID, a.ID}},
		{"task_id=" + t1 + "&status=failed", []string{b.ID}},
		{"created_after=" + q(ts(b.CreatedAt)), []string{c.ID}},
		{"created_before=" + q(ts(b.CreatedAt)), []string{a.ID}},
		{"created_after=" + q(start.Format(time.RFC3339Nano)) + "&created_before=" + q(time.Now().Add(time.Hour).Format(time.RFC3339)), []string{c.ID, b.ID, a.ID}},
		{"task_id=" + store.NewID(store.PrefixTask), nil},
	}
	for _, tt := range tests {
		if got := ids("/executions?" + tt.query); !slices.Equal(got, tt.want) {
			t.Errorf("?%s = %v, want %v", tt.query, got, tt.want)
		}
	}
	for query, param := range map[string]string{
		"status=done":                      "status",
		"task_id=t1":                       "task_id",
		"created_after=yesterday":          "created_after",
		"created_before=2026-13-01T00:00Z": "created_before",
		"created_after=2026-03-02T00:00:00Z&created_before=2026-03-01T00:00:00Z": "created_before",
		"state=failed": "state",
		"limit=500":    "limit",
	} {
		wantProblem(t, e.do(tok, "GET", "/executions?"+query, nil), http.StatusUnprocessableEntity, "validation_error", param)
	}
	// Cursors are bound to the filters.
	l := must(t, e.do(tok, "GET", "/executions?status=succeeded&limit=1", nil), http.StatusOK)
	cur := l["meta"].(map[string]any)["next_cursor"].(string)
	if got := ids("/executions?status=succeeded&limit=1&cursor=" + cur); !slices.Equal(got, []string{a.ID}) {
		t.Errorf("page 2 = %v, want [%s]", got, a.ID)
	}
	wantProblem(t, e.do(tok, "GET", "/executions?status=failed&limit=1&cursor="+cur, nil), http.StatusBadRequest, "invalid_cursor", "cursor")
	wantProblem(t, e.do(tok, "GET", "/executions?limit=1&cursor="+cur, nil), http.StatusBadRequest, "invalid_cursor", "cursor")
}

func testSteps(t *testing.T, db *store.DB) {
	e := newEnv(t, db, nil)
	org := newOrg()
	tok := e.token(viewer(org))
	task := e.createTask(e.token(owner(org)), "t", nil)
	x := e.executionIn(org, task, "owner-1", store.StatusRunning)
	other := e.executionIn(org, task, "owner-1", store.StatusRunning)
	for i := range 5 {
		fin := time.Now()
		if _, err := db.AppendStep(context.Background(), org, store.Step{ExecutionID: x.ID, Name: fmt.Sprintf("step %d", i),
			Kind: "parse_statement", Status: store.StepSucceeded, Summary: "ok", CostCents: 5, FinishedAt: &fin,
			Data: json.RawMessage(`{"rows":3}`)}); err != nil {
			t.Fatal(err)
		}
	}
	var names []string
	path := "/executions/" + x.ID + "/steps?limit=2"
	var cur string
	for range 5 {
		p := path
		if cur != "" {
			p += "&cursor=" + cur
		}
		l := must(t, e.do(tok, "GET", p, nil), http.StatusOK)
		for _, it := range l["data"].([]any) {
			s := it.(map[string]any)
			names = append(names, s["name"].(string))
			if s["cost_cents"] != 5.0 || s["execution_id"] != x.ID || s["finished_at"] == nil || s["data"].(map[string]any)["rows"] != 3.0 {
				t.Errorf("step = %v", s)
			}
		}
		next := l["meta"].(map[string]any)["next_cursor"]
		if next == nil {
			break
		}
		cur = next.(string)
		// A cursor of one execution's steps is not valid for another's.
		wantProblem(t, e.do(tok, "GET", "/executions/"+other.ID+"/steps?limit=2&cursor="+cur, nil), http.StatusBadRequest, "invalid_cursor", "cursor")
	}
	if strings.Join(names, ",") != "step 0,step 1,step 2,step 3,step 4" {
		t.Errorf("steps = %v", names)
	}
	if l := must(t, e.do(tok, "GET", "/executions/"+other.ID+"/steps", nil), http.StatusOK); len(l["data"].([]any)) != 0 {
		t.Errorf("other steps = %v", l)
	}
}

// testStateMachine drives continue, cancel and delete through the routes
// from every status.
func testStateMachine(t *testing.T, db *store.DB) {
	e := newEnv(t, db, nil)
	org := newOrg()
	tok := e.token(owner(org))
	task := e.createTask(tok, "t", nil)
	const invalid = http.StatusConflict
	tests := []struct {
		from                              store.Status
		continueCode, cancelCode, delCode int
		afterCancel                       store.Status
	}{
		{store.StatusQueued, invalid, http.StatusOK, invalid, store.StatusCancelled},
		{store.StatusRunning, invalid, http.StatusAccepted, invalid, store.StatusCancelling},
		{store.StatusWaitingInput, http.StatusAccepted, http.StatusOK, invalid, store.StatusCancelled},
		{store.StatusCancelling, invalid, http.StatusAccepted, invalid, store.StatusCancelling},
		{store.StatusSucceeded, invalid, invalid, http.StatusOK, ""},
		{store.StatusFailed, invalid, invalid, http.StatusOK, ""},
		{store.StatusCancelled, invalid, invalid, http.StatusOK, ""},
		{store.StatusExpired, invalid, invalid, http.StatusOK, ""},
	}
	if len(tests) != len(store.Statuses()) {
		t.Fatalf("the table covers %d statuses, the store has %d", len(tests), len(store.Statuses()))
	}
	answer := map[string]any{"answer": map[string]any{"month": "2026-03"}}
	for _, tt := range tests {
		t.Run(string(tt.from), func(t *testing.T) {
			check := func(r resp, want int, wantStatus store.Status) {
				t.Helper()
				if want == invalid {
					wantProblem(t, r, invalid, "invalid_state", "")
					return
				}
				x := must(t, r, want)
				if wantStatus != "" && x["status"] != string(wantStatus) {
					t.Errorf("status = %v, want %s", x["status"], wantStatus)
				}
			}
			x := e.executionIn(org, task, "owner-1", tt.from)
			check(e.do(tok, "POST", "/executions/"+x.ID+"/continue", answer), tt.continueCode, store.StatusQueued)
			x = e.executionIn(org, task, "owner-1", tt.from)
			check(e.do(tok, "POST", "/executions/"+x.ID+"/cancel", nil), tt.cancelCode, tt.afterCancel)
			if tt.afterCancel != "" {
				if got, _ := db.GetExecution(context.Background(), org, x.ID); got.Status != tt.afterCancel {
					t.Errorf("stored status %s, want %s", got.Status, tt.afterCancel)
				}
			}
			x = e.executionIn(org, task, "owner-1", tt.from)
			check(e.do(tok, "DELETE", "/executions/"+x.ID, nil), tt.delCode, "")
		})
	}
	_, resumed, cancels := e.queue.snapshot()
	if len(resumed) != 1 || resumed[0].StepID != "periodo" || string(resumed[0].Answer) != `{"month":"2026-03"}` {
		t.Errorf("resumed = %+v", resumed)
	}
	if len(cancels) != 2 { // running → cancelling, and cancelling again
		t.Errorf("CancelRunning calls = %v, want 2", cancels)
	}
}

func testContinue(t *testing.T, db *store.DB) {
	e := newEnv(t, db, nil)
	org := newOrg()
	tok := e.token(owner(org))
	task := e.createTask(tok, "t", nil)
	x := e.executionIn(org, task, "owner-1", store.StatusWaitingInput)
	got := must(t, e.do(tok, "GET", "/executions/"+x.ID, nil), http.StatusOK)
	pi := got["pending_input"].(map[string]any)
	if pi["kind"] != "question" || pi["step_id"] != "periodo" || pi["input_schema"] == nil || pi["expires_at"] == nil {
		t.Errorf("pending_input = %v", pi)
	}
	path := "/executions/" + x.ID + "/continue"
	for name, tt := range map[string]struct {
		body  any
		param string
	}{
		"no answer":         {map[string]any{}, "answer"},
		"answer not object": {map[string]any{"answer": "2026-03"}, "answer"},
		"answer invalid":    {map[string]any{"answer": map[string]any{"month": "March"}}, "answer.month"},
		"answer incomplete": {map[string]any{"answer": map[string]any{}}, "answer"},
		"unknown field":     {map[string]any{"answer": map[string]any{"month": "2026-03"}, "comment": "x"}, "comment"},
	} {
		t.Run(name, func(t *testing.T) {
			wantProblem(t, e.do(tok, "POST", path, tt.body), http.StatusUnprocessableEntity, "validation_error", tt.param)
		})
	}
	r := e.do(tok, "POST", path, map[string]any{"answer": map[string]any{"month": "2026-03"}})
	out := must(t, r, http.StatusAccepted)
	if out["status"] != "queued" || out["pending_input"] != nil || r.header.Get("Location") != BasePath+"/executions/"+x.ID {
		t.Errorf("continue = %v, Location %q", out, r.header.Get("Location"))
	}
	wantProblem(t, e.do(tok, "POST", path, map[string]any{"answer": map[string]any{"month": "2026-03"}}), http.StatusConflict, "invalid_state", "")

	// A pause past its expiry cannot be answered, even before the worker
	// marks it expired.
	y, err := db.CreateExecution(context.Background(), org, store.Execution{TaskID: task, LaunchedBy: "owner-1"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := db.Transition(ctx, org, y.ID, []store.Status{store.StatusQueued}, store.StatusRunning, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Transition(ctx, org, y.ID, []store.Status{store.StatusRunning}, store.StatusWaitingInput, func(x *store.Execution) {
		x.PendingInput = &store.PendingInput{Kind: store.PendingApproval, Prompt: "ok?", ExpiresAt: time.Now().Add(-time.Minute)}
	}); err != nil {
		t.Fatal(err)
	}
	wantProblem(t, e.do(tok, "POST", "/executions/"+y.ID+"/continue", map[string]any{"answer": map[string]any{"approved": true}}),
		http.StatusConflict, "invalid_state", "")
	// Without a schema of its own, an approval takes {approved, comment}.
	got = must(t, e.do(tok, "GET", "/executions/"+y.ID, nil), http.StatusOK)
	if s := got["pending_input"].(map[string]any)["input_schema"].(map[string]any); s["required"].([]any)[0] != "approved" {
		t.Errorf("approval schema = %v", s)
	}
}

func testLauncherOrAdmin(t *testing.T, db *store.DB) {
	e := newEnv(t, db, nil)
	org := newOrg()
	task := e.createTask(e.token(owner(org)), "t", nil)
	launcher := e.token(member(org))
	otherMember := e.token(user{org, "member-2", "member", []string{"kadu.run"}})
	adm := e.token(admin(org))
	bodies := map[string]any{"continue": map[string]any{"answer": map[string]any{"month": "2026-03"}}, "cancel": nil}
	codes := map[string]int{"continue": http.StatusAccepted, "cancel": http.StatusOK}
	for _, action := range []string{"continue", "cancel"} {
		x := e.executionIn(org, task, "member-1", store.StatusWaitingInput)
		wantProblem(t, e.do(otherMember, "POST", "/executions/"+x.ID+"/"+action, bodies[action]), http.StatusForbidden, "forbidden_role", "")
		must(t, e.do(launcher, "POST", "/executions/"+x.ID+"/"+action, bodies[action]), codes[action])
		y := e.executionIn(org, task, "member-1", store.StatusWaitingInput)
		must(t, e.do(adm, "POST", "/executions/"+y.ID+"/"+action, bodies[action]), codes[action])
	}
}

func testExecutionSoftDelete(t *testing.T, db *store.DB) {
	e := newEnv(t, db, nil)
	org := newOrg()
	tok := e.token(owner(org))
	task := e.createTask(tok, "t", nil)
	x := e.executionIn(org, task, "owner-1", store.StatusSucceeded)
	keep := e.executionIn(org, task, "owner-1", store.StatusSucceeded)
	must(t, e.do(tok, "DELETE", "/executions/"+x.ID, nil), http.StatusOK)
	for _, r := range []resp{
		e.do(tok, "GET", "/executions/"+x.ID, nil),
		e.do(tok, "GET", "/executions/"+x.ID+"/steps", nil),
		e.do(tok, "DELETE", "/executions/"+x.ID, nil),
		e.do(tok, "POST", "/executions/"+x.ID+"/cancel", nil),
	} {
		wantProblem(t, r, http.StatusNotFound, "not_found", "")
	}
	l := must(t, e.do(tok, "GET", "/executions", nil), http.StatusOK)
	if d := l["data"].([]any); len(d) != 1 || d[0].(map[string]any)["id"] != keep.ID {
		t.Errorf("list = %v, want only %s", d, keep.ID)
	}
	// Deleting the task blocks new runs, not the executions it had.
	must(t, e.do(tok, "DELETE", "/tasks/"+task, nil), http.StatusOK)
	must(t, e.do(tok, "GET", "/executions/"+keep.ID, nil), http.StatusOK)
}
