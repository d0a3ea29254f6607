package plugin

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
)

// instance is one instantiated module of a version, bound for life to one
// organisation (or to none, for kadu_describe). It is used by one goroutine
// at a time: the pool hands it out exclusively.
type instance struct {
	v      *version     // fixed at creation
	org    string       // fixed at creation; "" only for the describe instance
	mod    api.Module   // fixed at creation
	handle api.Function // fixed at creation; not goroutine-safe, like the instance
	logs   *guestLog    // fixed at creation

	pool   *pool         // set once created, before first use; nil unless pooled (per_org)
	charge *charge       // fixed at creation: what it holds of the memory budget
	mem    *linearMemory // set while instantiating, by the allocator

	cur       *invocation // the running entry, for stdio; owned by the running goroutine
	idleSince time.Time   // set when pooled

	closeOnce sync.Once
	closed    atomic.Bool
}

// instantiate creates an instance for org once the memory budget has room
// for it (see budget): its overhead and, reserved for its growth, what the
// version's instances have held so far. _initialize runs here, under the
// bundle's timeout, like any guest entry.
func (v *version) instantiate(ctx context.Context, org string) (*instance, error) {
	c, err := v.reg.budget.admit(ctx, v, org, v.memEstimate.Load())
	if err != nil {
		return nil, fmt.Errorf("bundle %s: %w", v.id, err)
	}
	inst := &instance{v: v, org: org, charge: c}
	inst.logs = newGuestLog(inst, v.log, v.reg.set.now)
	cfg := wazero.NewModuleConfig().
		WithName(""). // anonymous: many instances of one module
		WithStdout(&stdioWriter{g: inst.logs, level: slog.LevelInfo, source: "stdout"}).
		WithStderr(&stdioWriter{g: inst.logs, level: slog.LevelWarn, source: "stderr"}).
		WithSysWalltime().WithSysNanotime().
		WithRandSource(rand.Reader)
	// The default nanosleep returns at once: a real one would block the
	// goroutine in the host, where the deadline cannot interrupt it.
	if v.hasInit {
		cfg = cfg.WithStartFunctions(exportInit)
	} else {
		cfg = cfg.WithStartFunctions()
	}
	inv := &invocation{v: v, inst: inst}
	inst.cur = inv
	cctx, cancel := context.WithTimeout(ctx, v.cfg.Limits.Timeout)
	defer cancel()
	c.setCtx(cctx)
	ictx := experimental.WithMemoryAllocator(inv.withContext(cctx), allocatorFor(inst))
	start := time.Now()
	mod, err := v.rt.InstantiateModule(ictx, v.compiled, cfg)
	v.reg.metrics.BundleInstantiated(v.cfg.Name, time.Since(start), err != nil)
	inst.cur = nil
	c.setCtx(nil)
	if inst.mem != nil {
		inst.mem.exit()
	}
	if err != nil {
		if inst.mem != nil {
			inst.mem.release() // wazero may not have closed a module that failed early
		}
		c.close()
		if denied := inst.deniedErr(); denied != nil {
			return nil, fmt.Errorf("instantiating bundle %s: %w", v.id, denied)
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("instantiating bundle %s: %w", v.id, ctx.Err())
		}
		kind := FaultTrap
		if cctx.Err() != nil {
			kind = FaultTimeout
		}
		return nil, &FaultError{Bundle: v.id, Kind: kind, Err: fmt.Errorf("_initialize: %w", err)}
	}
	inst.mod = mod
	inst.handle = mod.ExportedFunction(exportHandle)
	v.instances.Add(1)
	return inst, nil
}

// close closes the module, which frees its linear memory, then gives its
// memory and slot back to the budget. Safe to call more than once and on an
// instance wazero already closed.
func (inst *instance) close() {
	inst.closeOnce.Do(func() {
		inst.closed.Store(true)
		if inst.mod != nil {
			_ = inst.mod.Close(context.Background())
			inst.v.instances.Add(-1)
		}
		inst.charge.close()
		if inst.pool != nil {
			inst.v.pools.lost(inst.pool)
		}
	})
}

// deniedErr is why the budget refused the instance's last memory grow, or
// nil.
func (inst *instance) deniedErr() error {
	if inst.mem == nil {
		return nil
	}
	return inst.mem.deniedErr()
}

