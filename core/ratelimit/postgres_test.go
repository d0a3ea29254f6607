package ratelimit_test

import (
	"context"
	"database/sql"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kobana/kadu/core/internal/fakeclock"
	"github.com/kobana/kadu/core/ratelimit"
	"github.com/kobana/kadu/core/store/pgtest"
)

// openPool opens a pool of at most maxConns connections to dsn, as one
// server process would have, closed by t.Cleanup.
func openPool(t testing.TB, dsn string, maxConns int) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(maxConns)
	db.SetMaxIdleConns(maxConns)
	t.Cleanup(func() { db.Close() })
	return db
}

// newDatabase creates a database on cluster holding table rate_limits and
// returns its DSN.
func newDatabase(t testing.TB, cluster *pgtest.Cluster) string {
	t.Helper()
	dsn := cluster.NewDatabase(t)
	db := openPool(t, dsn, 1)
	ratelimit.ApplyMigration(t, db, "postgres")
	db.Close()
	return dsn
}

// failOnWarn is a log handler that fails the test on any warning: with a
// database, a warning means a check fell back to memory, which would hide
// a broken statement behind the per-replica limit.
type failOnWarn struct{ t testing.TB }

func (h failOnWarn) Enabled(context.Context, slog.Level) bool { return true }
func (h failOnWarn) Handle(_ context.Context, r slog.Record) error {
	h.t.Errorf("unexpected log: %s %s", r.Level, r.Message)
	r.Attrs(func(a slog.Attr) bool { h.t.Errorf("  %s", a); return true })
	return nil
}
func (h failOnWarn) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h failOnWarn) WithGroup(string) slog.Handler      { return h }

func TestPostgres(t *testing.T) {
	cluster := pgtest.Shared(t)
	t.Run("Suite", func(t *testing.T) {
		runSuite(t, func(t *testing.T, opts ratelimit.Options) *ratelimit.Limiter {
			opts.DB = openPool(t, newDatabase(t, cluster), 4)
			opts.Logger = slog.New(failOnWarn{t})
			return newLimiter(t, opts)
		})
	})
	t.Run("SharedAcrossReplicas", func(t *testing.T) { testSharedAcrossReplicas(t, cluster) })
	t.Run("Purge", func(t *testing.T) { testPurge(t, cluster) })
	t.Run("DatabaseClock", func(t *testing.T) { testDatabaseClock(t, cluster) })
}

// hammer runs workers goroutines per limiter, all charging one organisation
// as fast as they can, while the clock moves steps × step. The clock moves
// only after every worker has had its turn at the current time, so each
// moment is saturated. At the last moment each limiter sends requests until
// it is refused, so no allowance is left unused. It returns how many
// requests were allowed in all, and per limiter.
func hammer(t *testing.T, clk *fakeclock.Clock, limiters []*ratelimit.Limiter, workers, steps int, step time.Duration) (int64, []int64) {
	t.Helper()
	ctx := t.Context()
	allowed := make([]atomic.Int64, len(limiters))
	calls := make([]atomic.Int64, len(limiters))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i, l := range limiters {
		for range workers {
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					if ok, _ := l.AllowOrg(ctx, "org_shared"); ok {
						allowed[i].Add(1)
					}
					calls[i].Add(1)
				}
			})
		}
	}
	// settle waits until each limiter has finished a call begun after the
	// clock last moved: twice as many calls as its workers guarantees it.
	deadline := time.Now().Add(time.Minute) // a hang guard, not a timing assertion
	settle := func() {
		for i := range calls {
			target := calls[i].Load() + int64(2*workers)
			for calls[i].Load() < target {
				if time.Now().After(deadline) {
					close(stop)
					t.Fatalf("workers stopped making progress")
				}
				time.Sleep(50 * time.Microsecond)
			}
		}
	}
	settle()
	for range steps {
		clk.Advance(step)
		settle()
	}
	close(stop)
	wg.Wait()
	for i, l := range limiters {
		for {
			ok, _ := l.AllowOrg(ctx, "org_shared")
			if !ok {
				break
			}
			allowed[i].Add(1)
		}
	}
	var total int64
	per := make([]int64, len(limiters))
	for i := range allowed {
		per[i] = allowed[i].Load()
		total += per[i]
	}
	return total, per
}

