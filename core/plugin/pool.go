package plugin

import (
	"container/list"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"
)

// surplusTTL is how long an instance beyond Limits.PoolSize may stay idle
// before the sweep closes it: a pool grows with an organisation's
// concurrency and shrinks back to PoolSize soon after the demand goes.
const surplusTTL = 30 * time.Second

// pool holds the instances of one (version, organisation). It follows
// demand: a call that finds no idle instance while others of the pool are
// busy waits for the first of them to come back, while one instantiation
// in the background grows the pool by one; so a pool ends up as large as
// the organisation's concurrency, within the memory budget, and no call
// instantiates once it has. Idle instances are a stack, most recently used
// on top: under steady demand the surplus sinks to the bottom, ages, and
// the sweep closes it (see sweep for how long each one is kept).
type pool struct {
	org string // fixed at creation

	mu      sync.Mutex
	idle    []*instance      // most recently used last; guarded by mu
	waiters []chan getResult // calls waiting for an instance, oldest first; guarded by mu
	live    int              // instances not closed, idle, busy or starting; guarded by mu
	growing bool             // a background instantiation runs; guarded by mu
	removed bool             // swept away or closed; guarded by mu

	elem *list.Element // in budget.lru; guarded by budget.mu
}

// getResult is what a waiting call is handed: an instance, or the error of
// the instantiation started for it.
type getResult struct {
	inst *instance
	err  error
}

// popLocked takes the most recently used idle instance, or nil.
func (p *pool) popLocked() *instance {
	n := len(p.idle)
	if n == 0 {
		return nil
	}
	inst := p.idle[n-1]
	p.idle[n-1] = nil
	p.idle = p.idle[:n-1]
	return inst
}

// oldestLocked takes the least recently used idle instance, or nil: the
// one the budget evicts.
func (p *pool) oldestLocked() *instance {
	if len(p.idle) == 0 {
		return nil
	}
	inst := p.idle[0]
	p.idle = slices.Delete(p.idle, 0, 1)
	return inst
}

// handOffLocked gives r to the oldest waiting call; false when none waits.
func (p *pool) handOffLocked(r getResult) bool {
	if len(p.waiters) == 0 {
		return false
	}
	w := p.waiters[0]
	p.waiters = slices.Delete(p.waiters, 0, 1)
	w <- r // buffered: never blocks
	return true
}

// pools are the per-organisation pools of one version. Gets never block on
// another organisation. Lock order: pools.mu, then budget.mu, then pool.mu;
// an instance is never closed while a pool.mu is held (closing takes it).
type pools struct {
	v      *version // fixed at creation
	budget *budget  // fixed at creation

	mu     sync.RWMutex
	byOrg  map[string]*pool // guarded by mu
	closed bool             // guarded by mu

	bg sync.WaitGroup // background instantiations
}

func newPools(v *version, b *budget) *pools {
	return &pools{v: v, budget: b, byOrg: map[string]*pool{}}
}

