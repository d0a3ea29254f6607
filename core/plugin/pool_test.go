package plugin

import (
	"context"
	"fmt"
	"sync"
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

func TestPoolKeepsAtMostPoolSizeIdle(t *testing.T) {
	cfg := bundle(t, "remember")
	cfg.Limits.PoolSize = 2
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
	if st := e.statusOf(t, "remember"); st.IdleInstances != 2 || st.Instances != 2 {
		t.Fatalf("after returning 4 instances to a pool of 2: %+v; want 2 kept and 2 closed", st)
	}
}

func TestIdleInstancesExpire(t *testing.T) {
	cfg := bundle(t, "remember")
	cfg.Limits.IdleTTL = time.Minute
	e := newEnv(t, nil, cfg)
	e.remembered(t, "org_a", "a")
	e.remembered(t, "org_b", "b")
	e.clock.advance(30 * time.Second)
	e.remembered(t, "org_b", "b2") // org_b's instance is fresh again
	e.clock.advance(45 * time.Second)
	e.r.sweep(e.clock.Now())
	st := e.statusOf(t, "remember")
	if st.Pools != 1 || st.IdleInstances != 1 || st.Instances != 1 {
		t.Fatalf("after the sweep: %+v; want org_a's idle instance closed and its pool dropped", st)
	}
	// An expired instance found by a call is closed, not reused.
	e.clock.advance(2 * time.Minute)
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
