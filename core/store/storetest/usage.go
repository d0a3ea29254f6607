package storetest

import (
	"testing"
	"time"

	"github.com/kobana/kadu/core/store"
)

func testCostAndUsage(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org, other := newOrg(t, db), newOrg(t, db)
	e1 := execIn(t, db, org, store.StatusRunning)
	e2 := execIn(t, db, org, store.StatusRunning)
	execIn(t, db, other, store.StatusQueued)

	total, err := db.AddCost(ctx, org, e1.ID, 100)
	wantOK(t, "AddCost", err)
	if total != 100 {
		t.Errorf("total = %d, want 100", total)
	}
	total, err = db.AddCost(ctx, org, e1.ID, 250)
	wantOK(t, "AddCost", err)
	if total != 350 {
		t.Errorf("total = %d, want 350", total)
	}
	_, err = db.AddCost(ctx, org, e2.ID, 50)
	wantOK(t, "AddCost", err)
	if _, err := db.AddCost(ctx, org, e1.ID, -1); err == nil {
		t.Errorf("negative AddCost: no error")
	}

	got, err := db.GetExecution(ctx, org, e1.ID)
	wantOK(t, "GetExecution", err)
	if got.Cost.AmountCents != 350 || got.Cost.Currency != store.Currency {
		t.Errorf("cost = %+v, want 350 BRL", got.Cost)
	}

	now := time.Now()
	wantUsage := func(what, orgID string, month time.Time, cost, launches int64) {
		t.Helper()
		u, err := db.MonthUsage(ctx, orgID, month)
		wantOK(t, what, err)
		if u.CostCents != cost || u.Executions != launches || !u.Month.Equal(store.MonthStart(month)) {
			t.Errorf("%s: usage = %+v, want %d cents, %d executions", what, u, cost, launches)
		}
	}
	wantUsage("this month", org, now, 400, 2)
	wantUsage("other organisation", other, now, 0, 1)
	wantUsage("last month", org, store.MonthStart(now).Add(-time.Hour), 0, 0)
	wantUsage("next month", org, store.MonthStart(now).AddDate(0, 1, 0), 0, 0)

	// Deleting an execution does not give its cost back.
	_, err = db.Transition(ctx, org, e1.ID, []store.Status{store.StatusRunning}, store.StatusSucceeded, nil)
	wantOK(t, "→succeeded", err)
	wantOK(t, "SoftDeleteExecution", db.SoftDeleteExecution(ctx, org, e1.ID))
	_, err = db.PurgeDeleted(ctx, time.Now().Add(time.Second))
	wantOK(t, "PurgeDeleted", err)
	wantUsage("after delete and purge", org, now, 400, 2)

	if m := store.MonthStart(time.Date(2026, 3, 31, 23, 30, 0, 0, time.FixedZone("BRT", -3*3600))); !m.Equal(time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("MonthStart is not the UTC month: %v", m)
	}
}
