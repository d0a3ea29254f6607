package storetest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/kobana/kadu/core/store"
	"github.com/kobana/kadu/core/store/pgtest"
)

// The back-ends below serve the packages above the store, whose own tests
// run on each of them; the suite of this package does not use them.

// Backend is one store back-end that packages above the store (core/api,
// core/confirm) run their tests on: SQLite in a temporary directory, or a
// database of its own on the test process's shared PostgreSQL cluster
// (pgtest.Shared; a package that uses it stops it with pgtest.Run).
type Backend struct {
	Name   string
	driver string
}

// Backends are every back-end, SQLite first.
func Backends() []Backend {
	return []Backend{{Name: "sqlite", driver: store.DriverSQLite}, {Name: "postgres", driver: store.DriverPostgres}}
}

// Open opens a new, empty, migrated store on b for tb and closes it in
// tb.Cleanup. opts supplies what the test wants besides the driver and the
// DSN, which Open sets (e.g. Now, MaxConns).
func (b Backend) Open(tb testing.TB, opts store.Options) *store.DB {
	tb.Helper()
	opts.Driver = b.driver
	switch b.driver {
	case store.DriverSQLite:
		opts.DSN = filepath.Join(tb.TempDir(), "kadu.db")
	default:
		opts.DSN = pgtest.Shared(tb).NewDatabase(tb)
	}
	db, err := store.Open(context.Background(), opts)
	if err != nil {
		tb.Fatalf("store.Open on %s: %v", b.Name, err)
	}
	tb.Cleanup(func() { _ = db.Close() })
	return db
}

// EachBackend runs every test of tests on every back-end, as parallel
// subtests named <backend>/<test>; setup builds what a test gets (a store,
// or a harness around one) on its back-end.
func EachBackend[T any](t *testing.T, tests map[string]func(*testing.T, T), setup func(*testing.T, Backend) T) {
	t.Helper()
	for _, b := range Backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			for name, fn := range tests {
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					fn(t, setup(t, b))
				})
			}
		})
	}
}
