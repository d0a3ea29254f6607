package store_test

import (
	"context"
	"testing"

	"github.com/kobana/kadu/core/store"
	"github.com/kobana/kadu/core/store/pgtest"
	"github.com/kobana/kadu/core/store/storetest"
)

// openPostgres opens a new database on cluster.
func openPostgres(t testing.TB, cluster *pgtest.Cluster) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), store.Options{
		Driver:   store.DriverPostgres,
		DSN:      cluster.NewDatabase(t),
		MaxConns: 8,
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

// TestPostgres runs the suite on a throwaway PostgreSQL cluster, one
// database per test.
func TestPostgres(t *testing.T) {
	cluster := pgtest.Shared(t)
	t.Run("Suite", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T) *store.DB { return openPostgres(t, cluster) })
	})
	t.Run("Migrate", func(t *testing.T) {
		testMigrate(t, store.Options{Driver: store.DriverPostgres, DSN: cluster.NewDatabase(t)})
	})
}
