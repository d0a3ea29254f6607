package metrics

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// namespace prefixes every family Kadu defines.
const namespace = "kadu"

// Unknown stands for a label value outside its bounded set.
const Unknown = "unknown"

// Buckets of request-like durations, in seconds: 1 ms to 30 s. Bundle
// calls and HTTP requests are usually milliseconds; runs of api() and
// confirmations can take seconds.
var durationBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

// Buckets of store statements: 100 µs to 5 s.
var storeBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 5}

// Buckets of waits measured in minutes rather than milliseconds (a queued
// job, a webhook delivered after retries): 10 ms to 6 h.
var latencyBuckets = []float64{.01, .05, .1, .5, 1, 5, 15, 60, 300, 900, 3600, 6 * 3600}

// Metrics holds Kadu's collectors. Build it with New; a nil *Metrics is
// valid and records nothing, so tests and tools that build parts without an
// App need no registry. Safe for concurrent use.
type Metrics struct {
	mcpRequests *prometheus.CounterVec
	mcpDuration *prometheus.HistogramVec
	confirms    *prometheus.CounterVec
	approvals   *prometheus.CounterVec

	httpRequests *prometheus.CounterVec
	httpDuration *prometheus.HistogramVec

	bundleInstantiations *prometheus.HistogramVec
	bundleCalls          *prometheus.HistogramVec
	bundleFaults         *prometheus.CounterVec
	bundleQuarantines    *prometheus.CounterVec
	bundleReloads        *prometheus.CounterVec
	bundleAPICalls       *prometheus.CounterVec

	transitions    *prometheus.CounterVec
	jobWait        *prometheus.HistogramVec
	jobDuration    *prometheus.HistogramVec
	hookAttempts   *prometheus.CounterVec
	hookAttemptDur prometheus.Histogram
	hookDeliveries *prometheus.CounterVec
	hookLatency    prometheus.Histogram
	rateLimited    *prometheus.CounterVec
	rateLocal      *prometheus.CounterVec
	authFailures   *prometheus.CounterVec
	storeDuration  *prometheus.HistogramVec
	storeErrors    *prometheus.CounterVec
}

// NewRegistry returns a registry with the Go runtime and process
// collectors on it, for one App.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return reg
}

