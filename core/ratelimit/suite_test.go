package ratelimit_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kobana/kadu/core/internal/fakeclock"
	"github.com/kobana/kadu/core/ratelimit"
)

// newClock is the clock the tests move by hand.
func newClock() *fakeclock.Clock { return fakeclock.New(time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)) }

func perMinute(n int) func(context.Context, string) (int, error) {
	return func(context.Context, string) (int, error) { return n, nil }
}

// opener returns a new Limiter for opts, on a fresh back-end (its own
// memory; with a database, its own database), closed by t.Cleanup.
type opener func(t *testing.T, opts ratelimit.Options) *ratelimit.Limiter

// runSuite holds every behavioural test of a Limiter; memory and PostgreSQL
// each run it, so both back-ends decide alike.
func runSuite(t *testing.T, open opener) {
	t.Run("OrgLimit", func(t *testing.T) { testOrgLimit(t, open) })
	t.Run("KeysIndependent", func(t *testing.T) { testKeysIndependent(t, open) })
	t.Run("IPv6By64", func(t *testing.T) { testIPv6By64(t, open) })
	t.Run("PlanChangeApplies", func(t *testing.T) { testPlanChangeApplies(t, open) })
	t.Run("NoLimit", func(t *testing.T) { testNoLimit(t, open) })
	t.Run("RetryAfterIsEnough", func(t *testing.T) { testRetryAfterIsEnough(t, open) })
}

// step is a moment in a scenario: move the clock, send calls requests,
// expect wantOK of them allowed and, if some were refused, the last one's
// Retry-After.
type step struct {
	advance   time.Duration
	calls     int
	wantOK    int
	wantRetry time.Duration // 0: none refused
}

func testOrgLimit(t *testing.T, open opener) {
	tests := []struct {
		name   string
		limit  int           // per minute
		window time.Duration // BurstWindow; 0: default
		steps  []step
	}{
		{name: "60/min: a burst of 10, then one a second", limit: 60, steps: []step{
			{calls: 15, wantOK: 10, wantRetry: time.Second},
			{advance: time.Second, calls: 3, wantOK: 1, wantRetry: time.Second},
			{advance: 500 * time.Millisecond, calls: 1, wantOK: 0, wantRetry: time.Second},
			{advance: 500 * time.Millisecond, calls: 1, wantOK: 1},
			{advance: 5 * time.Second, calls: 6, wantOK: 5, wantRetry: time.Second},
		}},
		{name: "steady client at the limit is never refused", limit: 60, steps: []step{
			{calls: 1, wantOK: 1}, {advance: time.Second, calls: 1, wantOK: 1}, {advance: time.Second, calls: 1, wantOK: 1},
			{advance: time.Second, calls: 1, wantOK: 1}, {advance: time.Second, calls: 1, wantOK: 1},
		}},
		{name: "6/min: Retry-After counts down in whole seconds", limit: 6, steps: []step{
			{calls: 2, wantOK: 1, wantRetry: 10 * time.Second},
			{advance: 2500 * time.Millisecond, calls: 1, wantOK: 0, wantRetry: 8 * time.Second}, // 7.5 s rounds up
			{advance: 7 * time.Second, calls: 1, wantOK: 0, wantRetry: time.Second},             // 0.5 s rounds up to 1
			{advance: 500 * time.Millisecond, calls: 2, wantOK: 1, wantRetry: 10 * time.Second},
		}},
		{name: "1/min: a minute to wait", limit: 1, steps: []step{
			{calls: 2, wantOK: 1, wantRetry: time.Minute},
			{advance: 59 * time.Second, calls: 1, wantOK: 0, wantRetry: time.Second},
			{advance: time.Second, calls: 1, wantOK: 1},
		}},
		{name: "6000/min: 1000 at once, then 100 a second", limit: 6000, steps: []step{
			{calls: 1100, wantOK: 1000, wantRetry: time.Second}, // 10 ms away, announced as 1 s
			{advance: time.Second, calls: 200, wantOK: 100, wantRetry: time.Second},
		}},
		{name: "idle for the burst window: a full burst again", limit: 60, steps: []step{
			{calls: 10, wantOK: 10},
			{advance: 10 * time.Second, calls: 11, wantOK: 10, wantRetry: time.Second},
		}},
		{name: "BurstWindow 30 s", limit: 60, window: 30 * time.Second, steps: []step{
			{calls: 40, wantOK: 30, wantRetry: time.Second},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := newClock()
			l := open(t, ratelimit.Options{PerMinute: perMinute(tt.limit), BurstWindow: tt.window, Now: clk.Now})
			for i, st := range tt.steps {
				clk.Advance(st.advance)
				gotOK, lastRetry := 0, time.Duration(0)
				for range st.calls {
					ok, retry := l.AllowOrg(t.Context(), "org_1")
					if ok {
						gotOK++
						if retry != 0 {
							t.Errorf("step %d: allowed with retryAfter %s, want 0", i, retry)
						}
					} else {
						lastRetry = retry
					}
				}
				if gotOK != st.wantOK || lastRetry != st.wantRetry {
					t.Fatalf("step %d (+%s, %d calls): %d allowed, Retry-After %s; want %d, %s",
						i, st.advance, st.calls, gotOK, lastRetry, st.wantOK, st.wantRetry)
				}
			}
		})
	}
}

