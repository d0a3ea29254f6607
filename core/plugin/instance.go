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
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
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

	cur       *invocation // the running entry, for stdio; owned by the running goroutine
	idleSince time.Time   // set when pooled

	closeOnce sync.Once
	release   func() // returns the budget slot; called once, by close
}

// instantiate creates an instance for org under a slot of the global
// budget the caller already holds (release returns it). _initialize runs
// here, under the bundle's timeout, like any guest entry.
func (v *version) instantiate(ctx context.Context, org string, release func()) (*instance, error) {
	inst := &instance{v: v, org: org, release: release}
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
	mod, err := v.rt.InstantiateModule(context.WithValue(cctx, invocationKey{}, inv), v.compiled, cfg)
	inst.cur = nil
	if err != nil {
		release()
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

// close closes the module and returns the budget slot. Safe to call more
// than once and on an instance wazero already closed.
func (inst *instance) close() {
	inst.closeOnce.Do(func() {
		if inst.mod != nil {
			_ = inst.mod.Close(context.Background())
			inst.v.instances.Add(-1)
		}
		if inst.release != nil {
			inst.release()
		}
	})
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
	inv.inst, inst.cur = inst, inv
	res, err := fn.Call(context.WithValue(cctx, invocationKey{}, inv), uint64(len(inv.input)))
	inst.cur = nil
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
