package ratelimit_test

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/kobana/kadu/core/ratelimit"
	"github.com/kobana/kadu/core/store/pgtest"
)

// benchLimit is high enough that every request is allowed, so the
// benchmarks measure the full path (a refusal in memory is cheaper).
const benchLimit = 1 << 30

// BenchmarkMemoryAllow: AllowOrg on the single-node limiter from every
// core at once, over 1,000 organisations, with the real clock.
func BenchmarkMemoryAllow(b *testing.B) {
	l := newLimiter(b, ratelimit.Options{PerMinute: perMinute(benchLimit)})
	orgs := make([]string, 1000)
	for i := range orgs {
		orgs[i] = fmt.Sprintf("org_%04d", i)
	}
	var seq atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := int(seq.Add(1)) * 7919
		for pb.Next() {
			i++
			if ok, _ := l.AllowOrg(b.Context(), orgs[i%len(orgs)]); !ok {
				b.Fatal("refused")
			}
		}
	})
}

// BenchmarkMemoryAllowIP: AllowIP, which also parses the address and
// builds its key (IPv6: the /64).
func BenchmarkMemoryAllowIP(b *testing.B) {
	l := newLimiter(b, ratelimit.Options{IPPerMinute: benchLimit})
	ips := make([]string, 1000)
	for i := range ips {
		if i%2 == 0 {
			ips[i] = fmt.Sprintf("198.51.%d.%d", i/256, i%256)
		} else {
			ips[i] = fmt.Sprintf("2001:db8:%x::1", i)
		}
	}
	var seq atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := int(seq.Add(1)) * 7919
		for pb.Next() {
			i++
			if ok, _ := l.AllowIP(b.Context(), ips[i%len(ips)]); !ok {
				b.Fatal("refused")
			}
		}
	})
}

// BenchmarkPostgresAllow: AllowOrg on the shared limiter, one statement per
// request on a local PostgreSQL 15 (fsync off, as pgtest runs it), with the
// database's clock as in production. "keys" spreads requests over 1,000
// organisations; "one key" has every request queue on one row's lock.
func BenchmarkPostgresAllow(b *testing.B) {
	cluster := pgtest.Shared(b)
	for _, bc := range []struct {
		name string
		orgs int
	}{{"keys", 1000}, {"one key", 1}} {
		b.Run(bc.name, func(b *testing.B) {
			db := openPool(b, newDatabase(b, cluster), 8)
			l := newLimiter(b, ratelimit.Options{PerMinute: perMinute(benchLimit), DB: db})
			orgs := make([]string, bc.orgs)
			for i := range orgs {
				orgs[i] = fmt.Sprintf("org_%04d", i)
			}
			var seq atomic.Int64
			b.SetParallelism(4) // 8 goroutines on 2 cores: enough to fill the pool
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				i := int(seq.Add(1)) * 7919
				for pb.Next() {
					i++
					if ok, _ := l.AllowOrg(b.Context(), orgs[i%len(orgs)]); !ok {
						b.Fatal("refused")
					}
				}
			})
		})
	}
}