// exhaust sends requests until one is refused and returns how many were
// allowed (at most max).
func exhaust(t *testing.T, allow func() (bool, time.Duration), max int) int {
	t.Helper()
	for n := range max {
		if ok, _ := allow(); !ok {
			return n
		}
	}
	t.Fatalf("still allowed after %d requests", max)
	return max
}

func testKeysIndependent(t *testing.T, open opener) {
	clk := newClock()
	l := open(t, ratelimit.Options{PerMinute: perMinute(60), IPPerMinute: 30, Now: clk.Now})
	ctx := t.Context()
	if n := exhaust(t, func() (bool, time.Duration) { return l.AllowOrg(ctx, "org_a") }, 100); n != 10 {
		t.Fatalf("org_a got %d requests, want a burst of 10", n)
	}
	if n := exhaust(t, func() (bool, time.Duration) { return l.AllowOrg(ctx, "org_b") }, 100); n != 10 {
		t.Errorf("org_b got %d requests after org_a spent its budget, want its own 10", n)
	}
	if n := exhaust(t, func() (bool, time.Duration) { return l.AllowIP(ctx, "203.0.113.7") }, 100); n != 5 {
		t.Errorf("an address got %d requests, want the IP burst of 5 (30/min)", n)
	}
	if n := exhaust(t, func() (bool, time.Duration) { return l.AllowIP(ctx, "203.0.113.8") }, 100); n != 5 {
		t.Errorf("the next address got %d requests, want its own 5", n)
	}
	if n := exhaust(t, func() (bool, time.Duration) { return l.AllowOrg(ctx, "203.0.113.9") }, 100); n != 10 {
		t.Errorf("an organisation whose id looks like an address got %d, want 10", n)
	}
	if ok, _ := l.AllowIP(ctx, "203.0.113.9"); !ok {
		t.Errorf("the address an organisation id spells was refused: the two share a budget")
	}
}

