package plugin

import (
	"testing"
	"time"
)

func TestBreaker(t *testing.T) {
	p := QuarantinePolicy{Faults: 3, Window: time.Minute, Cooldown: 30 * time.Second}
	t0 := time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name          string
		faults        []time.Duration // offsets from t0
		check         time.Duration
		wantAllowed   bool
		wantQuarUntil time.Duration // offset; meaningful when not allowed
	}{
		{name: "no faults", check: 0, wantAllowed: true},
		{name: "below the threshold", faults: []time.Duration{0, time.Second}, check: 2 * time.Second, wantAllowed: true},
		{name: "threshold within the window", faults: []time.Duration{0, time.Second, 2 * time.Second}, check: 3 * time.Second, wantQuarUntil: 32 * time.Second},
		{name: "still quarantined just before the end", faults: []time.Duration{0, time.Second, 2 * time.Second}, check: 31 * time.Second, wantQuarUntil: 32 * time.Second},
		{name: "released after the cool-down", faults: []time.Duration{0, time.Second, 2 * time.Second}, check: 32 * time.Second, wantAllowed: true},
		{name: "faults spread beyond the window", faults: []time.Duration{0, 40 * time.Second, 80 * time.Second}, check: 81 * time.Second, wantAllowed: true},
		{name: "count starts afresh after a quarantine", faults: []time.Duration{0, 1, 2, 40 * time.Second, 41 * time.Second}, check: 42 * time.Second, wantAllowed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := &breaker{policy: p}
			for _, f := range tt.faults {
				b.fault(t0.Add(f))
			}
			until, ok := b.allow(t0.Add(tt.check))
			if ok != tt.wantAllowed {
				t.Fatalf("allow() = %v, want %v", ok, tt.wantAllowed)
			}
			if !ok && !until.Equal(t0.Add(tt.wantQuarUntil)) {
				t.Fatalf("quarantined until %s, want %s", until, t0.Add(tt.wantQuarUntil))
			}
			if total, _ := b.state(t0.Add(tt.check)); total != int64(len(tt.faults)) {
				t.Fatalf("fault total = %d, want %d", total, len(tt.faults))
			}
		})
	}
}
