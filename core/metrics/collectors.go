package metrics

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// BundleSample is one loaded bundle's state at scrape time.
type BundleSample struct {
	Name        string // configured bundle name
	Idle, Busy  int64  // pooled instances ready, instances in a call
	MemoryBytes int64  // charged to the memory budget by its instances
	Quarantined bool
}

// MemorySample is the plugin memory budget at scrape time.
type MemorySample struct {
	BudgetBytes, UsedBytes int64
	Evictions, Refusals    int64 // cumulative since start
}

var (
	bundleInstancesDesc = prometheus.NewDesc(namespace+"_bundle_instances",
		"Live instances of a bundle, by state (idle: pooled and ready; busy: in a call).", []string{"bundle", "state"}, nil)
	bundleMemoryDesc = prometheus.NewDesc(namespace+"_bundle_memory_bytes",
		"Bytes a bundle's instances hold against the plugin memory budget (linear memory and per-instance overhead).", []string{"bundle"}, nil)
	bundleQuarantinedDesc = prometheus.NewDesc(namespace+"_bundle_quarantined",
		"1 while a bundle's serving version is quarantined after repeated faults, else 0.", []string{"bundle"}, nil)
	budgetDesc = prometheus.NewDesc(namespace+"_bundle_memory_budget_bytes",
		"The plugin memory budget (plugins.memory_budget_mib).", nil, nil)
	budgetUsedDesc = prometheus.NewDesc(namespace+"_bundle_memory_used_bytes",
		"Bytes charged to the plugin memory budget now, all bundles together.", nil, nil)
	evictionsDesc = prometheus.NewDesc(namespace+"_bundle_evictions_total",
		"Idle bundle instances closed to make room in the memory budget.", nil, nil)
	busyRefusalsDesc = prometheus.NewDesc(namespace+"_bundle_busy_refusals_total",
		"Bundle calls answered busy (retry later) because the memory budget or instance cap was full.", nil, nil)
)

// bundleCollector reads the bundles' pools when scraped: the numbers are
// the registry's own, so they cannot drift from what it does.
type bundleCollector struct {
	read func() ([]BundleSample, MemorySample)
}

// NewBundleCollector returns a collector of the bundles' instances and
// memory, reading them through read at each scrape.
func NewBundleCollector(read func() ([]BundleSample, MemorySample)) prometheus.Collector {
	return bundleCollector{read: read}
}

func (c bundleCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{bundleInstancesDesc, bundleMemoryDesc, bundleQuarantinedDesc,
		budgetDesc, budgetUsedDesc, evictionsDesc, busyRefusalsDesc} {
		ch <- d
	}
}

func (c bundleCollector) Collect(ch chan<- prometheus.Metric) {
	bundles, mem := c.read()
	seen := map[string]bool{}
	for _, b := range bundles {
		if seen[b.Name] { // two versions while one drains: report the serving one
			continue
		}
		seen[b.Name] = true
		ch <- prometheus.MustNewConstMetric(bundleInstancesDesc, prometheus.GaugeValue, float64(b.Idle), b.Name, "idle")
		ch <- prometheus.MustNewConstMetric(bundleInstancesDesc, prometheus.GaugeValue, float64(b.Busy), b.Name, "busy")
		ch <- prometheus.MustNewConstMetric(bundleMemoryDesc, prometheus.GaugeValue, float64(b.MemoryBytes), b.Name)
		q := 0.0
		if b.Quarantined {
			q = 1
		}
		ch <- prometheus.MustNewConstMetric(bundleQuarantinedDesc, prometheus.GaugeValue, q, b.Name)
	}
	ch <- prometheus.MustNewConstMetric(budgetDesc, prometheus.GaugeValue, float64(mem.BudgetBytes))
	ch <- prometheus.MustNewConstMetric(budgetUsedDesc, prometheus.GaugeValue, float64(mem.UsedBytes))
	ch <- prometheus.MustNewConstMetric(evictionsDesc, prometheus.CounterValue, float64(mem.Evictions))
	ch <- prometheus.MustNewConstMetric(busyRefusalsDesc, prometheus.CounterValue, float64(mem.Refusals))
}

// QueueCount is how many River jobs of one queue are in one state.
type QueueCount struct {
	Queue, State string
	Jobs         int64
}

var (
	queueJobsDesc = prometheus.NewDesc(namespace+"_queue_jobs",
		"River jobs not yet finished, by queue and state (available, scheduled, retryable, running), shared by every replica.",
		[]string{"queue", "state"}, nil)
	queueScrapeErrorDesc = prometheus.NewDesc(namespace+"_queue_scrape_error",
		"1 when the last count of River jobs failed or timed out (kadu_queue_jobs is then missing), else 0.", nil, nil)
)

// queueCollector counts the queue's jobs in the store at scrape time, under
// a short timeout so that a slow database never hangs a scrape.
type queueCollector struct {
	count   func(ctx context.Context) ([]QueueCount, error)
	timeout time.Duration
	log     *slog.Logger
}

// NewQueueCollector returns a collector of the River queues' depth, read
// through count at each scrape within timeout.
func NewQueueCollector(count func(ctx context.Context) ([]QueueCount, error), timeout time.Duration, log *slog.Logger) prometheus.Collector {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return queueCollector{count: count, timeout: timeout, log: log}
}

func (c queueCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- queueJobsDesc
	ch <- queueScrapeErrorDesc
}

func (c queueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	counts, err := c.count(ctx)
	if err != nil {
		c.log.Warn("metrics: counting queue jobs", slog.Any("error", err))
		ch <- prometheus.MustNewConstMetric(queueScrapeErrorDesc, prometheus.GaugeValue, 1)
		return
	}
	ch <- prometheus.MustNewConstMetric(queueScrapeErrorDesc, prometheus.GaugeValue, 0)
	for _, q := range counts {
		ch <- prometheus.MustNewConstMetric(queueJobsDesc, prometheus.GaugeValue, float64(q.Jobs), q.Queue, q.State)
	}
}
