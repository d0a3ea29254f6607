package store_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/kobana/kadu/core/store"
	"github.com/kobana/kadu/core/store/pgtest"
)

// TestIdempotencyLockFromOptions: a key held by a request lost with its
// replica is free again after Options.IdempotencyLock (what core/app derives
// from http.write_timeout), not after the 10-minute default.
func TestIdempotencyLockFromOptions(t *testing.T) {
	const lock = 90 * time.Second
	check := func(t *testing.T, opts store.Options) {
		opts.IdempotencyLock = lock
		ctx := context.Background()
		db, err := store.Open(ctx, opts)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		t.Cleanup(func() { _ = db.Close() })
		if _, _, err := db.EnsureOrg(ctx, "org_lock", "developer"); err != nil {
			t.Fatal(err)
		}
		const route, digest = "POST /tasks", "sha256:aaaa"
		t0 := time.Now().Add(-time.Hour)
		if _, err := db.BeginIdempotent(ctx, "org_lock", "k", "POST", route, digest, t0); err != nil {
			t.Fatalf("BeginIdempotent: %v", err)
		}
		_, err = db.BeginIdempotent(ctx, "org_lock", "k", "POST", route, digest, t0.Add(lock-time.Second))
		if !errors.Is(err, store.ErrIdempotencyInFlight) {
			t.Errorf("a retry within the lock: %v, want ErrIdempotencyInFlight", err)
		}
		rec, err := db.BeginIdempotent(ctx, "org_lock", "k", "POST", route, digest, t0.Add(lock))
		if err != nil || rec.Completed() {
			t.Errorf("a retry once the lock is over: %+v, %v; want the key taken over", rec, err)
		}
	}
	t.Run("sqlite", func(t *testing.T) {
		check(t, store.Options{Driver: store.DriverSQLite, DSN: filepath.Join(t.TempDir(), "kadu.db")})
	})
	t.Run("postgres", func(t *testing.T) {
		cluster := pgtest.Shared(t)
		check(t, store.Options{Driver: store.DriverPostgres, DSN: cluster.NewDatabase(t), MaxConns: 4})
	})
}
