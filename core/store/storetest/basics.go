package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/kobana/kadu/core/store"
)

// testPlaceholders checks that $N placeholders bind by number, not by order
// of appearance, including reuse: the SQL the back-ends share depends on it
// (ncruces/go-sqlite3 gets this wrong, silently).
func testPlaceholders(t *testing.T, db *store.DB) {
	ctx := t.Context()
	const q = `SELECT CAST($3 AS TEXT), CAST($1 AS TEXT), CAST($2 AS TEXT), CAST($1 AS TEXT)`
	check := func(what string, scan func(dest ...any) error) {
		t.Helper()
		var a, b, c, d string
		if err := scan(&a, &b, &c, &d); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if got := []string{a, b, c, d}; got[0] != "three" || got[1] != "one" || got[2] != "two" || got[3] != "one" {
			t.Errorf("%s: got %q, want [three one two one]", what, got)
		}
	}
	check("writer", db.Writer().QueryRowContext(ctx, q, "one", "two", "three").Scan)
	wantOK(t, "InTx", db.InTx(ctx, func(tx *store.Tx) error {
		check("transaction", tx.SQL().QueryRowContext(ctx, q, "one", "two", "three").Scan)
		return nil
	}))

	var n int64
	var s string
	err := db.Writer().QueryRowContext(ctx, `SELECT $2 + 1, CAST($1 AS TEXT)`, "x", int64(41)).Scan(&n, &s)
	if err != nil || n != 42 || s != "x" {
		t.Errorf("mixed types: got %d, %q, %v; want 42, \"x\", nil", n, s, err)
	}

	// Through the store: CreateTask binds $14 twice and the UPDATE of
	// UpdateTask names $3 before $1 and $2.
	org := newOrg(t, db)
	task := newTask(t, db, org, "placeholders")
	if !task.CreatedAt.Equal(task.UpdatedAt) {
		t.Errorf("created_at %v != updated_at %v", task.CreatedAt, task.UpdatedAt)
	}
	name := "renamed"
	got, err := db.UpdateTask(ctx, org, task.ID, store.TaskPatch{Name: &name})
	wantOK(t, "UpdateTask", err)
	if got.Name != name || got.OrgID != org || got.ID != task.ID {
		t.Errorf("UpdateTask = %+v", got)
	}
}

// testInTx checks that InTx commits on nil, rolls back on error and panic,
// and that a Tx sees its own writes.
func testInTx(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org := newOrg(t, db)
	task := newTask(t, db, org, "tx")

	boom := errors.New("boom")
	var rolledBack string
	err := db.InTx(ctx, func(tx *store.Tx) error {
		e, err := tx.CreateExecution(ctx, org, store.Execution{TaskID: task.ID})
		if err != nil {
			return err
		}
		rolledBack = e.ID
		if _, err := tx.GetExecution(ctx, org, e.ID); err != nil {
			t.Errorf("Tx does not see its own insert: %v", err)
		}
		var n int
		if err := tx.SQL().QueryRowContext(ctx, `SELECT COUNT(*) FROM executions WHERE org_id = $1`, org).Scan(&n); err != nil || n != 1 {
			t.Errorf("tx.SQL() count = %d, %v; want 1", n, err)
		}
		return boom
	})
	wantErr(t, "InTx returning an error", err, boom)
	_, err = db.GetExecution(ctx, org, rolledBack)
	wantErr(t, "execution of a rolled back tx", err, store.ErrNotFound)
	u, err := db.MonthUsage(ctx, org, time.Now())
	wantOK(t, "MonthUsage", err)
	if u.Executions != 0 {
		t.Errorf("usage after rollback = %d executions, want 0", u.Executions)
	}

	func() {
		defer func() {
			if recover() == nil {
				t.Errorf("InTx swallowed a panic")
			}
		}()
		_ = db.InTx(ctx, func(tx *store.Tx) error {
			e, err := tx.CreateExecution(ctx, org, store.Execution{TaskID: task.ID})
			rolledBack = e.ID
			if err != nil {
				return err
			}
			panic("in tx")
		})
	}()
	_, err = db.GetExecution(ctx, org, rolledBack)
	wantErr(t, "execution of a panicked tx", err, store.ErrNotFound)

	var kept string
	wantOK(t, "InTx", db.InTx(ctx, func(tx *store.Tx) error {
		e, err := tx.CreateExecution(ctx, org, store.Execution{TaskID: task.ID})
		kept = e.ID
		return err
	}))
	if _, err := db.GetExecution(ctx, org, kept); err != nil {
		t.Errorf("committed execution: %v", err)
	}
	// The writer is free again: a write outside a transaction goes through.
	if _, err := db.AddCost(ctx, org, kept, 1); err != nil {
		t.Errorf("AddCost after InTx: %v", err)
	}
}

func testEnsureOrg(t *testing.T, db *store.DB) {
	ctx := t.Context()
	id := store.NewID("org_")
	_, err := db.GetOrg(ctx, id)
	wantErr(t, "GetOrg before EnsureOrg", err, store.ErrNotFound)

	org, created, err := db.EnsureOrg(ctx, id, "free")
	wantOK(t, "EnsureOrg", err)
	if !created || org.ID != id || org.Plan != "free" || org.CreatedAt.IsZero() {
		t.Errorf("first EnsureOrg = %+v, created %v", org, created)
	}
	again, created, err := db.EnsureOrg(ctx, id, "pro")
	wantOK(t, "EnsureOrg again", err)
	if created || again != org {
		t.Errorf("second EnsureOrg = %+v, created %v; want %+v, false (plan kept)", again, created, org)
	}
	got, err := db.GetOrg(ctx, id)
	wantOK(t, "GetOrg", err)
	if got != org {
		t.Errorf("GetOrg = %+v, want %+v", got, org)
	}

	if _, _, err := db.EnsureOrg(ctx, "", "free"); err == nil || errors.Is(err, store.ErrNotFound) {
		t.Errorf("EnsureOrg with empty id: error = %v, want a plain error", err)
	}
	if _, err := db.GetTask(ctx, "", "tsk_x"); err == nil || errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetTask with empty org: error = %v, want a plain error", err)
	}
}

func testEnsureOrgConcurrent(t *testing.T, db *store.DB) {
	ctx := t.Context()
	id := store.NewID("org_")
	const n = 16
	orgs := make([]store.Org, n)
	created := make([]bool, n)
	errs := make([]error, n)
	concurrently(n, func(i int) {
		orgs[i], created[i], errs[i] = db.EnsureOrg(ctx, id, "free")
	})
	wins := 0
	for i := range n {
		wantOK(t, "EnsureOrg", errs[i])
		if created[i] {
			wins++
		}
		if orgs[i] != orgs[0] {
			t.Errorf("caller %d got %+v, caller 0 %+v", i, orgs[i], orgs[0])
		}
	}
	if wins != 1 {
		t.Errorf("%d callers created the organisation, want 1", wins)
	}
}