// New builds Kadu's families and registers them on reg. It fails only when
// reg already holds a family of the same name.
func New(reg prometheus.Registerer) (*Metrics, error) {
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: name, Help: help}, labels)
	}
	histogram := func(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: namespace, Name: name, Help: help, Buckets: buckets}, labels)
	}
	m := &Metrics{
		mcpRequests: counter("mcp_requests_total",
			"MCP requests answered, by protocol era, JSON-RPC method, tool/resource template/prompt name and outcome.",
			"era", "method", "name", "outcome"),
		mcpDuration: histogram("mcp_request_duration_seconds",
			"Time to answer an MCP request, from its arrival to the end of the response.",
			durationBuckets, "era", "method", "name", "outcome"),
		confirms: counter("confirmations_total",
			"In-chat confirmations of destructive tool calls, by event (asked, accepted, declined, cancelled, expired, refused, interrupted).",
			"event"),
		approvals: counter("approval_links_total",
			"Approval links of destructive tool calls, by event (issued, approved, cancelled, expired, interrupted).",
			"event"),
		httpRequests: counter("http_requests_total",
			"Requests answered on the public listener, by route template, method and status class.",
			"route", "method", "status_class"),
		httpDuration: histogram("http_request_duration_seconds",
			"Time to answer a request on the public listener, by route template, method and status class.",
			durationBuckets, "route", "method", "status_class"),
		bundleInstantiations: histogram("bundle_instantiation_duration_seconds",
			"Time to instantiate a bundle (compile cache hit, memory admission, _initialize), by bundle and outcome.",
			durationBuckets, "bundle", "outcome"),
		bundleCalls: histogram("bundle_call_duration_seconds",
			"Time spent in a bundle's entry point (guest code and the host calls it makes), by bundle and operation.",
			durationBuckets, "bundle", "op"),
		bundleFaults: counter("bundle_faults_total",
			"Bundle calls that trapped, timed out, ran out of memory or answered invalid output, by bundle and kind.",
			"bundle", "kind"),
		bundleQuarantines: counter("bundle_quarantines_total",
			"Times a bundle version was quarantined after repeated faults.",
			"bundle"),
		bundleReloads: counter("bundle_reloads_total",
			"Bundle reloads (file watcher, POST /admin/plugins/reload), by outcome (ok, error).",
			"outcome"),
		bundleAPICalls: counter("bundle_api_calls_total",
			"api() host calls of bundles dispatched to /api/v1, by route template, method and status class.",
			"route", "method", "status_class"),
		transitions: counter("execution_transitions_total",
			"Execution status changes, by from and to status, whoever made them (workers, API, sweeper, expiry).",
			"from", "to"),
		jobWait: histogram("queue_job_wait_seconds",
			"Time a River job waited between becoming runnable (scheduled_at) and starting, by queue and kind.",
			latencyBuckets, "queue", "kind"),
		jobDuration: histogram("queue_job_duration_seconds",
			"Time a River job ran on this replica, by queue, kind and outcome (ok, error).",
			latencyBuckets, "queue", "kind", "outcome"),
		hookAttempts: counter("webhook_attempts_total",
			"Webhook delivery attempts, by outcome (success, http_4xx, http_5xx, …, network_error).",
			"outcome"),
		hookAttemptDur: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: namespace, Name: "webhook_attempt_duration_seconds",
			Help: "Time of one webhook delivery attempt, from the request to the end of the response.", Buckets: durationBuckets}),
		hookDeliveries: counter("webhook_deliveries_total",
			"Webhook deliveries settled, by outcome (succeeded, failed).",
			"outcome"),
		hookLatency: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: namespace, Name: "webhook_delivery_latency_seconds",
			Help: "Time from an event to its successful delivery to one webhook, retries included.", Buckets: latencyBuckets}),
		rateLimited: counter("rate_limit_refusals_total",
			"Requests refused by a rate limit, by bucket kind (ip: unauthenticated or failed-auth requests per client address; org: an organisation's plan).",
			"bucket"),
		rateLocal: counter("rate_limit_local_decisions_total",
			"Requests a replica let through on its own count because the shared database could not be asked in time: the limit held per replica, not across them. By bucket kind (ip, org).",
			"bucket"),
		authFailures: counter("auth_failures_total",
			"Bearer tokens refused, by reason (malformed, expired, not_yet_valid, audience, issuer, signature, token_type, claims, issuer_unavailable, invalid).",
			"reason"),
		storeDuration: histogram("store_query_duration_seconds",
			`Time of one store statement, by operation ("select executions", "transaction", …).`,
			storeBuckets, "operation"),
		storeErrors: counter("store_query_errors_total",
			"Store statements that failed (not found aside), by operation.",
			"operation"),
	}
	cs := []prometheus.Collector{
		m.mcpRequests, m.mcpDuration, m.confirms, m.approvals, m.httpRequests, m.httpDuration,
		m.bundleInstantiations, m.bundleCalls, m.bundleFaults, m.bundleQuarantines, m.bundleReloads, m.bundleAPICalls,
		m.transitions, m.jobWait, m.jobDuration, m.hookAttempts, m.hookAttemptDur, m.hookDeliveries, m.hookLatency,
		m.rateLimited, m.rateLocal, m.authFailures, m.storeDuration, m.storeErrors,
	}
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// StatusClass is "2xx", "4xx", … for an HTTP status, or Unknown.
func StatusClass(status int) string {
	if status < 100 || status > 599 {
		return Unknown
	}
	return strconv.Itoa(status/100) + "xx"
}

// HTTPMethod is method when it is a standard HTTP method, else "other":
// a client chooses the method, so it is not a bounded value by itself.
func HTTPMethod(method string) string {
	switch method {
	case "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS":
		return method
	}
	return "other"
}

// MCPRequest records one answered MCP request. The caller bounds every
// value: see core/mcp/metrics.go.
func (m *Metrics) MCPRequest(era, method, name, outcome string, d time.Duration) {
	if m == nil {
		return
	}
	m.mcpRequests.WithLabelValues(era, method, name, outcome).Inc()
	m.mcpDuration.WithLabelValues(era, method, name, outcome).Observe(d.Seconds())
}

// Confirmation records an in-chat confirmation event.
func (m *Metrics) Confirmation(event string) {
	if m != nil {
		m.confirms.WithLabelValues(event).Inc()
	}
}

// Approval records an approval link event.
func (m *Metrics) Approval(event string) {
	if m != nil {
		m.approvals.WithLabelValues(event).Inc()
	}
}

// HTTPRequest records one request of the public listener; route is the
// router's template ("/api/v1/tasks/:id"), never the request's path.
func (m *Metrics) HTTPRequest(route, method string, status int, d time.Duration) {
	if m == nil {
		return
	}
	method, class := HTTPMethod(method), StatusClass(status)
	m.httpRequests.WithLabelValues(route, method, class).Inc()
	m.httpDuration.WithLabelValues(route, method, class).Observe(d.Seconds())
}

