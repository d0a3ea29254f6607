package plugin

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/kobana/kadu/core/mcp"
)

// budget bounds the memory of every instance of a Registry (idle, busy
// and describe instances alike) in bytes: each instance is charged a fixed
// overhead plus its committed linear memory (linearMemory reports every
// grow), and the sum never exceeds limit. It also caps the number of live
// instances (maxInstances), and what one organisation may hold (orgLimit),
// so that one tenant cannot push every other one out.
//
// When a charge does not fit, idle instances are closed in least recently
// used order: the organisation's own first when its share is what is full,
// any organisation's when the whole budget is. When no instance is idle,
// the caller waits until one is, or memory is given back, for at most wait
// (and its context); then it gets a *BusyError, which clients see as
// -31503 "overloaded" with a retry hint.
//
// Safe for concurrent use.
type budget struct {
	// fixed at creation
	limit        int64
	orgLimit     int64
	maxInstances int
	overhead     int64
	wait         time.Duration

	mu        sync.Mutex
	used      int64            // guarded by mu
	peak      int64            // highest used; guarded by mu
	byOrg     map[string]int64 // bytes held per organisation; guarded by mu
	instances int              // live instances; guarded by mu
	evictions int64            // idle instances closed for room; guarded by mu
	busy      int64            // charges refused after the wait; guarded by mu
	lru       list.List        // of *pool, most recently used at the front; guarded by mu
	changed   chan struct{}    // closed when room may have appeared, for the charges waiting; nil when none waits; guarded by mu
}

func newBudget(s settings) *budget {
	return &budget{
		limit: s.memoryBudget, orgLimit: s.memoryBudget * int64(s.orgSharePercent) / 100,
		maxInstances: s.maxInstances, overhead: s.instanceOverhead, wait: s.memoryWait,
		byOrg: map[string]int64{},
	}
}

// BusyError is the error of a call that found no room in the plugin memory
// budget within Options.MemoryWait: every instance that could be closed
// to make room was busy. It matches ErrBusy under errors.Is, and carries
// the -31503 "Service unavailable" error (reason "overloaded") the client
// gets, like any overloaded replica: the call may be retried.
type BusyError struct {
	Org  string // the organisation that asked
	Need int64  // bytes asked for
	Why  string // which bound was full
}

// ErrBusy is matched by every *BusyError.
var ErrBusy = errors.New("plugin memory budget exhausted")

func (e *BusyError) Error() string {
	return fmt.Sprintf("%s: %d bytes for organisation %q do not fit %s, and no idle instance is left to close",
		ErrBusy, e.Need, e.Org, e.Why)
}

// Unwrap returns ErrBusy and the JSON-RPC error the engine answers with.
func (e *BusyError) Unwrap() []error {
	return []error{ErrBusy, &mcp.Error{
		Code: mcp.CodeUnavailable, Message: "Service unavailable", Status: http.StatusServiceUnavailable,
		Data: map[string]any{"retry_after_seconds": 1, "reason": "overloaded"},
	}}
}

// admit charges a new instance of v for org: its overhead plus reserve
// bytes it is expected to commit, and one instance slot.
func (b *budget) admit(ctx context.Context, v *version, org string, reserve int64) (*charge, error) {
	n := b.overhead + reserve
	if err := b.take(ctx, org, n, true); err != nil {
		return nil, err
	}
	v.memBytes.Add(n)
	return &charge{b: b, v: v, org: org, held: n, reserved: reserve}, nil
}

// take charges n bytes to org (and an instance slot when slot), making
// room as the type's comment says.
func (b *budget) take(ctx context.Context, org string, n int64, slot bool) error {
	var timer <-chan time.Time
	for {
		b.mu.Lock()
		why := b.fullLocked(org, n, slot)
		if why == "" {
			b.used += n
			b.peak = max(b.peak, b.used)
			b.byOrg[org] += n
			if slot {
				b.instances++
			}
			b.mu.Unlock()
			return nil
		}
		victim := b.victimLocked(org, why == whyOrg)
		if victim != nil {
			b.evictions++
		}
		if b.changed == nil {
			b.changed = make(chan struct{})
		}
		changed := b.changed
		b.mu.Unlock()
		if victim != nil {
			victim.close()
			continue
		}
		if timer == nil {
			t := time.NewTimer(b.wait)
			defer t.Stop()
			timer = t.C
		}
		select {
		case <-changed:
		case <-timer:
			b.mu.Lock()
			b.busy++
			b.mu.Unlock()
			return &BusyError{Org: org, Need: n, Why: why}
		case <-ctx.Done():
			return fmt.Errorf("waiting for plugin memory (%s): %w", why, ctx.Err())
		}
	}
}

