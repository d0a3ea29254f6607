package storetest

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/kobana/kadu/core/store"
)

func testExecutionCreateGet(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org := newOrg(t, db)
	task := newTask(t, db, org, "run me")
	first := newExecution(t, db, org, task.ID)

	maxCost := int64(777)
	_, err := db.UpdateTask(ctx, org, task.ID, store.TaskPatch{MaxCostCents: &maxCost})
	wantOK(t, "UpdateTask", err)

	in := store.Execution{
		ID:                  "exe_ignored",
		Status:              store.StatusSucceeded, // ignored: executions start queued
		TaskID:              task.ID,
		LaunchedBy:          "usr_42",
		Input:               json.RawMessage(`{"b": 2, "a": [1, 2]}`),
		InputFileIDs:        []string{"file_1", "file_2"},
		PreviousExecutionID: first.ID,
		Cost:                store.Cost{AmountCents: 5000},
	}
	e, err := db.CreateExecution(ctx, org, in)
	wantOK(t, "CreateExecution", err)
	if !store.ValidID(store.PrefixExecution, e.ID) || e.Status != store.StatusQueued || e.OrgID != org ||
		e.TaskVersion != 2 || e.Cost != (store.Cost{AmountCents: 0, MaxCostCents: 777, Currency: "BRL"}) ||
		e.StartedAt != nil || e.FinishedAt != nil || e.Output != nil || e.PendingInput != nil || e.Failure != nil {
		t.Errorf("CreateExecution = %+v", e)
	}
	got, err := db.GetExecution(ctx, org, e.ID)
	wantOK(t, "GetExecution", err)
	sameJSON(t, "GetExecution", got, e)
	if string(got.Input) != string(in.Input) {
		t.Errorf("input text changed: %s", got.Input)
	}
	if first.TaskVersion != 1 || first.Cost.MaxCostCents != 500 || first.PreviousExecutionID != "" ||
		first.InputFileIDs == nil || len(first.InputFileIDs) != 0 {
		t.Errorf("first execution = %+v", first)
	}

	u, err := db.MonthUsage(ctx, org, time.Now())
	wantOK(t, "MonthUsage", err)
	if u.Executions != 2 || !u.Month.Equal(store.MonthStart(time.Now())) {
		t.Errorf("MonthUsage = %+v, want 2 executions this month", u)
	}
}

func testExecutionCreateNotFound(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org := newOrg(t, db)
	task := newTask(t, db, org, "t")
	_, err := db.CreateExecution(ctx, org, store.Execution{TaskID: "tsk_missing"})
	wantErr(t, "unknown task", err, store.ErrNotFound)
	_, err = db.CreateExecution(ctx, org, store.Execution{TaskID: task.ID, PreviousExecutionID: "exe_missing"})
	wantErr(t, "unknown previous execution", err, store.ErrNotFound)
	if _, err := db.CreateExecution(ctx, org, store.Execution{TaskID: task.ID, Input: json.RawMessage(`{`)}); err == nil {
		t.Errorf("invalid input JSON: no error")
	}
	page, err := db.ListExecutions(ctx, org, store.ExecutionFilter{}, store.ListParams{})
	wantOK(t, "ListExecutions", err)
	if len(page.Items) != 0 {
		t.Errorf("failed creates stored %d executions", len(page.Items))
	}
}

