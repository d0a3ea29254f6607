package app

import (
	"context"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/jobs"
	"github.com/kobana/kadu/core/metrics"
	"github.com/kobana/kadu/core/plugin"
	"github.com/kobana/kadu/core/store"
)

// queueScrapeTimeout bounds the count of queued jobs a scrape makes: a
// slow database must not hang Prometheus (its default scrape timeout is
// 10 s).
const queueScrapeTimeout = 2 * time.Second

// newMetrics builds the App's registry (Go runtime and process collectors
// included) and Kadu's families on it. Each App has its own: tests start
// several in one process.
func newMetrics() (*prometheus.Registry, *metrics.Metrics, error) {
	reg := metrics.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		return nil, nil, err
	}
	return reg, m, nil
}

// storeObserver is m's store.Observer, or nil (not a typed nil, which
// store.Observers would keep).
func storeObserver(m *metrics.Metrics) store.Observer {
	if m == nil {
		return nil
	}
	return m.StoreObserver()
}

// transitionCounter counts every change of an execution's status in m, or
// is nil.
func transitionCounter(m *metrics.Metrics) func(from, to store.Status) {
	if m == nil {
		return nil
	}
	return func(from, to store.Status) { m.ExecutionTransition(string(from), string(to)) }
}

// mountMetrics serves GET /metrics on the admin listener and registers the
// collectors that read state at scrape time: the bundles' pools and the
// queue's depth.
func (a *App) mountMetrics() {
	if a.plugins != nil {
		reg := a.plugins
		a.registry.MustRegister(metrics.NewBundleCollector(func() ([]metrics.BundleSample, metrics.MemorySample) {
			return bundleSamples(reg.Status(), reg.MemoryStatus())
		}))
	}
	q := a.backend.queue
	a.registry.MustRegister(metrics.NewQueueCollector(func(ctx context.Context) ([]metrics.QueueCount, error) {
		counts, err := q.Depth(ctx)
		out := make([]metrics.QueueCount, len(counts))
		for i, c := range counts {
			out[i] = metrics.QueueCount(c)
		}
		return out, err
	}, queueScrapeTimeout, a.log))
	h := promhttp.HandlerFor(a.registry, promhttp.HandlerOpts{Registry: a.registry, Timeout: 10 * time.Second})
	a.admin.Handle("GET /metrics", promhttp.InstrumentMetricHandler(a.registry, h))
}

func bundleSamples(st []plugin.BundleStatus, mem plugin.MemoryStatus) ([]metrics.BundleSample, metrics.MemorySample) {
	out := make([]metrics.BundleSample, 0, len(st))
	for _, b := range st {
		if b.State == plugin.StateFailed {
			continue // no version serves: nothing to count
		}
		out = append(out, metrics.BundleSample{
			Name: b.Name, Idle: int64(b.IdleInstances), Busy: max(b.Instances-int64(b.IdleInstances), 0),
			MemoryBytes: b.MemoryBytes, Quarantined: b.State == plugin.StateQuarantined,
		})
	}
	return out, metrics.MemorySample{BudgetBytes: mem.BudgetBytes, UsedBytes: mem.UsedBytes,
		Evictions: mem.Evictions, Refusals: mem.BusyRefusals}
}

// observeRoutes is echo middleware, installed with Pre in front of every
// other, that reports each request by route template (c.Path(), once
// routed) to record. A request answered before routing (the Host and
// Origin guard, a drain) or matching no route is "unmatched": the raw path
// is never a label.
func observeRoutes(e *echo.Echo, record func(route, method string, status int, d time.Duration)) echo.MiddlewareFunc {
	// Built at the first request, once every route is registered.
	routes := sync.OnceValue(func() map[string]bool {
		m := map[string]bool{}
		for _, r := range e.Routes() {
			m[r.Path] = true
		}
		return m
	})
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			start := time.Now()
			if err := next(c); err != nil {
				c.Error(err) // write the answer now, to see its status
			}
			route := c.Path()
			if route == "" || !routes()[route] {
				route = "unmatched"
			}
			record(route, c.Request().Method, c.Response().Status, time.Since(start))
			return nil
		}
	}
}

// countingVerifier counts the tokens its verifier refuses, by reason.
type countingVerifier struct {
	v auth.TokenVerifier
	m *metrics.Metrics
}

func (c countingVerifier) Verify(ctx context.Context, raw string) (*auth.Principal, error) {
	p, err := c.v.Verify(ctx, raw)
	if err != nil {
		c.m.AuthFailure(auth.FailureReason(err))
	}
	return p, err
}

// limiter is the rate limiter REST and MCP share (api.Limiter, mcp.Limiter).
type limiter interface {
	AllowIP(ctx context.Context, ip string) (bool, time.Duration)
	AllowOrg(ctx context.Context, orgID string) (bool, time.Duration)
}

// countingLimiter counts the refusals of l by bucket kind.
type countingLimiter struct {
	l limiter
	m *metrics.Metrics
}

func (c countingLimiter) AllowIP(ctx context.Context, ip string) (bool, time.Duration) {
	ok, retry := c.l.AllowIP(ctx, ip)
	if !ok {
		c.m.RateLimited("ip")
	}
	return ok, retry
}

func (c countingLimiter) AllowOrg(ctx context.Context, orgID string) (bool, time.Duration) {
	ok, retry := c.l.AllowOrg(ctx, orgID)
	if !ok {
		c.m.RateLimited("org")
	}
	return ok, retry
}

var (
	_ jobs.Metrics   = (*metrics.Metrics)(nil)
	_ plugin.Metrics = (*metrics.Metrics)(nil)
)
