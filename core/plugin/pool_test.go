package plugin

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// remembered calls the remember guest as org and returns the value the
// instance held before.
func (e *env) remembered(t *testing.T, org, value string) string {
	t.Helper()
	res, err := e.call(t, org, "remember", `{"value":"`+value+`"}`)
	if err != nil {
		t.Fatalf("remember as %s: %v", org, err)
	}
	return structured(t, res)["previous"].(string)
}

func TestInstanceNeverServesTwoOrganisations(t *testing.T) {
	t.Run("per_org", func(t *testing.T) {
		e := newEnv(t, nil, bundle(t, "remember"))
		if got := e.remembered(t, "org_a", "secret-of-a"); got != "" {
			t.Fatalf("first call of org_a saw %q", got)
		}
		if got := e.remembered(t, "org_b", "b-value"); got != "" {
			t.Fatalf("org_b saw %q: an instance served two organisations", got)
		}
		// Within one organisation the instance is pooled and reused.
		if got := e.remembered(t, "org_a", "next"); got != "secret-of-a" {
			t.Fatalf("org_a's second call saw %q, want its own previous value (the pooled instance)", got)
		}
		if got := e.remembered(t, "org_b", "b2"); got != "b-value" {
			t.Fatalf("org_b's second call saw %q", got)
		}
		if st := e.statusOf(t, "remember"); st.Pools != 2 || st.IdleInstances != 2 {
			t.Fatalf("status = %+v, want one pool and one idle instance per organisation", st)
		}
	})
	t.Run("per_call", func(t *testing.T) {
		cfg := bundle(t, "remember")
		cfg.Isolation = IsolationPerCall
		e := newEnv(t, nil, cfg)
		for i, org := range []string{"org_a", "org_a", "org_b"} {
			if got := e.remembered(t, org, fmt.Sprint("v", i)); got != "" {
				t.Fatalf("call %d as %s saw %q: per_call reused an instance", i, org, got)
			}
		}
		if st := e.statusOf(t, "remember"); st.Instances != 0 {
			t.Fatalf("%d instances left open with per_call isolation", st.Instances)
		}
	})
}

// TestPoolGrowsWithDemandThenShrinks takes more instances at once than
// pool_size: they are all kept when given back (the demand may come
// again), the surplus is closed once idle for surplusTTL, and the
// pool_size most recently used ones only after the idle TTL.
func TestPoolGrowsWithDemandThenShrinks(t *testing.T) {
	cfg := bundle(t, "remember")
	cfg.Limits.PoolSize = 2
	cfg.Limits.IdleTTL = 5 * time.Minute
	e := newEnv(t, nil, cfg)
	v := e.r.snap.Load().byName["remember"]
	ctx := context.Background()
	var insts []*instance
	for range 4 {
		inst, err := v.pools.get(ctx, "org_a")
		if err != nil {
			t.Fatal(err)
		}
		insts = append(insts, inst)
	}
	for _, inst := range insts {
		v.pools.put(inst)
	}
	v.pools.bg.Wait()
	if st := e.statusOf(t, "remember"); st.IdleInstances != 4 || st.Instances != 4 {
		t.Fatalf("after returning 4 instances to a pool of 2: %+v; want all 4 kept", st)
	}
	e.clock.Advance(surplusTTL + time.Second)
	e.r.sweep(e.clock.Now())
	if st := e.statusOf(t, "remember"); st.IdleInstances != 2 || st.Instances != 2 {
		t.Fatalf("after %s idle: %+v; want the surplus closed and pool_size (2) kept", surplusTTL, st)
	}
	e.clock.Advance(cfg.Limits.IdleTTL)
	e.r.sweep(e.clock.Now())
	if st := e.statusOf(t, "remember"); st.Pools != 0 || st.Instances != 0 {
		t.Fatalf("after the idle TTL: %+v; want the pool gone", st)
	}
}

