package ratelimit

import (
	"testing"
	"time"
)

func TestNewRule(t *testing.T) {
	tests := []struct {
		name         string
		perMinute    int
		window       time.Duration
		wantInterval int64 // µs
		wantBurst    int64
	}{
		{name: "60/min, default window: one a second, 10 at once", perMinute: 60, window: 10 * time.Second, wantInterval: 1_000_000, wantBurst: 10},
		{name: "600/min: 100 at once", perMinute: 600, window: 10 * time.Second, wantInterval: 100_000, wantBurst: 100},
		{name: "5/min: under one request per window, burst 1", perMinute: 5, window: 10 * time.Second, wantInterval: 12_000_000, wantBurst: 1},
		{name: "1/min", perMinute: 1, window: 10 * time.Second, wantInterval: 60_000_000, wantBurst: 1},
		{name: "7/min: interval rounded up, never faster than the limit", perMinute: 7, window: 10 * time.Second, wantInterval: 8_571_429, wantBurst: 1},
		{name: "a whole minute of burst", perMinute: 60, window: time.Minute, wantInterval: 1_000_000, wantBurst: 60},
		{name: "absurd limit capped at one per µs", perMinute: 1 << 40, window: 10 * time.Second, wantInterval: 1, wantBurst: 10_000_000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRule(tt.perMinute, tt.window)
			if r.interval != tt.wantInterval || r.burst() != tt.wantBurst {
				t.Errorf("newRule(%d, %s) = interval %d µs, burst %d; want %d µs, %d",
					tt.perMinute, tt.window, r.interval, r.burst(), tt.wantInterval, tt.wantBurst)
			}
		})
	}
}

// TestRuleCheck walks one key through a sequence of requests: the GCRA
// state machine the memory map and the SQL statement both apply.
func TestRuleCheck(t *testing.T) {
	r := newRule(60, 3*time.Second) // one a second, burst 3
	const s = 1_000_000
	t0 := int64(1_800_000_000) * s
	steps := []struct {
		name     string
		at       int64 // µs after t0
		wantOK   bool
		wantWait int64 // µs, when refused
		wantTAT  int64 // µs after t0, after the step
	}{
		{name: "first request of a new key", at: 0, wantOK: true, wantTAT: 1 * s},
		{name: "second of the burst", at: 0, wantOK: true, wantTAT: 2 * s},
		{name: "third of the burst", at: 0, wantOK: true, wantTAT: 3 * s},
		{name: "burst spent", at: 0, wantOK: false, wantWait: 1 * s, wantTAT: 3 * s},
		{name: "refusals do not push the TAT", at: 0, wantOK: false, wantWait: 1 * s, wantTAT: 3 * s},
		{name: "a quarter of the interval later: still refused", at: s / 4, wantOK: false, wantWait: 3 * s / 4, wantTAT: 3 * s},
		{name: "one interval later: one more", at: 1 * s, wantOK: true, wantTAT: 4 * s},
		{name: "and only one", at: 1 * s, wantOK: false, wantWait: 1 * s, wantTAT: 4 * s},
		{name: "idle long enough: a full burst again", at: 10 * s, wantOK: true, wantTAT: 11 * s},
	}
	tat := int64(0)
	for _, st := range steps {
		next, ok, wait := r.check(tat, t0+st.at)
		if ok != st.wantOK || wait != st.wantWait || next-t0 != st.wantTAT {
			t.Fatalf("%s: check(TAT %d, now %d) = TAT %d, %v, wait %d; want TAT %d, %v, wait %d",
				st.name, tat-t0, st.at, next-t0, ok, wait, st.wantTAT, st.wantOK, st.wantWait)
		}
		tat = next
	}
}

func TestRetryAfter(t *testing.T) {
	tests := []struct {
		wait int64 // µs
		want time.Duration
	}{
		{wait: 1, want: time.Second},
		{wait: 999_999, want: time.Second},
		{wait: 1_000_000, want: time.Second},
		{wait: 1_000_001, want: 2 * time.Second},
		{wait: 59_500_000, want: 60 * time.Second},
		{wait: 0, want: time.Second}, // never "0": clients would retry at once
	}
	for _, tt := range tests {
		if got := retryAfter(tt.wait); got != tt.want {
			t.Errorf("retryAfter(%d µs) = %s, want %s", tt.wait, got, tt.want)
		}
	}
}
