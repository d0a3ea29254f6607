package plugin

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/kobana/kadu/core/mcp"
)

// instanceBytes loads the remember guest once and returns what one of its
// instances is charged when idle: the overhead plus its committed memory.
func instanceBytes(t *testing.T) int64 {
	t.Helper()
	e := newEnv(t, nil, bundle(t, "remember"))
	e.remembered(t, "org_probe", "x")
	st := e.statusOf(t, "remember")
	if st.Instances != 1 || st.MemoryBytes <= instanceOverhead {
		t.Fatalf("one idle instance: %+v", st)
	}
	return st.MemoryBytes
}

// TestMemoryBudgetInBytes calls as many organisations as would need five
// budgets' worth of instances: the accounted memory never passes the
// budget, idle instances of other organisations are evicted for room, and
// every call succeeds.
func TestMemoryBudgetInBytes(t *testing.T) {
	per := instanceBytes(t)
	budget := 4 * per
	e := newEnv(t, func(o *Options) { o.MemoryBudget = budget; o.OrgSharePercent = 50 }, bundle(t, "remember"))
	for i := range 20 {
		org := fmt.Sprint("org_", i)
		if got := e.remembered(t, org, org); got != "" {
			t.Fatalf("%s's first call saw %q", org, got)
		}
	}
	mem := e.r.MemoryStatus()
	if mem.PeakBytes > budget || mem.UsedBytes > budget {
		t.Errorf("memory peaked at %d bytes, over the %d-byte budget: %+v", mem.PeakBytes, budget, mem)
	}
	if mem.Evictions < 15 || mem.Instances > 4 {
		t.Errorf("after 20 organisations on a budget of 4 instances: %+v; want at least 15 evictions", mem)
	}
	if st := e.statusOf(t, "remember"); st.MemoryBytes != mem.UsedBytes {
		t.Errorf("bundle charged %d bytes, budget used %d", st.MemoryBytes, mem.UsedBytes)
	}
}

// TestOrgShareProtectsOtherOrganisations lets one organisation hold its
// whole share busy: its next instance waits, then is refused as busy
// (-31503), and the others' idle instances are left alone. Once its
// instances are idle, a call of it to another bundle evicts its own, not
// the others'.
func TestOrgShareProtectsOtherOrganisations(t *testing.T) {
	per := instanceBytes(t)
	cfg := bundle(t, "remember")
	cfg.Limits.PoolSize = 8
	// A share of 3.5 instances in a budget of 10.
	e := newEnv(t, func(o *Options) {
		o.MemoryBudget, o.OrgSharePercent, o.MemoryWait = 10*per, 35, 200*time.Millisecond
	}, cfg, bundle(t, "echo"))
	for _, org := range []string{"org_b", "org_c"} {
		e.remembered(t, org, org+"-secret")
	}
	v := e.r.snap.Load().byName["remember"]
	ctx := context.Background()
	var held []*instance
	for range 3 {
		inst, err := v.pools.get(ctx, "org_a")
		if err != nil {
			t.Fatalf("org_a's instance %d within its share: %v", len(held)+1, err)
		}
		held = append(held, inst)
	}
	_, err := v.pools.get(ctx, "org_a")
	var rpc *mcp.Error
	if !errors.Is(err, ErrBusy) || !errors.As(err, &rpc) || rpc.Code != mcp.CodeUnavailable {
		t.Fatalf("org_a's 4th instance, over its share with all 3 busy = %v; want ErrBusy carrying -31503", err)
	}
	for _, inst := range held {
		v.pools.put(inst)
	}
	// org_a's call to another bundle needs a new instance: it makes room
	// among its own idle instances.
	if _, err := e.call(t, "org_a", "echo", `{"text":"hi"}`); err != nil {
		t.Fatalf("org_a's echo with idle instances of its own to close: %v", err)
	}
	if st := e.statusOf(t, "remember"); st.IdleInstances != 4 {
		t.Errorf("remember after org_a's echo: %+v; want org_a's 3 idle instances less one, and org_b's and org_c's", st)
	}
	for _, org := range []string{"org_b", "org_c"} {
		if got := e.remembered(t, org, "again"); got != org+"-secret" {
			t.Errorf("%s's idle instance was evicted by org_a (saw %q)", org, got)
		}
	}
	if mem := e.r.MemoryStatus(); mem.LargestOrgBytes > mem.OrgShareBytes || mem.BusyRefusals != 1 {
		t.Errorf("memory status %+v: want the largest organisation within its share and one busy refusal", mem)
	}
}

// TestGrowRefusedByTheBudgetIsBusyNotAFault lets a guest grow its memory
// until the budget, not its own limit, refuses: the call fails as busy
// (retry), the breaker does not count it, and the memory is given back.
func TestGrowRefusedByTheBudgetIsBusyNotAFault(t *testing.T) {
	const budget = 24 << 20 // well under the guest's 64 MiB limit
	e := newEnv(t, func(o *Options) { o.MemoryBudget, o.MemoryWait = budget, 100*time.Millisecond }, bundle(t, "faulty"))
	_, err := e.call(t, "org_a", "hog", `{}`)
	var rpc *mcp.Error
	if !errors.Is(err, ErrBusy) || !errors.As(err, &rpc) || rpc.Code != mcp.CodeUnavailable {
		t.Fatalf("hog over the budget = %v; want ErrBusy carrying -31503", err)
	}
	st := e.statusOf(t, "faulty")
	mem := e.r.MemoryStatus()
	if st.Faults != 0 || st.Instances != 0 || mem.UsedBytes != 0 || mem.PeakBytes > budget {
		t.Errorf("after the refused grow: bundle %+v, memory %+v; want no fault counted, the instance gone, "+
			"nothing charged and the peak within %d", st, mem, budget)
	}
}
