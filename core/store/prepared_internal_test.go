package store

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"
)

// TestPreparedReads: on SQLite a read prepares its statement once and reuses
// it, the reads still answer what the data says (another organisation's row
// stays invisible), and a text past the bound still runs, unprepared.
func TestPreparedReads(t *testing.T) {
	ctx := t.Context()
	db, err := Open(ctx, Options{Driver: DriverSQLite, DSN: filepath.Join(t.TempDir(), "kadu.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if db.prepared == nil {
		t.Fatal("SQLite store without prepared reads")
	}
	if _, _, err := db.EnsureOrg(ctx, "org_a", "free"); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		o, err := db.GetOrg(ctx, "org_a")
		if err != nil || o.Plan != "free" {
			t.Fatalf("GetOrg = %+v, %v", o, err)
		}
		if _, err := db.GetOrg(ctx, "org_b"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("GetOrg of a missing org: %v, want ErrNotFound", err)
		}
	}
	db.prepared.mu.RLock()
	n := len(db.prepared.stmts)
	db.prepared.mu.RUnlock()
	if n != 1 {
		t.Fatalf("%d statements prepared for one query text run 6 times, want 1", n)
	}

	// A text that does not prepare reports the query's own error.
	var x int
	if err := db.read.QueryRowContext(ctx, "SELECT FROM nowhere").Scan(&x); err == nil {
		t.Fatal("invalid SQL ran")
	}

	// Fill the cache, then one more text: it runs all the same.
	for i := len(db.prepared.stmts); i < maxPreparedReads; i++ {
		if err := db.read.QueryRowContext(ctx, fmt.Sprintf("SELECT %d", i)).Scan(&x); err != nil || x != i {
			t.Fatalf("SELECT %d = %d, %v", i, x, err)
		}
	}
	if err := db.read.QueryRowContext(ctx, "SELECT 'past the bound' IS NOT NULL").Scan(&x); err != nil || x != 1 {
		t.Fatalf("a query past the bound = %d, %v", x, err)
	}
	if got := len(db.prepared.stmts); got != maxPreparedReads {
		t.Fatalf("%d statements prepared, want the bound %d", got, maxPreparedReads)
	}
}
