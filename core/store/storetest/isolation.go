package storetest

import (
	"testing"
	"time"

	"github.com/kobana/kadu/core/store"
)

// testOrgIsolation: organisation B reaches none of A's rows through any
// method, and its attempts change nothing.
func testOrgIsolation(t *testing.T, db *store.DB) {
	ctx := t.Context()
	a, b := newOrg(t, db), newOrg(t, db)
	task := newTask(t, db, a, "secret")
	running := driveTo(t, db, newExecution(t, db, a, task.ID), store.StatusRunning)
	done := execIn(t, db, a, store.StatusSucceeded)
	step, err := db.AppendStep(ctx, a, store.Step{ExecutionID: running.ID, Name: "s"})
	wantOK(t, "AppendStep", err)
	_, err = db.BeginIdempotent(ctx, a, "k", "POST", route, digest, time.Now())
	wantOK(t, "BeginIdempotent", err)

	name := "pwned"
	notFound := map[string]error{}
	_, notFound["GetTask"] = db.GetTask(ctx, b, task.ID)
	_, notFound["UpdateTask"] = db.UpdateTask(ctx, b, task.ID, store.TaskPatch{Name: &name})
	_, notFound["SetLaunchPolicy"] = db.SetLaunchPolicy(ctx, b, task.ID, store.LaunchPolicy{Roles: []string{"viewer"}})
	_, notFound["SetDestinations"] = db.SetDestinations(ctx, b, task.ID, []store.Destination{{Type: "webhook", WebhookID: "whk_evil"}})
	notFound["SoftDeleteTask"] = db.SoftDeleteTask(ctx, b, task.ID)
	_, notFound["CreateExecution"] = db.CreateExecution(ctx, b, store.Execution{TaskID: task.ID})
	_, notFound["CreateExecution previous"] = db.CreateExecution(ctx, b, store.Execution{TaskID: newTask(t, db, b, "mine").ID, PreviousExecutionID: done.ID})
	_, notFound["GetExecution"] = db.GetExecution(ctx, b, running.ID)
	_, notFound["Transition"] = db.Transition(ctx, b, running.ID, []store.Status{store.StatusRunning}, store.StatusCancelling, nil)
	_, notFound["StartExecution"] = db.StartExecution(ctx, b, running.ID, 0, nil)
	_, notFound["AddCost"] = db.AddCost(ctx, b, running.ID, 1_000_000)
	notFound["SoftDeleteExecution"] = db.SoftDeleteExecution(ctx, b, done.ID)
	_, notFound["AppendStep"] = db.AppendStep(ctx, b, store.Step{ExecutionID: running.ID, Name: "evil"})
	_, notFound["ListSteps"] = db.ListSteps(ctx, b, running.ID, store.StepListParams{})
	_, notFound["UpdateStep"] = db.UpdateStep(ctx, b, step.ID, func(s *store.Step) { s.Summary = "evil" })
	notFound["CompleteIdempotent"] = db.CompleteIdempotent(ctx, b, "k", 200, []byte("evil"))
	notFound["AbandonIdempotent"] = db.AbandonIdempotent(ctx, b, "k")
	for method, err := range notFound {
		wantErr(t, method+" from another organisation", err, store.ErrNotFound)
	}

	tasks, err := db.ListTasks(ctx, b, "", store.ListParams{})
	wantOK(t, "ListTasks", err)
	for _, tk := range tasks.Items {
		if tk.OrgID != b {
			t.Errorf("ListTasks of B shows %s of %s", tk.ID, tk.OrgID)
		}
	}
	for _, f := range []store.ExecutionFilter{{}, {TaskID: task.ID}, {Status: store.StatusRunning}} {
		page, err := db.ListExecutions(ctx, b, f, store.ListParams{})
		wantOK(t, "ListExecutions", err)
		if len(page.Items) != 0 {
			t.Errorf("ListExecutions(%+v) of B shows %d of A's executions", f, len(page.Items))
		}
	}
	if n, err := db.CountActive(ctx, b); err != nil || n != 0 {
		t.Errorf("CountActive of B = %d, %v; want 0", n, err)
	}
	if u, err := db.MonthUsage(ctx, b, time.Now()); err != nil || u.CostCents != 0 {
		t.Errorf("MonthUsage of B = %+v, %v; want no cost", u, err)
	}

	// A's rows are as they were.
	gotTask, err := db.GetTask(ctx, a, task.ID)
	wantOK(t, "GetTask", err)
	if gotTask.Version != 1 || gotTask.Name != "secret" || len(gotTask.Destinations) != 0 {
		t.Errorf("A's task changed: %+v", gotTask)
	}
	gotExec, err := db.GetExecution(ctx, a, running.ID)
	wantOK(t, "GetExecution", err)
	if gotExec.Status != store.StatusRunning || gotExec.Cost.AmountCents != 0 {
		t.Errorf("A's execution changed: %+v", gotExec)
	}
	if _, err := db.GetExecution(ctx, a, done.ID); err != nil {
		t.Errorf("A's terminal execution: %v", err)
	}
	steps, err := db.ListSteps(ctx, a, running.ID, store.StepListParams{})
	wantOK(t, "ListSteps", err)
	if len(steps.Items) != 1 || steps.Items[0].Summary != "" {
		t.Errorf("A's steps changed: %+v", steps.Items)
	}
	_, err = db.BeginIdempotent(ctx, a, "k", "POST", route, digest, time.Now())
	wantErr(t, "A's key still in flight", err, store.ErrIdempotencyInFlight)
}