func testIPv6By64(t *testing.T, open opener) {
	clk := newClock()
	l := open(t, ratelimit.Options{IPPerMinute: 60, Now: clk.Now})
	ctx := t.Context()
	// Ten addresses of one /64 share its burst of 10.
	for i := range 10 {
		ip := fmt.Sprintf("2001:db8:1:2::%x", 0xa0+i)
		if ok, _ := l.AllowIP(ctx, ip); !ok {
			t.Fatalf("request %d from %s refused within the /64's burst", i, ip)
		}
	}
	if ok, retry := l.AllowIP(ctx, "2001:db8:1:2:ffff:ffff:ffff:ffff"); ok || retry != time.Second {
		t.Errorf("eleventh address of the /64: allowed %v, Retry-After %s; want refused, 1s", ok, retry)
	}
	if ok, _ := l.AllowIP(ctx, "2001:db8:1:3::1"); !ok {
		t.Errorf("the neighbouring /64 was refused: it must have its own budget")
	}
	// An IPv4 client seen through an IPv6 socket is the same client.
	if n := exhaust(t, func() (bool, time.Duration) { return l.AllowIP(ctx, "198.51.100.1") }, 100); n != 10 {
		t.Fatalf("IPv4 client got %d, want 10", n)
	}
	if ok, _ := l.AllowIP(ctx, "::ffff:198.51.100.1"); ok {
		t.Errorf("the IPv4-mapped form of a limited address was allowed")
	}
}

func testPlanChangeApplies(t *testing.T, open opener) {
	clk := newClock()
	var limit atomic.Int64
	limit.Store(60)
	l := open(t, ratelimit.Options{
		PerMinute: func(context.Context, string) (int, error) { return int(limit.Load()), nil },
		Now:       clk.Now,
	})
	ctx := t.Context()
	allow := func() (bool, time.Duration) { return l.AllowOrg(ctx, "org_1") }
	if n := exhaust(t, allow, 1000); n != 10 {
		t.Fatalf("at 60/min: %d allowed, want 10", n)
	}
	// One second later 60/min would allow one more; the upgrade to 600/min
	// allows ten. The time already owed is kept: an upgrade changes the
	// rate at once, it does not hand out a fresh burst.
	clk.Advance(time.Second)
	limit.Store(600)
	if n := exhaust(t, allow, 1000); n != 10 {
		t.Errorf("a second after the upgrade to 600/min: %d allowed, want 10", n)
	}
	// The downgrade to 6/min (one per 10 s, burst 1) applies to the next
	// request: the key's TAT is 10 s ahead, 9 s once a second has passed.
	clk.Advance(time.Second)
	limit.Store(6)
	if ok, retry := allow(); ok || retry != 9*time.Second {
		t.Errorf("after the downgrade to 6/min: allowed %v, Retry-After %s; want refused, 9s", ok, retry)
	}
	limit.Store(0) // plan without a limit
	for i := range 1000 {
		if ok, _ := allow(); !ok {
			t.Fatalf("unlimited plan refused request %d", i)
		}
	}
}

func testNoLimit(t *testing.T, open opener) {
	clk := newClock()
	l := open(t, ratelimit.Options{Now: clk.Now}) // no PerMinute
	for i := range 500 {
		if ok, _ := l.AllowOrg(t.Context(), "org_1"); !ok {
			t.Fatalf("request %d refused without an organisation limit", i)
		}
	}
}

// testRetryAfterIsEnough checks the promise a 429 makes: wait Retry-After
// and one request goes through.
func testRetryAfterIsEnough(t *testing.T, open opener) {
	for _, limit := range []int{1, 5, 7, 60, 90, 1000} {
		clk := newClock()
		l := open(t, ratelimit.Options{PerMinute: perMinute(limit), Now: clk.Now})
		for round := range 5 {
			ok, retry := true, time.Duration(0)
			for n := 0; ok; n++ {
				if n > 2000 {
					t.Fatalf("limit %d: never refused", limit)
				}
				ok, retry = l.AllowOrg(t.Context(), "org_1")
			}
			if retry < time.Second || retry%time.Second != 0 {
				t.Fatalf("limit %d: Retry-After %s, want whole seconds ≥ 1", limit, retry)
			}
			clk.Advance(retry)
			if ok, _ := l.AllowOrg(t.Context(), "org_1"); !ok {
				t.Fatalf("limit %d, round %d: refused after waiting the announced %s", limit, round, retry)
			}
		}
	}
}