// testSharedAcrossReplicas is the reason the database limiter exists: two
// server processes, each with its own connection pool, hammering one
// organisation, let through the limit once between them — burst + rate ×
// elapsed — not once each.
func testSharedAcrossReplicas(t *testing.T, cluster *pgtest.Cluster) {
	const (
		limit   = 600 // per minute: burst 100, then one per 100 ms
		burst   = 100
		steps   = 50
		step    = 100 * time.Millisecond // 5 s in all: 50 more requests
		workers = 4                      // per replica
		want    = burst + steps
	)
	dsn := newDatabase(t, cluster)

	t.Run("database", func(t *testing.T) {
		clk := newClock()
		var replicas []*ratelimit.Limiter
		for range 2 {
			replicas = append(replicas, newLimiter(t, ratelimit.Options{
				PerMinute: perMinute(limit),
				DB:        openPool(t, dsn, workers), // each replica its own pool
				Now:       clk.Now,
				Logger:    slog.New(failOnWarn{t}),
			}))
		}
		got, per := hammer(t, clk, replicas, workers, steps, step)
		t.Logf("allowed %d (replicas %v) over %s at %d/min; burst + rate × elapsed = %d", got, per, steps*step, limit, want)
		// Each replica first asks its own memory; the shared count it then
		// consults can trail that by under one interval, so each replica may
		// leave at most one request of the allowance unused.
		if got > want || got < want-int64(len(replicas)) {
			t.Errorf("two replicas allowed %d requests, want %d (at least %d); a per-replica limit would allow about %d",
				got, want, want-len(replicas), 2*want)
		}
		for i, n := range per {
			if n == 0 {
				t.Errorf("replica %d allowed nothing: the test did not exercise both", i)
			}
		}
	})

	// Without the database each replica enforces the limit alone, and the
	// same traffic gets through twice: what docs/reference/limits.md#rate-limits forbids for replicas.
	t.Run("memory per replica lets 2× through", func(t *testing.T) {
		clk := newClock()
		replicas := []*ratelimit.Limiter{
			newLimiter(t, ratelimit.Options{PerMinute: perMinute(limit), Now: clk.Now}),
			newLimiter(t, ratelimit.Options{PerMinute: perMinute(limit), Now: clk.Now}),
		}
		got, _ := hammer(t, clk, replicas, workers, steps, step)
		if got != 2*want {
			t.Errorf("two in-memory limiters allowed %d, want %d (the limit twice)", got, 2*want)
		}
	})
}

func testPurge(t *testing.T, cluster *pgtest.Cluster) {
	ctx := t.Context()
	dsn := newDatabase(t, cluster)
	db := openPool(t, dsn, 2)
	clk := newClock()
	l := newLimiter(t, ratelimit.Options{PerMinute: perMinute(60), DB: db, Now: clk.Now, Logger: slog.New(failOnWarn{t})})
	for range 10 {
		l.AllowOrg(ctx, "org_busy") // owes 10 s
	}
	for _, ip := range []string{"203.0.113.1", "203.0.113.2", "2001:db8::1"} {
		l.AllowIP(ctx, ip) // owe 1 s each
	}
	keys := func() []string {
		rows, err := db.QueryContext(ctx, `SELECT key FROM rate_limits ORDER BY key`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var ks []string
		for rows.Next() {
			var k string
			if err := rows.Scan(&k); err != nil {
				t.Fatal(err)
			}
			ks = append(ks, k)
		}
		return ks
	}
	if got := keys(); len(got) != 4 {
		t.Fatalf("rows before purge: %q, want 4", got)
	}

	clk.Advance(5 * time.Second)
	n, err := l.Purge(ctx)
	if err != nil {
		t.Fatalf("Purge: %v", err)
	}
	if got := keys(); len(got) != 1 || got[0] != "org:org_busy" {
		t.Errorf("rows after purge 5 s later: %q, want only org:org_busy (still owing)", got)
	}
	if n != 6 { // three idle addresses, in memory and in the table
		t.Errorf("Purge = %d, want 6", n)
	}
	// What the busy organisation owes survived: 5 more now, not 10.
	if n := exhaust(t, func() (bool, time.Duration) { return l.AllowOrg(ctx, "org_busy") }, 100); n != 5 {
		t.Errorf("after the purge the busy organisation got %d, want 5", n)
	}

	clk.Advance(time.Minute)
	if _, err := l.Purge(ctx); err != nil {
		t.Fatalf("Purge: %v", err)
	}
	if got := keys(); len(got) != 0 {
		t.Errorf("rows a minute later: %q, want none", got)
	}
}

// testDatabaseClock: without Options.Now the statements read the database
// server's clock, so replicas with skewed clocks still agree.
func testDatabaseClock(t *testing.T, cluster *pgtest.Cluster) {
	ctx := t.Context()
	db := openPool(t, newDatabase(t, cluster), 2)
	l := newLimiter(t, ratelimit.Options{PerMinute: perMinute(6), DB: db, Logger: slog.New(failOnWarn{t})}) // one per 10 s
	if ok, _ := l.AllowOrg(ctx, "org_1"); !ok {
		t.Fatal("first request refused")
	}
	ok, retry := l.AllowOrg(ctx, "org_1")
	if ok || retry < time.Second || retry > 10*time.Second {
		t.Errorf("second request: allowed %v, Retry-After %s; want refused, 1–10 s", ok, retry)
	}
	var tat int64
	if err := db.QueryRowContext(ctx, `SELECT tat FROM rate_limits WHERE key = 'org:org_1'`).Scan(&tat); err != nil {
		t.Fatal(err)
	}
	if d := time.Until(time.UnixMicro(tat)); d < 0 || d > 11*time.Second {
		t.Errorf("stored TAT is %s from now, want about 10 s: the database clock was not used", d)
	}
}