func testExecutionListFilters(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org := newOrg(t, db)
	a := newTask(t, db, org, "a")
	b := newTask(t, db, org, "b")

	a1 := newExecution(t, db, org, a.ID)
	time.Sleep(2 * time.Millisecond)
	mid := time.Now()
	time.Sleep(2 * time.Millisecond)
	b1 := driveTo(t, db, newExecution(t, db, org, b.ID), store.StatusRunning)
	a2 := driveTo(t, db, newExecution(t, db, org, a.ID), store.StatusFailed)
	time.Sleep(2 * time.Millisecond)
	end := time.Now()

	tests := []struct {
		name string
		f    store.ExecutionFilter
		want []store.Execution
	}{
		{name: "all", want: []store.Execution{a2, b1, a1}},
		{name: "task a", f: store.ExecutionFilter{TaskID: a.ID}, want: []store.Execution{a2, a1}},
		{name: "running", f: store.ExecutionFilter{Status: store.StatusRunning}, want: []store.Execution{b1}},
		{name: "task a, failed", f: store.ExecutionFilter{TaskID: a.ID, Status: store.StatusFailed}, want: []store.Execution{a2}},
		{name: "task b, failed", f: store.ExecutionFilter{TaskID: b.ID, Status: store.StatusFailed}, want: nil},
		{name: "after mid", f: store.ExecutionFilter{CreatedAfter: mid}, want: []store.Execution{a2, b1}},
		{name: "before mid", f: store.ExecutionFilter{CreatedBefore: mid}, want: []store.Execution{a1}},
		{name: "after mid, before end, task a", f: store.ExecutionFilter{CreatedAfter: mid, CreatedBefore: end, TaskID: a.ID}, want: []store.Execution{a2}},
		{name: "after end", f: store.ExecutionFilter{CreatedAfter: end}, want: nil},
	}
	for _, tt := range tests {
		page, err := db.ListExecutions(ctx, org, tt.f, store.ListParams{})
		wantOK(t, tt.name, err)
		if got, want := ids(page.Items, execID), ids(tt.want, execID); !slices.Equal(got, want) {
			t.Errorf("%s: got %q, want %q", tt.name, got, want)
		}
		if page.More {
			t.Errorf("%s: More on a short page", tt.name)
		}
	}
	page, err := db.ListExecutions(ctx, org, store.ExecutionFilter{Status: store.StatusFailed}, store.ListParams{})
	wantOK(t, "ListExecutions", err)
	if len(page.Items) == 1 {
		sameJSON(t, "listed execution", page.Items[0], a2)
	}
}

func testExecutionPagination(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org := newOrg(t, db)
	task := newTask(t, db, org, "paged")
	other := newTask(t, db, org, "other")
	var want []string
	for range 12 {
		want = append(want, newExecution(t, db, org, task.ID).ID)
		newExecution(t, db, org, other.ID)
	}
	slices.Reverse(want)

	var got []string
	p := store.ListParams{Limit: 5}
	f := store.ExecutionFilter{TaskID: task.ID}
	for pages := 0; ; pages++ {
		if pages > 10 {
			t.Fatalf("pagination does not end")
		}
		page, err := db.ListExecutions(ctx, org, f, p)
		wantOK(t, "ListExecutions", err)
		got = append(got, ids(page.Items, execID)...)
		newExecution(t, db, org, task.ID)
		if !page.More {
			break
		}
		p.Before = page.Items[len(page.Items)-1].ID
	}
	if !slices.Equal(got, want) {
		t.Errorf("pages = %q\nwant %q", got, want)
	}
}

func testExecutionSoftDelete(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org := newOrg(t, db)
	for _, s := range store.Statuses() {
		t.Run(string(s), func(t *testing.T) {
			e := execIn(t, db, org, s)
			err := db.SoftDeleteExecution(ctx, org, e.ID)
			if !s.Terminal() {
				wantErr(t, "deleting a "+string(s)+" execution", err, store.ErrConflict)
				if _, err := db.GetExecution(ctx, org, e.ID); err != nil {
					t.Errorf("refused delete hid the execution: %v", err)
				}
				return
			}
			wantOK(t, "SoftDeleteExecution", err)
			_, err = db.GetExecution(ctx, org, e.ID)
			wantErr(t, "GetExecution", err, store.ErrNotFound)
			wantErr(t, "SoftDeleteExecution again", db.SoftDeleteExecution(ctx, org, e.ID), store.ErrNotFound)
			_, err = db.ListSteps(ctx, org, e.ID, store.StepListParams{})
			wantErr(t, "ListSteps", err, store.ErrNotFound)
			_, err = db.AddCost(ctx, org, e.ID, 1)
			wantErr(t, "AddCost", err, store.ErrNotFound)
			_, err = db.AppendStep(ctx, org, store.Step{ExecutionID: e.ID, Name: "late"})
			wantErr(t, "AppendStep", err, store.ErrNotFound)
			_, err = db.CreateExecution(ctx, org, store.Execution{TaskID: e.TaskID, PreviousExecutionID: e.ID})
			wantErr(t, "CreateExecution after a deleted one", err, store.ErrNotFound)
			page, err := db.ListExecutions(ctx, org, store.ExecutionFilter{TaskID: e.TaskID}, store.ListParams{})
			wantOK(t, "ListExecutions", err)
			if len(page.Items) != 0 {
				t.Errorf("ListExecutions shows the deleted execution")
			}
		})
	}
}
