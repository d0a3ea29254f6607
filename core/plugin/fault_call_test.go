package plugin

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kobana/kadu/core/mcp"
	"github.com/kobana/kadu/core/plugin/bundleconf"
)

// faultyBundle is the misbehaving guest with tight limits: 32 MiB of
// memory, 64 KiB of output, and the given timeout (0: the default).
func faultyBundle(t testing.TB, timeout time.Duration) BundleConfig {
	cfg := bundle(t, "faulty")
	cfg.Limits = Limits{Limits: bundleconf.Limits{Timeout: timeout, MemoryMiB: 32, MaxOutputBytes: 64 << 10}}
	return cfg
}

func TestFaultsFailOnlyTheCall(t *testing.T) {
	tests := []struct {
		tool     string
		wantKind FaultKind
	}{
		{tool: "spin", wantKind: FaultTimeout},
		{tool: "hog", wantKind: FaultMemory},
		{tool: "panic", wantKind: FaultTrap},
		{tool: "big", wantKind: FaultOutput},
		{tool: "garbage", wantKind: FaultInvalid},
		{tool: "bad_status", wantKind: FaultInvalid},
		{tool: "silent", wantKind: FaultInvalid},
		{tool: "bad_shape", wantKind: FaultInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			t.Parallel()
			// Only the looping guest gets a short deadline; the others must
			// fail for their own reason, however loaded the machine is. The
			// deadline also bounds the "ok" calls around the loop (and the
			// instance's start): 3 s leaves them room on a busy machine.
			var timeout time.Duration
			if tt.wantKind == FaultTimeout {
				timeout = 3 * time.Second
			}
			e := newEnv(t, nil, faultyBundle(t, timeout), bundle(t, "echo"))
			if _, err := e.call(t, "org_a", "ok", `{}`); err != nil {
				t.Fatalf("ok before: %v", err)
			}
			_, err := e.call(t, "org_a", tt.tool, `{}`)
			var fe *FaultError
			if !errors.As(err, &fe) || fe.Kind != tt.wantKind || fe.Bundle != "faulty@0.1.0" {
				t.Fatalf("%s: error = %v, want a %q fault of faulty@0.1.0", tt.tool, err, tt.wantKind)
			}
			// A fault is a plain error, so the engine answers -32603 and
			// keeps the details in the logs.
			var rpc *mcp.Error
			if errors.As(err, &rpc) {
				t.Fatalf("a fault surfaced as JSON-RPC error %v; the guest's text must not reach the client", rpc)
			}
			if tt.wantKind == FaultTimeout && !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("a timed-out call does not match context.DeadlineExceeded: %v", err)
			}
			if res, err := e.call(t, "org_a", "ok", `{}`); err != nil || text(t, res) != "ok" {
				t.Fatalf("the next call on the same bundle failed: %v", err)
			}
			if res, err := e.call(t, "org_a", "echo", `{"text":"fine"}`); err != nil || text(t, res) != "fine" {
				t.Fatalf("another bundle failed after the fault: %v", err)
			}
			st := e.statusOf(t, "faulty")
			if st.Faults != 1 || st.State != StateLoaded {
				t.Fatalf("status after one fault = %+v", st)
			}
			// The faulted instance was discarded: what lives is what is pooled.
			if st.Instances != int64(st.IdleInstances) {
				t.Fatalf("%d instances live but %d pooled: the faulted one was kept", st.Instances, st.IdleInstances)
			}
			if !strings.Contains(e.logs.String(), `"msg":"bundle fault"`) {
				t.Fatal("the fault was not logged")
			}
		})
	}
}

func TestQuarantineAfterRepeatedFaults(t *testing.T) {
	e := newEnv(t, func(o *Options) {
		o.Quarantine = QuarantinePolicy{Faults: 3, Window: time.Minute, Cooldown: 30 * time.Second}
	}, faultyBundle(t, 0), bundle(t, "echo"))
	for i := range 3 {
		if _, err := e.call(t, "org_a", "panic", `{}`); err == nil {
			t.Fatalf("panic call %d succeeded", i)
		}
		e.clock.Advance(time.Second)
	}
	calls := e.statusOf(t, "faulty").Calls
	_, err := e.call(t, "org_a", "ok", `{}`)
	if !errors.Is(err, ErrQuarantined) || !strings.Contains(err.Error(), "faulty@0.1.0") {
		t.Fatalf("call during quarantine = %v, want ErrQuarantined naming the bundle", err)
	}
	st := e.statusOf(t, "faulty")
	if st.State != StateQuarantined || st.QuarantinedUntil == nil || st.Calls != calls {
		t.Fatalf("status = %+v; want quarantined, and the refused call never entered the guest", st)
	}
	if _, err := e.call(t, "org_a", "echo", `{"text":"x"}`); err != nil {
		t.Fatalf("another bundle is affected by the quarantine: %v", err)
	}
	e.clock.Advance(30 * time.Second)
	if res, err := e.call(t, "org_a", "ok", `{}`); err != nil || text(t, res) != "ok" {
		t.Fatalf("call after the cool-down = %v", err)
	}
	if st := e.statusOf(t, "faulty"); st.State != StateLoaded {
		t.Fatalf("state after the cool-down = %s", st.State)
	}
}

func TestProtocolErrorsPassThrough(t *testing.T) {
	tests := []struct {
		name     string
		code     int64
		wantCode int64
	}{
		{name: "invalid params", code: -32602, wantCode: -32602},
		{name: "internal error", code: -32603, wantCode: -32603},
		{name: "server range", code: -32050, wantCode: -32050},
		{name: "parse error is not the bundle's to send", code: -32700, wantCode: -32603},
		{name: "method not found is not the bundle's to send", code: -32601, wantCode: -32603},
		{name: "outside the reserved range", code: 42, wantCode: -32603},
	}
	e := newEnv(t, nil, bundle(t, "echo"))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.call(t, "org_a", "fail", `{"code":`+strconv.FormatInt(tt.code, 10)+`}`)
			var rpc *mcp.Error
			if !errors.As(err, &rpc) || rpc.Code != tt.wantCode || rpc.Message != "failed on purpose" {
				t.Fatalf("error = %v, want JSON-RPC %d with the bundle's message", err, tt.wantCode)
			}
		})
	}
	if st := e.statusOf(t, "echo"); st.Faults != 0 || st.IdleInstances != 1 {
		t.Fatalf("a protocol error counted as a fault or cost the instance: %+v", st)
	}
}

func TestGuestLogIsRateLimited(t *testing.T) {
	e := newEnv(t, nil, faultyBundle(t, 0))
	if _, err := e.call(t, "org_a", "chatty", `{}`); err != nil {
		t.Fatal(err)
	}
	// 200 records at a frozen clock: the burst passes, the rest is dropped.
	if n := strings.Count(e.logs.String(), "bundle: xxxxxxxxxx"); n != guestLogBurst {
		t.Fatalf("%d guest records logged, want the burst of %d", n, guestLogBurst)
	}
}
