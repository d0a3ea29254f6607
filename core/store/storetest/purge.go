package storetest

import (
	"testing"
	"time"

	"github.com/kobana/kadu/core/store"
)

func testPurgeDeleted(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org := newOrg(t, db)
	doomedTask := newTask(t, db, org, "doomed")
	liveTask := newTask(t, db, org, "live")
	doomed := driveTo(t, db, newExecution(t, db, org, liveTask.ID), store.StatusSucceeded)
	for range 3 {
		_, err := db.AppendStep(ctx, org, store.Step{ExecutionID: doomed.ID, Name: "s"})
		wantOK(t, "AppendStep", err)
	}
	// An execution of a deleted task is not deleted with it.
	orphan := driveTo(t, db, newExecution(t, db, org, doomedTask.ID), store.StatusFailed)
	_, err := db.AppendStep(ctx, org, store.Step{ExecutionID: orphan.ID, Name: "kept"})
	wantOK(t, "AppendStep", err)

	wantOK(t, "SoftDeleteTask", db.SoftDeleteTask(ctx, org, doomedTask.ID))
	wantOK(t, "SoftDeleteExecution", db.SoftDeleteExecution(ctx, org, doomed.ID))

	p, err := db.PurgeDeleted(ctx, time.Now().Add(-time.Hour))
	wantOK(t, "PurgeDeleted an hour ago", err)
	if p != (store.Purged{}) {
		t.Errorf("purged %+v of rows deleted just now", p)
	}
	count := func(table string) int {
		var n int
		if err := db.Writer().QueryRowContext(ctx, `SELECT COUNT(*) FROM `+table).Scan(&n); err != nil {
			t.Fatalf("counting %s: %v", table, err)
		}
		return n
	}
	if count("tasks") != 2 || count("executions") != 2 || count("steps") != 4 {
		t.Errorf("soft delete removed rows: %d tasks, %d executions, %d steps", count("tasks"), count("executions"), count("steps"))
	}

	p, err = db.PurgeDeleted(ctx, time.Now().Add(time.Second))
	wantOK(t, "PurgeDeleted", err)
	if p != (store.Purged{Tasks: 1, Executions: 1, Steps: 3}) {
		t.Errorf("purged %+v, want 1 task, 1 execution, 3 steps", p)
	}
	if count("tasks") != 1 || count("executions") != 1 || count("steps") != 1 {
		t.Errorf("after purge: %d tasks, %d executions, %d steps", count("tasks"), count("executions"), count("steps"))
	}
	got, err := db.GetExecution(ctx, org, orphan.ID)
	wantOK(t, "execution of a purged task", err)
	if got.TaskID != doomedTask.ID {
		t.Errorf("orphan task id = %s", got.TaskID)
	}
	if _, err := db.GetTask(ctx, org, liveTask.ID); err != nil {
		t.Errorf("live task: %v", err)
	}
}