// TestWaitingCallGetsTheInstanceGivenBack: with the organisation's only
// instance busy, a second call waits and is handed whichever comes first,
// the busy instance given back or the one grown for it.
func TestWaitingCallGetsTheInstanceGivenBack(t *testing.T) {
	e := newEnv(t, nil, bundle(t, "remember"))
	v := e.r.snap.Load().byName["remember"]
	ctx := context.Background()
	first, err := v.pools.get(ctx, "org_a")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan *instance)
	go func() {
		inst, err := v.pools.get(ctx, "org_a")
		if err != nil {
			t.Error(err)
		}
		got <- inst
	}()
	v.pools.put(first)
	second := <-got
	if second == nil || second.org != "org_a" {
		t.Fatalf("waiting get handed %+v", second)
	}
	v.pools.put(second)
	v.pools.bg.Wait()
	if st := e.statusOf(t, "remember"); st.IdleInstances != st.Pools*int(st.Instances) || st.Instances > 2 {
		t.Fatalf("after both went back: %+v; want every instance idle, at most two", st)
	}
}

// instantiations counts instantiations.
type instantiations struct {
	noMetrics
	instantiated atomic.Int64
}

func (m *instantiations) BundleInstantiated(string, time.Duration, bool) { m.instantiated.Add(1) }

// TestConcurrencyOverPoolSizeDoesNotInstantiatePerCall runs 16 callers of
// one organisation against a pool_size of 4: once the pool has grown to
// the demand, calls reuse instances and nothing is instantiated.
func TestConcurrencyOverPoolSizeDoesNotInstantiatePerCall(t *testing.T) {
	cfg := bundle(t, "echo")
	cfg.Limits.PoolSize = 4
	m := &instantiations{}
	e := newEnv(t, func(o *Options) { o.Metrics = m }, cfg)
	const conc, perCaller = 16, 40
	round := func() {
		var wg sync.WaitGroup
		for range conc {
			wg.Go(func() {
				for range perCaller {
					if _, err := e.call(t, "org_a", "echo", `{"text":"hi"}`); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
	}
	// The pool grows while calls find every instance busy, one instance at
	// a time, up to the demand: at most one instantiation per concurrent
	// caller in all, however many calls, and then none.
	v := e.r.snap.Load().byName["echo"]
	const rounds = 6
	var last int64
	for i := range rounds {
		before := m.instantiated.Load()
		round()
		v.pools.bg.Wait()
		last = m.instantiated.Load() - before
		t.Logf("round %d: %d calls, %d instantiations", i+1, conc*perCaller, last)
	}
	if total := m.instantiated.Load(); total > conc+1 {
		t.Errorf("%d instantiations (the load's describe included) for %d calls at concurrency %d, pool_size 4, "+
			"want at most one per caller", total, rounds*conc*perCaller, conc)
	}
	// Once the pool holds one instance per caller, nothing is instantiated.
	var held []*instance
	for len(held) < conc {
		inst, err := v.pools.get(context.Background(), "org_a")
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, inst)
	}
	for _, inst := range held {
		v.pools.put(inst)
	}
	v.pools.bg.Wait()
	before := m.instantiated.Load()
	round()
	if n := m.instantiated.Load() - before; n != 0 {
		t.Errorf("%d instantiations in %d calls at concurrency %d with %d instances pooled; want 0", n, conc*perCaller, conc, conc)
	}
	st := e.statusOf(t, "echo")
	if st.Instances > conc || st.Instances < 4 || st.IdleInstances != int(st.Instances) {
		t.Errorf("after the load: %+v; want between 4 and %d instances, all idle", st, conc)
	}
}

func TestIdleInstancesExpire(t *testing.T) {
	cfg := bundle(t, "remember")
	cfg.Limits.IdleTTL = time.Minute
	e := newEnv(t, nil, cfg)
	e.remembered(t, "org_a", "a")
	e.remembered(t, "org_b", "b")
	e.clock.Advance(30 * time.Second)
	e.remembered(t, "org_b", "b2") // org_b's instance is fresh again
	e.clock.Advance(45 * time.Second)
	e.r.sweep(e.clock.Now())
	st := e.statusOf(t, "remember")
	if st.Pools != 1 || st.IdleInstances != 1 || st.Instances != 1 {
		t.Fatalf("after the sweep: %+v; want org_a's idle instance closed and its pool dropped", st)
	}
	// An expired instance found by a call is closed, not reused.
	e.clock.Advance(2 * time.Minute)
	if got := e.remembered(t, "org_b", "b3"); got != "" {
		t.Fatalf("an instance idle past its TTL was reused (saw %q)", got)
	}
}

func TestGlobalBudgetEvictsLeastRecentlyUsed(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.GlobalInstanceBudget = 2 }, bundle(t, "remember"))
	e.remembered(t, "org_a", "a")
	e.remembered(t, "org_b", "b")
	e.remembered(t, "org_a", "a2") // org_b is now the least recently used
	e.remembered(t, "org_c", "c")  // needs a slot: org_b's instance goes
	if got := e.remembered(t, "org_a", "a3"); got != "a2" {
		t.Fatalf("org_a's instance was evicted (saw %q), but org_b's was the least recently used", got)
	}
	if got := e.remembered(t, "org_b", "b2"); got != "" {
		t.Fatalf("org_b's instance survived eviction (saw %q)", got)
	}
	if st := e.statusOf(t, "remember"); st.Instances > 2 {
		t.Fatalf("%d instances live over a budget of 2", st.Instances)
	}
}

func TestBudgetWaitsForABusySlot(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.GlobalInstanceBudget = 1; o.MemoryWait = time.Minute }, bundle(t, "remember"))
	v := e.r.snap.Load().byName["remember"]
	inst, err := v.pools.get(context.Background(), "org_a")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := v.pools.get(ctx, "org_b"); err == nil {
		t.Fatal("got a second instance with an instance cap of 1 and nothing to evict")
	}
	got := make(chan error)
	go func() {
		inst, err := v.pools.get(context.Background(), "org_b")
		if err == nil {
			inst.close()
		}
		got <- err
	}()
	v.pools.put(inst) // idle now: org_b's call may close it for room
	if err := <-got; err != nil {
		t.Fatalf("waiting get = %v after the busy instance went idle", err)
	}
}

