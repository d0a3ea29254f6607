package plugin

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/mcp"
)

// instantiationCount counts instantiations, for BenchmarkPoolOverConcurrency.
type instantiationCount struct {
	noMetrics
	n atomic.Int64
}

func (m *instantiationCount) BundleInstantiated(string, time.Duration, bool) { m.n.Add(1) }

// slowAPI answers every api() call after a millisecond, about what a store
// read costs: the guest waits in the host, so calls overlap as they do in
// a server.
type slowAPI struct{}

func (slowAPI) Dispatch(context.Context, *auth.Principal, string, string, []byte) (int, []byte) {
	time.Sleep(time.Millisecond)
	return 200, []byte(`{"data":[],"meta":{"next_cursor":null,"limit":1}}`)
}

// BenchmarkPoolOverConcurrency calls the echo guest's fetch tool (a Go
// guest using encoding/json, as an SDK bundle, and one api() round trip of
// a millisecond) from 16 goroutines of one organisation, with pool_size
// under and at that concurrency. instantiations/op is what
// each call paid in instantiations once warm: a pool that cannot follow
// demand instantiates a guest for most calls beyond it.
//
//	go test -run '^$' -bench PoolOverConcurrency -benchmem ./core/plugin
func BenchmarkPoolOverConcurrency(b *testing.B) {
	for _, size := range []int{4, 16} {
		b.Run(fmt.Sprintf("pool_size=%d", size), func(b *testing.B) {
			cfg := bundle(b, "echo")
			cfg.Limits.PoolSize = size
			m := &instantiationCount{}
			e := newEnv(b, func(o *Options) { o.Metrics, o.Dispatcher = m, slowAPI{} }, cfg)
			ctx, p := context.Background(), principal("org_a")
			call := &mcp.ToolCall{Tool: &mcp.Tool{Name: "fetch"}, Arguments: []byte(`{"paths":["/api/v1/tasks?limit=1"]}`),
				Client: era2026(), RequestID: "req_bench"}
			b.SetParallelism(8) // 16 goroutines on 2 cores, like 16 connections
			warm := func(pb *testing.PB) {
				for pb.Next() {
					if _, err := e.r.CallTool(ctx, p, call); err != nil {
						b.Error(err)
						return
					}
				}
			}
			b.RunParallel(warm) // the pool grows to the demand
			before := m.n.Load()
			b.ResetTimer()
			b.RunParallel(warm)
			b.StopTimer()
			b.ReportMetric(float64(m.n.Load()-before)/float64(b.N), "instantiations/op")
		})
	}
}