func (ps *pools) pool(org string) (*pool, error) {
	ps.mu.RLock()
	p, closed := ps.byOrg[org], ps.closed
	ps.mu.RUnlock()
	if closed {
		return nil, fmt.Errorf("bundle %s: %w", ps.v.id, ErrClosed)
	}
	if p != nil {
		return p, nil
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.closed {
		return nil, fmt.Errorf("bundle %s: %w", ps.v.id, ErrClosed)
	}
	if p = ps.byOrg[org]; p == nil {
		p = &pool{org: org}
		ps.byOrg[org] = p
	}
	return p, nil
}

// get returns an instance of org's pool: an idle one, else the first one
// given back or grown (when others of the pool are busy), else a new one.
// An instance idle past the TTL is closed rather than reused.
func (ps *pools) get(ctx context.Context, org string) (*instance, error) {
	ttl, now := ps.v.cfg.Limits.IdleTTL, ps.v.reg.set.now()
	for {
		p, err := ps.pool(org)
		if err != nil {
			return nil, err
		}
		p.mu.Lock()
		if p.removed { // swept after the lookup: look again
			p.mu.Unlock()
			continue
		}
		if inst := p.popLocked(); inst != nil {
			p.mu.Unlock()
			if now.Sub(inst.idleSince) > ttl {
				inst.close()
				continue
			}
			ps.budget.touch(p)
			return inst, nil
		}
		if p.live == 0 {
			// The organisation's first instance (or all were closed): nobody
			// will give one back, so this call instantiates it.
			p.live++
			p.mu.Unlock()
			inst, err := ps.v.instantiate(ctx, org)
			if err != nil {
				ps.lost(p)
				return nil, err
			}
			inst.pool = p
			ps.budget.touch(p)
			return inst, nil
		}
		ch := make(chan getResult, 1)
		p.waiters = append(p.waiters, ch)
		if !p.growing {
			ps.growLocked(p)
		}
		p.mu.Unlock()
		return ps.wait(ctx, p, ch)
	}
}

// wait waits for what ch is handed, or for ctx to end.
func (ps *pools) wait(ctx context.Context, p *pool, ch chan getResult) (*instance, error) {
	select {
	case r := <-ch:
		if r.inst != nil {
			ps.budget.touch(p)
		}
		return r.inst, r.err
	case <-ctx.Done():
	}
	p.mu.Lock()
	i := slices.Index(p.waiters, ch)
	if i >= 0 {
		p.waiters = slices.Delete(p.waiters, i, i+1)
	}
	p.mu.Unlock()
	if i < 0 { // handed something meanwhile: give it back
		if r := <-ch; r.inst != nil {
			ps.put(r.inst)
		}
	}
	return nil, fmt.Errorf("waiting for an instance of bundle %s: %w", ps.v.id, ctx.Err())
}

// growLocked starts instantiating for p in the background. The instance
// goes to the oldest waiting call, or idle into the pool; it keeps growing
// while calls wait, so that a pool whose instances all faulted still
// serves its waiters. The instantiation is bounded by the memory wait and
// the bundle's timeout, not by any one caller.
func (ps *pools) growLocked(p *pool) {
	p.growing = true
	p.live++
	ps.bg.Add(1)
	go func() {
		defer ps.bg.Done()
		ctx := context.Background()
		for {
			inst, err := ps.v.instantiate(ctx, p.org)
			if err == nil {
				inst.pool = p
			}
			p.mu.Lock()
			if err != nil {
				p.live--
			}
			handed := p.handOffLocked(getResult{inst: inst, err: err})
			again := len(p.waiters) > 0 && !p.removed
			if again {
				p.live++
			} else {
				p.growing = false
			}
			p.mu.Unlock()
			switch {
			case handed:
			case err == nil:
				ps.put(inst)
			default:
				ps.v.log.LogAttrs(ctx, slog.LevelWarn, "growing an organisation's pool failed",
					slog.String("org", p.org), slog.Any("error", err))
			}
			if !again {
				return
			}
		}
	}()
}

// lost accounts for an instance of p that is gone (closed, or never
// created), and grows the pool if calls wait on it with nothing to come.
func (ps *pools) lost(p *pool) {
	p.mu.Lock()
	p.live--
	if len(p.waiters) > 0 && !p.growing && !p.removed {
		ps.growLocked(p)
	}
	p.mu.Unlock()
}

// put returns a healthy instance to its pool, handing it to the oldest
// waiting call if any; it is closed when the pool was swept or closed.
func (ps *pools) put(inst *instance) {
	if inst.closed.Load() {
		return // discarded during the call (the budget refused it memory)
	}
	p := inst.pool
	if p == nil { // not a pooled instance: cannot happen
		inst.close()
		return
	}
	// An idle instance holds what it committed, not what was reserved for
	// it; new instances of the version reserve the most one has held.
	inst.charge.trim()
	if n := inst.memSize(); n > ps.v.memEstimate.Load() {
		ps.v.memEstimate.Store(n)
	}
	inst.idleSince = ps.v.reg.set.now()
	ps.mu.RLock()
	p.mu.Lock()
	ok := !ps.closed && !p.removed
	handed := false
	if ok {
		if handed = p.handOffLocked(getResult{inst: inst}); !handed {
			p.idle = append(p.idle, inst)
		}
	}
	p.mu.Unlock()
	ps.mu.RUnlock()
	switch {
	case !ok:
		inst.close()
	case handed:
		ps.budget.touch(p)
	default:
		ps.budget.touch(p)
		ps.budget.notifyIdle()
	}
}

// sweep closes idle instances past their time at now, and drops pools
// left with no instance at all, so memory follows the organisations
// actually calling. The PoolSize most recently used idle instances of a
// pool are kept for IdleTTL; the surplus beyond them, grown for a burst of
// concurrency, for surplusTTL (or IdleTTL when shorter).
func (ps *pools) sweep(now time.Time) {
	lim := ps.v.cfg.Limits
	ttl, surplus := lim.IdleTTL, min(lim.IdleTTL, surplusTTL)
	var expired []*instance
	ps.mu.Lock()
	for org, p := range ps.byOrg {
		p.mu.Lock()
		keep := p.idle[:0]
		for i, inst := range p.idle {
			limit := ttl
			if len(p.idle)-i > lim.PoolSize {
				limit = surplus
			}
			if now.Sub(inst.idleSince) > limit {
				expired = append(expired, inst)
			} else {
				keep = append(keep, inst)
			}
		}
		clear(p.idle[len(keep):])
		p.idle = keep
		// Instances about to be closed still count in live: a pool that
		// had only those goes.
		if len(keep) == 0 && p.live == countPool(expired, p) && len(p.waiters) == 0 && !p.growing {
			p.removed = true
			delete(ps.byOrg, org)
		}
		removed := p.removed
		p.mu.Unlock()
		if removed {
			ps.budget.forget(p)
		}
	}
	ps.mu.Unlock()
	for _, inst := range expired {
		inst.close()
	}
}

// countPool counts the instances of p in insts.
func countPool(insts []*instance, p *pool) int {
	n := 0
	for _, inst := range insts {
		if inst.pool == p {
			n++
		}
	}
	return n
}

// close closes every idle instance, fails waiting calls, and refuses later
// puts. Instances in use are closed by their callers when they return, or
// with the runtime; a background instantiation finishing later finds the
// pools closed and closes its instance.
func (ps *pools) close() {
	var idle []*instance
	ps.mu.Lock()
	ps.closed = true
	for _, p := range ps.byOrg {
		p.mu.Lock()
		p.removed = true
		idle = append(idle, p.idle...)
		p.idle = nil
		for p.handOffLocked(getResult{err: fmt.Errorf("bundle %s: %w", ps.v.id, ErrClosed)}) {
		}
		p.mu.Unlock()
		ps.budget.forget(p)
	}
	clear(ps.byOrg)
	ps.mu.Unlock()
	for _, inst := range idle {
		inst.close()
	}
}

// waitBackground waits, at most d, for the background instantiations to
// end, and reports whether they did.
func (ps *pools) waitBackground(d time.Duration) bool {
	done := make(chan struct{})
	go func() {
		ps.bg.Wait()
		close(done)
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}

// stats returns the number of pools and of idle instances in them.
func (ps *pools) stats() (pools, idle int) {
	ps.mu.RLock()
	defer ps.mu.RUnlock()
	for _, p := range ps.byOrg {
		p.mu.Lock()
		idle += len(p.idle)
		p.mu.Unlock()
	}
	return len(ps.byOrg), idle
}

// maxWarm bounds the organisations warmed for a new version: the most
// recently active ones.
const maxWarm = 16

// orgs returns the organisations holding instances of ps, the most
// recently active first, at most maxWarm.
func (ps *pools) orgs() []string {
	type active struct {
		org  string
		last time.Time
	}
	var all []active
	ps.mu.RLock()
	for org, p := range ps.byOrg {
		p.mu.Lock()
		a := active{org: org}
		if n := len(p.idle); n > 0 {
			a.last = p.idle[n-1].idleSince
		} else if p.live > 0 {
			a.last = ps.v.reg.set.now() // busy now
		}
		p.mu.Unlock()
		if p.live > 0 || !a.last.IsZero() {
			all = append(all, a)
		}
	}
	ps.mu.RUnlock()
	slices.SortFunc(all, func(a, b active) int { return b.last.Compare(a.last) })
	orgs := make([]string, 0, min(len(all), maxWarm))
	for _, a := range all[:min(len(all), maxWarm)] {
		orgs = append(orgs, a.org)
	}
	return orgs
}

// warm starts, in the background and one at a time, an instance for each
// of orgs that has none yet, while the memory budget has room for it
// without closing anything. Reload warms a new version for the
// organisations the version it replaces served, so that their first call
// after a hot swap finds an instance ready rather than paying for an
// instantiation (6 to 35 ms for a Go guest).
func (ps *pools) warm(orgs []string) {
	if len(orgs) == 0 {
		return
	}
	ps.bg.Add(1)
	go func() {
		defer ps.bg.Done()
		ctx := context.Background()
		for _, org := range orgs {
			p, err := ps.pool(org)
			if err != nil {
				return // closed meanwhile
			}
			// Asked before taking p.mu: the budget's lock comes first.
			room := ps.budget.roomFor(org, ps.budget.overhead+ps.v.memEstimate.Load())
			p.mu.Lock()
			start := room && p.live == 0 && !p.removed
			if start {
				p.live++ // calls arriving meanwhile wait for this instance
			}
			p.mu.Unlock()
			if !start {
				continue
			}
			inst, err := ps.v.instantiate(ctx, org)
			if err != nil {
				ps.lost(p)
				ps.v.log.LogAttrs(ctx, slog.LevelWarn, "warming an organisation's instance failed",
					slog.String("org", org), slog.Any("error", err))
				continue
			}
			inst.pool = p
			ps.put(inst)
		}
	}()
}
