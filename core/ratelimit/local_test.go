package ratelimit_test

import (
	"context"
	"net"
	"sync"
	"testing"

	"github.com/kobana/kadu/core/ratelimit"
)

// TestLocalDecisionIsReported: when the shared database cannot be asked, the
// request is decided by this replica alone, and the operator is told which
// kind of limit went per-replica.
func TestLocalDecisionIsReported(t *testing.T) {
	// A port nobody listens on: every check fails at once.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	db := openPool(t, "postgres://kadu@"+addr+"/kadu?sslmode=disable&connect_timeout=2", 1)

	var mu sync.Mutex
	kinds := map[string]int{}
	l := newLimiter(t, ratelimit.Options{PerMinute: perMinute(600), DB: db,
		OnLocalDecision: func(kind string) {
			mu.Lock()
			defer mu.Unlock()
			kinds[kind]++
		}})
	ctx := context.Background()
	if ok, _ := l.AllowOrg(ctx, "org_a"); !ok {
		t.Fatal("AllowOrg refused the first request with the database down; want it decided locally and allowed")
	}
	if ok, _ := l.AllowIP(ctx, "203.0.113.7"); !ok {
		t.Fatal("AllowIP refused the first request with the database down")
	}
	mu.Lock()
	defer mu.Unlock()
	if kinds["org"] != 1 || kinds["ip"] != 1 {
		t.Fatalf("local decisions reported %v, want one of kind org and one of kind ip", kinds)
	}
}
