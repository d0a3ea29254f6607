package plugin

import (
	"strings"
	"time"
)

// Metrics counts what the registry does, for the operator's metrics
// (core/metrics). bundle is the configured bundle name; op one of the
// operations a bundle serves ("tools/call", …, "describe"); kind a fault
// kind with "_" for spaces ("memory_limit"). Implementations must be safe
// for concurrent use and cheap. The pools' state is read at scrape time
// from Status and MemoryStatus instead.
type Metrics interface {
	BundleInstantiated(bundle string, d time.Duration, failed bool)
	BundleCall(bundle, op string, d time.Duration)
	BundleFault(bundle, kind string)
	BundleQuarantined(bundle string)
	BundleReload(failed bool)
}

// noMetrics stands for a nil Options.Metrics.
type noMetrics struct{}

func (noMetrics) BundleInstantiated(string, time.Duration, bool) {}
func (noMetrics) BundleCall(string, string, time.Duration)       {}
func (noMetrics) BundleFault(string, string)                     {}
func (noMetrics) BundleQuarantined(string)                       {}
func (noMetrics) BundleReload(bool)                              {}

func metricsOrNone(m Metrics) Metrics {
	if m == nil {
		return noMetrics{}
	}
	return m
}

// metricOp is op as a label: the entry of a load (kadu_describe) has none.
func metricOp(op string) string {
	if op == "" {
		return "describe"
	}
	return op
}

func metricKind(k FaultKind) string { return strings.ReplaceAll(string(k), " ", "_") }