// BundleAPICall records one api() call a bundle made, by route template.
func (m *Metrics) BundleAPICall(route, method string, status int) {
	if m != nil {
		m.bundleAPICalls.WithLabelValues(route, HTTPMethod(method), StatusClass(status)).Inc()
	}
}

// BundleInstantiated records an instantiation of bundle; failed says it
// did not produce an instance.
func (m *Metrics) BundleInstantiated(bundle string, d time.Duration, failed bool) {
	if m != nil {
		m.bundleInstantiations.WithLabelValues(bundle, outcome(failed)).Observe(d.Seconds())
	}
}

// BundleCall records the time of one guest entry of bundle.
func (m *Metrics) BundleCall(bundle, op string, d time.Duration) {
	if m != nil {
		m.bundleCalls.WithLabelValues(bundle, op).Observe(d.Seconds())
	}
}

// BundleFault records a fault of bundle of the given kind.
func (m *Metrics) BundleFault(bundle, kind string) {
	if m != nil {
		m.bundleFaults.WithLabelValues(bundle, kind).Inc()
	}
}

// BundleQuarantined records that bundle was quarantined.
func (m *Metrics) BundleQuarantined(bundle string) {
	if m != nil {
		m.bundleQuarantines.WithLabelValues(bundle).Inc()
	}
}

// BundleReload records a reload of the bundles.
func (m *Metrics) BundleReload(failed bool) {
	if m != nil {
		m.bundleReloads.WithLabelValues(outcome(failed)).Inc()
	}
}

// ExecutionTransition records an execution going from one status to another.
func (m *Metrics) ExecutionTransition(from, to string) {
	if m != nil {
		m.transitions.WithLabelValues(from, to).Inc()
	}
}

// JobWorked records a River job: how long it waited to start and how long
// it ran.
func (m *Metrics) JobWorked(queue, kind string, wait, ran time.Duration, failed bool) {
	if m == nil {
		return
	}
	m.jobWait.WithLabelValues(queue, kind).Observe(max(wait, 0).Seconds())
	m.jobDuration.WithLabelValues(queue, kind, outcome(failed)).Observe(ran.Seconds())
}

// WebhookAttempt records one delivery attempt: outcome is "success",
// "network_error" or "http_<class>".
func (m *Metrics) WebhookAttempt(outcome string, d time.Duration) {
	if m == nil {
		return
	}
	m.hookAttempts.WithLabelValues(outcome).Inc()
	m.hookAttemptDur.Observe(d.Seconds())
}

// WebhookDelivered records a delivery settled as succeeded (with the time
// since its event) or failed.
func (m *Metrics) WebhookDelivered(succeeded bool, sinceEvent time.Duration) {
	if m == nil {
		return
	}
	if !succeeded {
		m.hookDeliveries.WithLabelValues("failed").Inc()
		return
	}
	m.hookDeliveries.WithLabelValues("succeeded").Inc()
	m.hookLatency.Observe(max(sinceEvent, 0).Seconds())
}

// RateLimited records a request refused by the bucket kind ("ip", "org").
func (m *Metrics) RateLimited(bucket string) {
	if m != nil {
		m.rateLimited.WithLabelValues(bucket).Inc()
	}
}

// RateLimitLocal records a request a replica decided alone, the shared
// database out of reach (bucket "ip" or "org").
func (m *Metrics) RateLimitLocal(bucket string) {
	if m != nil {
		m.rateLocal.WithLabelValues(bucket).Inc()
	}
}

// AuthFailure records a refused bearer token (reasons: auth.FailureReason).
func (m *Metrics) AuthFailure(reason string) {
	if m != nil {
		m.authFailures.WithLabelValues(reason).Inc()
	}
}

// StoreObserver times the store's statements; it satisfies store.Observer.
// Nil when m is nil, so store.Observers skips it.
func (m *Metrics) StoreObserver() *StoreObserver {
	if m == nil {
		return nil
	}
	return &StoreObserver{m: m}
}

// StoreObserver is the store.Observer of a Metrics.
type StoreObserver struct{ m *Metrics }

// Start times one statement of operation op (a bounded name, see
// store.Observer).
func (o *StoreObserver) Start(ctx context.Context, op string) (context.Context, func(error)) {
	start := time.Now()
	return ctx, func(err error) {
		o.m.storeDuration.WithLabelValues(op).Observe(time.Since(start).Seconds())
		if err != nil && !errors.Is(err, sql.ErrNoRows) { // a row not found is an answer, not a failure
			o.m.storeErrors.WithLabelValues(op).Inc()
		}
	}
}

func outcome(failed bool) string {
	if failed {
		return "error"
	}
	return "ok"
}