// TestHammerPools runs many organisations against small pools and a small
// budget at once, under -race, then checks nothing leaked: every live
// instance is idle in a pool and no organisation saw another's value.
func TestHammerPools(t *testing.T) {
	cfg := bundle(t, "remember")
	cfg.Limits.PoolSize = 2
	e := newEnv(t, func(o *Options) { o.GlobalInstanceBudget = 6 }, cfg)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			org := fmt.Sprint("org_", g%4)
			for i := range 15 {
				res, err := e.call(t, org, "remember", fmt.Sprintf(`{"value":"%s:%d"}`, org, i))
				if err != nil {
					errs <- err
					return
				}
				prev := structured(t, res)["previous"].(string)
				if prev != "" && prev[:len(org)+1] != org+":" {
					errs <- fmt.Errorf("%s saw %q", org, prev)
					return
				}
			}
		}()
	}
	wg.Wait()
	e.r.snap.Load().byName["remember"].pools.bg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	st := e.statusOf(t, "remember")
	mem := e.r.budget.status()
	if st.Instances != int64(st.IdleInstances) || st.Instances > 6 || mem.Instances != int(st.Instances) ||
		mem.UsedBytes != st.MemoryBytes || mem.PeakBytes > mem.BudgetBytes {
		t.Fatalf("after the hammer: %+v; budget %+v", st, mem)
	}
}

// TestHotSwapWarmsTheOrganisationsServed: after a reload publishes a new
// version, each organisation the old one served finds an instance of the
// new one ready; its next call instantiates nothing.
func TestHotSwapWarmsTheOrganisationsServed(t *testing.T) {
	m := &instantiations{}
	v1, v2 := echoV(t, "1.0.0"), echoV(t, "2.0.0")
	e := newEnv(t, func(o *Options) { o.Metrics = m }, v1)
	for _, org := range []string{"org_a", "org_b"} {
		if _, err := e.call(t, org, "echo", `{"text":"hi"}`); err != nil {
			t.Fatal(err)
		}
	}
	v2.Required = true
	if err := e.r.Reload(context.Background(), []BundleConfig{v2}); err != nil {
		t.Fatal(err)
	}
	nv := e.r.snap.Load().byName["echo"]
	nv.pools.bg.Wait()
	if st := e.statusOf(t, "echo"); st.Version != "2.0.0" || st.Pools != 2 || st.IdleInstances != 2 {
		t.Fatalf("after the hot swap: %+v; want version 2.0.0 with one idle instance for each of the 2 organisations", st)
	}
	before := m.instantiated.Load()
	for _, org := range []string{"org_a", "org_b"} {
		if _, err := e.call(t, org, "echo", `{"text":"hi"}`); err != nil {
			t.Fatal(err)
		}
	}
	if n := m.instantiated.Load() - before; n != 0 {
		t.Errorf("the first calls after the hot swap instantiated %d times; want 0 (warmed)", n)
	}
}
