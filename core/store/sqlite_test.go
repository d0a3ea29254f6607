package store_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/kobana/kadu/core/store"
	"github.com/kobana/kadu/core/store/storetest"
)

// openSQLite opens a new database file in t's temporary directory.
func openSQLite(t testing.TB) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), store.Options{
		Driver: store.DriverSQLite,
		DSN:    filepath.Join(t.TempDir(), "kadu.db"),
	})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return db
}

func TestSQLite(t *testing.T) {
	storetest.Run(t, func(t *testing.T) *store.DB { return openSQLite(t) })
}