// Bounds a charge can hit, as BusyError.Why names them.
const (
	whyOrg       = "the organisation's share (plugins.org_share_percent)"
	whyBudget    = "the memory budget (plugins.memory_budget_mib)"
	whyInstances = "the instance cap (plugins.max_instances)"
)

// fullLocked names the bound n more bytes for org would cross, or "".
// The describe instances of a load (org "") count against the budget only.
func (b *budget) fullLocked(org string, n int64, slot bool) string {
	switch {
	case org != "" && b.byOrg[org]+n > b.orgLimit:
		return whyOrg
	case b.used+n > b.limit:
		return whyBudget
	case slot && b.instances >= b.maxInstances:
		return whyInstances
	}
	return ""
}

// roomFor reports whether n more bytes and an instance slot for org fit
// now, without closing anything.
func (b *budget) roomFor(org string, n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.fullLocked(org, n, true) == ""
}

// victimLocked takes the oldest idle instance of the least recently used
// pool that has one (of org's pools only, when own), or returns nil.
func (b *budget) victimLocked(org string, own bool) *instance {
	for e := b.lru.Back(); e != nil; e = e.Prev() {
		p := e.Value.(*pool)
		if own && p.org != org {
			continue
		}
		p.mu.Lock()
		inst := p.oldestLocked()
		p.mu.Unlock()
		if inst != nil {
			return inst
		}
	}
	return nil
}

// give returns n bytes of org (and a slot when slot) and wakes waiters.
func (b *budget) give(org string, n int64, slot bool) {
	b.mu.Lock()
	b.used -= n
	if b.byOrg[org] -= n; b.byOrg[org] <= 0 {
		delete(b.byOrg, org)
	}
	if slot {
		b.instances--
	}
	b.broadcastLocked()
	b.mu.Unlock()
}

// notifyIdle wakes the waiters of take: an instance went idle, so it can
// be closed to make room.
func (b *budget) notifyIdle() {
	b.mu.Lock()
	b.broadcastLocked()
	b.mu.Unlock()
}

// broadcastLocked wakes the charges waiting, if any: every put calls it,
// and a channel made per put was a warm call's allocation for nothing.
func (b *budget) broadcastLocked() {
	if b.changed != nil {
		close(b.changed)
		b.changed = nil
	}
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

// MemoryStatus is the plugin memory budget as GET /admin/plugins shows it.
type MemoryStatus struct {
	BudgetBytes      int64 `json:"budget_bytes"`      // plugins.memory_budget_mib
	UsedBytes        int64 `json:"used_bytes"`        // charged now: overheads and committed linear memory
	PeakBytes        int64 `json:"peak_bytes"`        // highest UsedBytes since start
	OrgShareBytes    int64 `json:"org_share_bytes"`   // what one organisation may hold
	InstanceOverhead int64 `json:"instance_overhead"` // bytes charged per instance besides its linear memory
	Instances        int   `json:"instances"`         // live instances
	MaxInstances     int   `json:"max_instances"`     // plugins.max_instances
	Organisations    int   `json:"organisations"`     // organisations holding memory
	LargestOrgBytes  int64 `json:"largest_org_bytes"` // what the organisation holding most holds
	Evictions        int64 `json:"evictions"`         // idle instances closed to make room
	BusyRefusals     int64 `json:"busy_refusals"`     // calls answered "busy, retry"
}

func (b *budget) status() MemoryStatus {
	b.mu.Lock()
	defer b.mu.Unlock()
	st := MemoryStatus{
		BudgetBytes: b.limit, UsedBytes: b.used, PeakBytes: b.peak, OrgShareBytes: b.orgLimit,
		InstanceOverhead: b.overhead, Instances: b.instances, MaxInstances: b.maxInstances,
		Organisations: len(b.byOrg), Evictions: b.evictions, BusyRefusals: b.busy,
	}
	for org, n := range b.byOrg {
		if org == "" { // a load's describe instance
			st.Organisations--
			continue
		}
		st.LargestOrgBytes = max(st.LargestOrgBytes, n)
	}
	return st
}
