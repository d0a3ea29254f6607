package plugin

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// FaultKind says how a guest entry failed.
type FaultKind string

// Fault kinds. The call fails with an internal error whatever the kind; the
// kind is for logs, status and the circuit breaker's accounting.
const (
	FaultTrap    FaultKind = "trap"             // a panic, unreachable, a bad memory access, proc_exit
	FaultTimeout FaultKind = "timeout"          // past Limits.Timeout
	FaultMemory  FaultKind = "memory limit"     // ran out of Limits.MemoryMiB
	FaultOutput  FaultKind = "output too large" // output_write over Limits.MaxOutputBytes
	FaultInvalid FaultKind = "invalid output"   // unknown status, no output, output that is not the op's result JSON
)

// FaultError reports a bundle call that trapped, ran past its deadline, ran
// out of memory, wrote too much or answered something that is not a result.
// The instance is discarded; the client sees an internal error (-32603),
// never the guest's text.
type FaultError struct {
	Bundle string    // "tasks@1.4.0"
	Kind   FaultKind // FaultTrap, FaultTimeout, FaultMemory, FaultOutput, FaultInvalid
	Err    error     // from wazero (e.g. *sys.ExitError) or a description
}

func (e *FaultError) Error() string {
	return fmt.Sprintf("bundle %s: %s: %v", e.Bundle, e.Kind, e.Err)
}

// Unwrap returns the cause: errors.Is(err, context.DeadlineExceeded) holds
// for a timed-out call, through wazero's *sys.ExitError.
func (e *FaultError) Unwrap() error { return e.Err }

// ErrQuarantined is wrapped by the error of a call to a bundle version that
// faulted too often; it fails at once until the cool-down ends.
var ErrQuarantined = errors.New("bundle quarantined after repeated faults")

// ErrStateRefused is wrapped, next to the client's -32602 "Invalid or
// expired requestState", by the error of a call whose requestState the
// Registry did not seal for it (forged, expired, or bound to another call):
// the bundle was not called. It lets a caller that records what ran — the
// audit trail's tool.call — tell such a call from one that failed running.
var ErrStateRefused = errors.New("requestState refused")

// ErrClosed is returned by calls on a closed Registry.
var ErrClosed = errors.New("plugin registry closed")

// breaker is the circuit breaker of one bundle version: policy.Faults
// faults within policy.Window quarantine the version for policy.Cooldown.
// Safe for concurrent use.
type breaker struct {
	policy QuarantinePolicy // fixed at creation

	mu     sync.Mutex
	recent []time.Time // faults within the window, oldest first; guarded by mu
	until  time.Time   // quarantined before this instant; guarded by mu
	total  int64       // every fault ever; guarded by mu
}

// allow reports whether a call may run at now; when not, it returns the end
// of the quarantine.
func (b *breaker) allow(now time.Time) (time.Time, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if now.Before(b.until) {
		return b.until, false
	}
	return time.Time{}, true
}

// fault records a fault at now and reports whether it starts a quarantine.
func (b *breaker) fault(now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.total++
	cut := now.Add(-b.policy.Window)
	keep := b.recent[:0]
	for _, t := range b.recent {
		if t.After(cut) {
			keep = append(keep, t)
		}
	}
	b.recent = append(keep, now)
	if len(b.recent) < b.policy.Faults {
		return false
	}
	// The count starts afresh: after the cool-down the version gets a full
	// window before it can be quarantined again.
	b.until, b.recent = now.Add(b.policy.Cooldown), b.recent[:0]
	return true
}

// state returns the fault total and the end of the current quarantine
// (zero when none at now).
func (b *breaker) state(now time.Time) (faults int64, until time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if now.Before(b.until) {
		until = b.until
	}
	return b.total, until
}
