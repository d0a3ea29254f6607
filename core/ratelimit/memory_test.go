package ratelimit

import (
	"fmt"
	"testing"
	"time"
)

// TestMemoryBoundedUnderAddressFlood: a flood from 300,000 addresses
// never holds more keys than MaxKeys, and a client in the middle of it
// keeps its own limit.
func TestMemoryBoundedUnderAddressFlood(t *testing.T) {
	const maxKeys = 4096
	m := newMemory(maxKeys)
	r := newRule(60, 10*time.Second)
	now := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC).UnixMicro()
	for i := range 300_000 {
		ip := fmt.Sprintf("10.%d.%d.%d", i>>16&0xff, i>>8&0xff, i&0xff)
		if ok, _ := m.check(ipKey(ip), r, now); !ok {
			t.Fatalf("first request from %s refused", ip)
		}
		if i%30_000 == 0 {
			now += 1000 // the flood lasts a fraction of a second
		}
	}
	if n := m.len(); n > maxKeys {
		t.Errorf("memory holds %d keys after a flood of 300,000 addresses, want ≤ MaxKeys %d", n, maxKeys)
	}
}

// TestMemoryEvictsExpiredFirst: when a shard is full, a key still owing
// time keeps its state if the sample offers an expired one instead.
func TestMemoryEvictsExpiredFirst(t *testing.T) {
	m := newMemory(shardCount * 2)  // two keys per shard
	r := newRule(6, 10*time.Second) // one per 10 s, burst 1
	now := int64(1_800_000_000_000_000)
	// Find three keys of one shard.
	var keys []string
	for i := 0; len(keys) < 3; i++ {
		k := fmt.Sprintf("org:%d", i)
		if m.shard(k) == m.shard("org:0") {
			keys = append(keys, k)
		}
	}
	m.check(keys[0], r, now)            // TAT now+10 s
	m.check(keys[1], r, now-20_000_000) // TAT 10 s ago: idle
	m.check(keys[2], r, now)            // shard full: evicts keys[1]
	if ok, _ := m.check(keys[0], r, now); ok {
		t.Errorf("the key still owing time lost its state to an insert; the idle one should have gone")
	}
}

func TestSweepForgetsIdleKeys(t *testing.T) {
	m := newMemory(DefaultMaxKeys)
	r := newRule(60, 10*time.Second)
	now := int64(1_800_000_000_000_000)
	for i := range 1000 {
		m.check(fmt.Sprintf("ip:10.0.%d.%d", i/256, i%256), r, now)
	}
	for range 10 {
		m.check("org:busy", r, now) // TAT now + 10 s
	}
	if got := m.sweep(now + 5_000_000); got != 1000 {
		t.Errorf("sweep 5 s later dropped %d keys, want the 1000 idle ones", got)
	}
	if m.len() != 1 {
		t.Errorf("%d keys after the sweep, want only the busy one", m.len())
	}
	// The busy key kept what it owes: 5 more now, not a fresh 10.
	allowed := 0
	for range 10 {
		if ok, _ := m.check("org:busy", r, now+5_000_000); ok {
			allowed++
		}
	}
	if allowed != 5 {
		t.Errorf("busy key got %d requests after the sweep, want 5 (its state kept)", allowed)
	}
	if got := m.sweep(now + 60_000_000); got != 1 {
		t.Errorf("sweep a minute later dropped %d keys, want 1", got)
	}
}