// memSize is the instance's committed linear memory in bytes.
func (inst *instance) memSize() int64 {
	if inst.mem == nil {
		return 0
	}
	return int64(inst.mem.size())
}

// entry is the outcome of a guest entry that did not fault.
type entry struct {
	status uint32
	output []byte // valid JSON when status is 0 or 1
}

// call runs fn (kadu_describe or kadu_handle) with inv under the bundle's
// timeout. A non-nil error is a *FaultError, or the caller's own
// cancellation; either way the instance must be discarded.
func (inst *instance) call(ctx context.Context, fn api.Function, inv *invocation) (entry, error) {
	v := inst.v
	cctx, cancel := context.WithTimeout(ctx, v.cfg.Limits.Timeout)
	defer cancel()
	if inst.mem != nil && !inst.mem.enter() {
		// Its runtime was closed under it (a replaced version past the drain
		// bound): the memory is gone, so the guest must not run.
		return entry{}, fmt.Errorf("calling bundle %s: %w", v.id, ErrClosed)
	}
	inst.charge.setCtx(cctx)
	inv.inst, inst.cur = inst, inv
	start := time.Now()
	res, err := fn.Call(inv.withContext(cctx), uint64(len(inv.input)))
	v.reg.metrics.BundleCall(v.cfg.Name, metricOp(inv.op), time.Since(start))
	inst.cur = nil
	inst.charge.setCtx(nil)
	if inst.mem != nil {
		inst.mem.exit()
	}
	if denied := inst.deniedErr(); err != nil && denied != nil {
		// The guest ran out of memory because the budget had no room, not
		// because of its own limit: not its fault, and worth a retry. The
		// instance is discarded (its guest may be half-way through a panic).
		inst.close()
		v.log.LogAttrs(ctx, slog.LevelWarn, "bundle call refused memory by the plugin memory budget",
			slog.String("org", inst.org), slog.Any("error", denied))
		return entry{}, fmt.Errorf("calling bundle %s: %w", v.id, denied)
	}
	if err != nil {
		if ctx.Err() != nil {
			// The caller gave up (client gone, request deadline): not the
			// bundle's fault, so the breaker does not count it.
			return entry{}, fmt.Errorf("calling bundle %s: %w", v.id, ctx.Err())
		}
		return entry{}, &FaultError{Bundle: v.id, Kind: inst.classify(cctx, err, inv), Err: err}
	}
	switch {
	case inv.tooLarge:
		return entry{}, &FaultError{Bundle: v.id, Kind: FaultOutput,
			Err: fmt.Errorf("output_write over the %d-byte cap", v.cfg.Limits.MaxOutputBytes)}
	case len(res) != 1:
		return entry{}, &FaultError{Bundle: v.id, Kind: FaultInvalid, Err: errors.New("export returned no status")}
	}
	e := entry{status: api.DecodeU32(res[0]), output: inv.output}
	switch {
	case e.status > 1:
		return entry{}, &FaultError{Bundle: v.id, Kind: FaultInvalid, Err: fmt.Errorf("unknown status %d", e.status)}
	case !inv.hasOutput:
		return entry{}, &FaultError{Bundle: v.id, Kind: FaultInvalid, Err: fmt.Errorf("status %d without output", e.status)}
	case !json.Valid(e.output):
		return entry{}, &FaultError{Bundle: v.id, Kind: FaultInvalid, Err: errors.New("output is not valid JSON")}
	}
	return e, nil
}

// classify names a failed entry. A memory fault is recognised after the
// fact: memory.grow failing leaves no trace but the guest's reaction, so an
// instance whose memory reached the last eighth of its limit (at least
// 4 MiB, a Go heap arena), or whose stderr says "out of memory", is
// counted as one. The call fails the same way whatever the label.
func (inst *instance) classify(cctx context.Context, err error, inv *invocation) FaultKind {
	if errors.Is(err, context.DeadlineExceeded) || cctx.Err() != nil {
		return FaultTimeout
	}
	limit := uint64(inst.v.cfg.Limits.MemoryMiB) << 20
	slack := max(limit/8, 4<<20)
	if uint64(inst.mod.Memory().Size())+slack >= limit || bytes.Contains(inv.stderr, []byte("out of memory")) {
		return FaultMemory
	}
	return FaultTrap
}
