package ratelimit

import (
	"database/sql"
	"math/rand/v2"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // driver "pgx"

	"github.com/kobana/kadu/core/store/pgtest"
)

// TestPostgresStatementIsRuleCheck runs one random schedule of requests
// through rule.check in Go and through checkSQL, and wants the same
// decision, the same wait and the same stored TAT every time: the shared
// limiter decides exactly as the single node does.
func TestPostgresStatementIsRuleCheck(t *testing.T) {
	cluster := pgtest.Shared(t)
	db, err := sql.Open("pgx", cluster.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	applyMigration(t, db, "postgres")

	rules := []rule{newRule(1, DefaultBurstWindow), newRule(7, DefaultBurstWindow), newRule(60, DefaultBurstWindow),
		newRule(600, 30*time.Second), newRule(6000, time.Second)}
	keys := []string{"org:org_1", "org:org_2", "ip:203.0.113.7", "ip:2001:db8::/64"}
	want := map[string]int64{}
	rng := rand.New(rand.NewPCG(1, 2))
	now := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC).UnixMicro()
	allowed, refused := 0, 0
	for i := range 3000 {
		key, r := keys[rng.IntN(len(keys))], rules[rng.IntN(len(rules))]
		now += rng.Int64N(2 * r.interval / int64(1+rng.IntN(8)))
		next, wantOK, wantWait := r.check(want[key], now)
		want[key] = next
		ok, wait, err := checkDB(t.Context(), db, key, r, now)
		if err != nil {
			t.Fatal(err)
		}
		if ok != wantOK || (!ok && wait != wantWait) {
			t.Fatalf("request %d (%s, interval %d µs, tolerance %d µs): database says %v, wait %d µs; Go says %v, %d µs",
				i, key, r.interval, r.tolerance, ok, wait, wantOK, wantWait)
		}
		if ok {
			allowed++
		} else {
			refused++
		}
	}
	if allowed < 500 || refused < 500 {
		t.Fatalf("schedule too one-sided to prove anything: %d allowed, %d refused", allowed, refused)
	}
	for key, tat := range want {
		var got int64
		if err := db.QueryRow(`SELECT tat FROM rate_limits WHERE key = $1`, key).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != tat {
			t.Errorf("%s: stored TAT %d, want %d", key, got, tat)
		}
	}

	// Purge drops exactly the rows whose TAT is not in the future.
	live := 0
	for _, tat := range want {
		if tat > now {
			live++
		}
	}
	n, err := purgeDB(t.Context(), db, now)
	if err != nil {
		t.Fatal(err)
	}
	var left int
	if err := db.QueryRow(`SELECT count(*) FROM rate_limits`).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != live || int(n) != len(want)-live {
		t.Errorf("purge deleted %d rows and left %d; want %d deleted, %d left", n, left, len(want)-live, live)
	}
	t.Logf("%d allowed, %d refused, %d rows purged", allowed, refused, n)
}
