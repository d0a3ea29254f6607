package plugin

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/tetratelabs/wazero/experimental"
)

// linearMemory backs the WebAssembly memory of one instance and charges
// every byte it commits to the Registry's memory budget (see budget), so
// the budget counts what instances really hold rather than how many there
// are. wazero calls Reallocate when the guest grows its memory and Free
// when the module closes.
//
// The bytes live outside the Go heap where the platform allows (an
// anonymous mapping reserved up to the bundle's memory_mib and committed as
// the guest grows; see region): growing never copies, and a closed
// instance's pages go back to the operating system at once instead of
// waiting for a garbage collection and the scavenger. The process's
// resident memory then follows the budget.
//
// Reallocate runs on the goroutine of the guest call that grows the
// memory; Free may run on any goroutine (a runtime closed under a running
// call), so the mapping is unmapped only once no guest code runs on it.
type linearMemory struct {
	charge *charge // fixed at creation
	region region  // fixed at creation

	mu        sync.Mutex
	committed uint64 // bytes handed to wazero; guarded by mu
	running   bool   // a guest entry runs on this memory; guarded by mu
	freed     bool   // wazero closed the module; guarded by mu
	unmapped  bool   // the region is gone; guarded by mu
	denied    error  // why the last grow failed; guarded by mu
}

var _ experimental.LinearMemory = (*linearMemory)(nil)

// newLinearMemory reserves max bytes for an instance whose memory is
// charged to c. It starts running: it is created inside instantiation,
// which runs _initialize.
func newLinearMemory(c *charge, maxBytes uint64) *linearMemory {
	return &linearMemory{charge: c, region: newRegion(maxBytes), running: true}
}

// Reallocate implements experimental.LinearMemory: it commits size bytes,
// charging what is new to the budget first. nil (memory.grow fails in the
// guest) when the budget has no room within the wait bound; denied then
// says why, so the call fails as "busy, retry" rather than as the guest's
// fault.
func (m *linearMemory) Reallocate(size uint64) []byte {
	m.mu.Lock()
	committed := m.committed
	m.mu.Unlock()
	if size > committed {
		if err := m.charge.grow(int64(size - committed)); err != nil {
			m.mu.Lock()
			m.denied = err
			m.mu.Unlock()
			return nil
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	buf, err := m.region.commit(size)
	if err != nil {
		if size > committed {
			m.charge.shrink(int64(size - committed))
		}
		m.denied = fmt.Errorf("committing %d bytes of linear memory: %w", size, err)
		return nil
	}
	m.committed = max(m.committed, size)
	return buf
}

// Free implements experimental.LinearMemory. Called by wazero when the
// module closes, possibly from another goroutine while a guest entry still
// runs: then the pages are only discarded (the guest reads zeros until it
// is stopped) and the unmapping waits for the entry to end.
func (m *linearMemory) Free() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.freed {
		return
	}
	m.freed = true
	if m.running {
		m.region.discard()
		return
	}
	m.unmapLocked()
}

// enter marks a guest entry as running; false when the module's memory is
// already freed (the module is closed and must not be entered).
func (m *linearMemory) enter() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.freed {
		return false
	}
	m.running = true
	return true
}

// exit ends a guest entry, unmapping the region if Free came meanwhile.
func (m *linearMemory) exit() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.running = false
	if m.freed {
		m.unmapLocked()
	}
}

// release frees the region of an instance whose module never got it (an
// instantiation that failed before wazero could close it). Idempotent.
func (m *linearMemory) release() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.freed, m.running = true, false
	m.unmapLocked()
}

func (m *linearMemory) unmapLocked() {
	if m.unmapped {
		return
	}
	m.unmapped = true
	m.region.unmap()
}

// size returns the committed bytes.
func (m *linearMemory) size() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.committed
}

// deniedErr returns why the last grow was refused, or nil.
func (m *linearMemory) deniedErr() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.denied
}

// allocatorFor returns the allocator wazero uses for inst's memory. It is
// passed in the instantiation context (experimental.WithMemoryAllocator),
// so it serves exactly one module.
func allocatorFor(inst *instance) experimental.MemoryAllocator {
	return experimental.MemoryAllocatorFunc(func(_, maxBytes uint64) experimental.LinearMemory {
		inst.mem = newLinearMemory(inst.charge, maxBytes)
		return inst.mem
	})
}

// charge is what one instance holds of the budget: a fixed overhead for
// its wazero bookkeeping, its committed linear memory, and bytes reserved
// for its growth before it started (so a new instance waits for room
// before it runs, rather than failing half-way through _initialize).
//
// Owned by the goroutine that uses the instance; close may come from
// another (eviction only takes idle instances, so never concurrently).
type charge struct {
	b   *budget  // fixed at creation
	v   *version // fixed at creation
	org string   // fixed at creation

	mu       sync.Mutex
	ctx      context.Context // of the guest entry running; bounds a wait in grow; guarded by mu
	held     int64           // bytes taken from the budget; guarded by mu
	reserved int64           // of held, not committed yet; guarded by mu
	closed   bool            // guarded by mu
}

// grow charges n more committed bytes: from the reservation, then from
// the budget, evicting idle instances or waiting as budget.take does.
func (c *charge) grow(n int64) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return errors.New("instance closed")
	}
	from := min(n, c.reserved)
	c.reserved -= from
	n -= from
	ctx := c.ctx
	c.mu.Unlock()
	if n == 0 {
		return nil
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if err := c.b.take(ctx, c.org, n, false); err != nil {
		return err
	}
	c.mu.Lock()
	c.held += n
	closed := c.closed
	c.mu.Unlock()
	c.v.memBytes.Add(n)
	if closed { // closed while waiting: give it straight back
		c.b.give(c.org, n, false)
		c.v.memBytes.Add(-n)
		return errors.New("instance closed")
	}
	return nil
}

// shrink gives back n bytes charged by a grow that did not happen.
func (c *charge) shrink(n int64) {
	c.mu.Lock()
	c.held -= n
	c.mu.Unlock()
	c.v.memBytes.Add(-n)
	c.b.give(c.org, n, false)
}

// trim gives back the reservation not used by now: an idle instance holds
// its overhead and its committed memory, nothing more.
func (c *charge) trim() {
	c.mu.Lock()
	n := c.reserved
	c.reserved, c.held = 0, c.held-n
	c.mu.Unlock()
	if n > 0 {
		c.v.memBytes.Add(-n)
		c.b.give(c.org, n, false)
	}
}

// setCtx sets the context a wait in grow honours; nil between entries.
func (c *charge) setCtx(ctx context.Context) {
	c.mu.Lock()
	c.ctx = ctx
	c.mu.Unlock()
}

// close gives back everything and the instance's slot. Idempotent.
func (c *charge) close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	n := c.held
	c.held, c.reserved = 0, 0
	c.mu.Unlock()
	c.v.memBytes.Add(-n)
	c.b.give(c.org, n, true)
}
