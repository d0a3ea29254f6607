package plugin

import (
	"container/list"
	"context"
	"fmt"
	"sync"
	"time"
)

// budget caps live instances across every pool of a Registry (idle, busy
// and describe instances alike). A slot is taken before instantiating and
// returned when the instance closes. When no slot is free, the least
// recently used pool gives up its oldest idle instance; when no instance is
// idle, the caller waits for a slot until its context ends.
//
// Safe for concurrent use.
type budget struct {
	slots chan struct{} // one token per live instance; fixed at creation
	idled chan struct{} // a token when an instance went idle; fixed at creation

	mu  sync.Mutex
	lru list.List // of *pool, most recently used at the front; guarded by mu
}

func newBudget(n int) *budget {
	return &budget{slots: make(chan struct{}, n), idled: make(chan struct{}, 1)}
}

// acquire takes a slot; the returned func gives it back and must be called
// exactly once.
func (b *budget) acquire(ctx context.Context) (func(), error) {
	release := func() { <-b.slots }
	for {
		select {
		case b.slots <- struct{}{}:
			return release, nil
		default:
		}
		if b.evict() {
			continue
		}
		// Every slot is held by a busy instance. Wait for one to close, or
		// to go idle (then it can be evicted).
		select {
		case b.slots <- struct{}{}:
			return release, nil
		case <-b.idled:
			if b.evict() {
				b.notifyIdle() // there may be more, and more waiters
			}
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for a plugin instance slot (all %d busy): %w", cap(b.slots), ctx.Err())
		}
	}
}

// notifyIdle wakes one waiter of acquire, if any: an instance went idle.
func (b *budget) notifyIdle() {
	select {
	case b.idled <- struct{}{}:
	default:
	}
}

// evict closes one idle instance of the least recently used pool that has
// one, and reports whether it did.
func (b *budget) evict() bool {
	b.mu.Lock()
	var victim *instance
	for e := b.lru.Back(); e != nil && victim == nil; e = e.Prev() {
		select {
		case victim = <-e.Value.(*pool).idle:
		default:
		}
	}
	b.mu.Unlock()
	if victim == nil {
		return false
	}
	victim.close()
	return true
}

// touch marks p as the most recently used pool.
func (b *budget) touch(p *pool) {
	b.mu.Lock()
	if p.elem == nil {
		p.elem = b.lru.PushFront(p)
	} else {
		b.lru.MoveToFront(p.elem)
	}
	b.mu.Unlock()
}

func (b *budget) forget(p *pool) {
	b.mu.Lock()
	if p.elem != nil {
		b.lru.Remove(p.elem)
		p.elem = nil
	}
	b.mu.Unlock()
}

// pool holds the idle instances of one (version, organisation): a bounded
// channel, so at most PoolSize instances wait idle and the rest are closed
// when they come back.
type pool struct {
	org  string         // fixed at creation
	idle chan *instance // fixed at creation; capacity Limits.PoolSize

	elem    *list.Element // in budget.lru; guarded by budget.mu
	removed bool          // swept away; guarded by pools.mu
}

// pools are the per-organisation pools of one version. Gets never block on
// another organisation; puts and sweeps take mu only to stay consistent
// with close.
type pools struct {
	v      *version // fixed at creation
	budget *budget  // fixed at creation

	mu     sync.RWMutex
	byOrg  map[string]*pool // guarded by mu
	closed bool             // guarded by mu
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
	if p = ps.byOrg[org]; p == nil {
		p = &pool{org: org, idle: make(chan *instance, ps.v.cfg.Limits.PoolSize)}
		ps.byOrg[org] = p
	}
	return p, nil
}

// get returns an idle instance of org's pool, or a new one. An instance
// idle past the TTL is closed rather than reused.
func (ps *pools) get(ctx context.Context, org string) (*instance, error) {
	p, err := ps.pool(org)
	if err != nil {
		return nil, err
	}
	ttl, now := ps.v.cfg.Limits.IdleTTL, ps.v.reg.set.now()
	for {
		select {
		case inst := <-p.idle:
			if now.Sub(inst.idleSince) > ttl {
				inst.close()
				continue
			}
			ps.budget.touch(p)
			return inst, nil
		default:
		}
		release, err := ps.budget.acquire(ctx)
		if err != nil {
			return nil, err
		}
		return ps.v.instantiate(ctx, org, release)
	}
}

// put returns a healthy instance to its pool, or closes it when the pool
// is full, swept or closed.
func (ps *pools) put(inst *instance) {
	p, err := ps.pool(inst.org)
	if err != nil {
		inst.close()
		return
	}
	inst.idleSince = ps.v.reg.set.now()
	ps.mu.RLock()
	ok := !ps.closed && !p.removed
	if ok {
		select {
		case p.idle <- inst:
		default:
			ok = false
		}
	}
	ps.mu.RUnlock()
	if !ok {
		inst.close()
		return
	}
	ps.budget.touch(p)
	ps.budget.notifyIdle()
}

// sweep closes instances idle past the TTL at now and drops pools left
// empty, so memory follows the organisations actually calling.
func (ps *pools) sweep(now time.Time) {
	ttl := ps.v.cfg.Limits.IdleTTL
	ps.mu.Lock()
	defer ps.mu.Unlock()
	for org, p := range ps.byOrg {
		var keep []*instance
		for _, inst := range drain(p.idle) {
			if now.Sub(inst.idleSince) > ttl {
				inst.close()
			} else {
				keep = append(keep, inst)
			}
		}
		for _, inst := range keep {
			select {
			case p.idle <- inst: // puts wait for mu, so there is room
			default:
				inst.close()
			}
		}
		if len(keep) == 0 {
			p.removed = true
			delete(ps.byOrg, org)
			ps.budget.forget(p)
		}
	}
}

// close closes every idle instance and refuses later puts. Instances in use
// are closed by their callers when they return, or with the runtime.
func (ps *pools) close() {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ps.closed = true
	for _, p := range ps.byOrg {
		for _, inst := range drain(p.idle) {
			inst.close()
		}
		ps.budget.forget(p)
	}
	clear(ps.byOrg)
}

// drain takes every instance waiting in ch without blocking: a concurrent
// get or eviction may take some first.
func drain(ch chan *instance) []*instance {
	var out []*instance
	for {
		select {
		case inst := <-ch:
			out = append(out, inst)
		default:
			return out
		}
	}
}

// stats returns the number of pools and of idle instances in them.
func (ps *pools) stats() (pools, idle int) {
	ps.mu.RLock()
	defer ps.mu.RUnlock()
	for _, p := range ps.byOrg {
		idle += len(p.idle)
	}
	return len(ps.byOrg), idle
}
