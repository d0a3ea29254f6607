// Package tracing owns Kadu's OpenTelemetry traces: it builds the
// TracerProvider from the tracing section of the configuration and the
// standard OTEL_* environment variables, exports spans over OTLP/HTTP, holds
// the W3C Trace Context propagator, and provides the small pieces the rest
// of Kadu wires in: the server span of an HTTP request (Middleware,
// SetRoute), the span of a store operation (StoreObserver), header
// injection for outgoing requests (Inject) and a slog.Handler that adds
// trace_id and span_id to log lines (LogHandler).
//
// Tracing is off unless configured: a Tracing built from an empty
// configuration, or Noop, hands out the no-op provider, whose spans cost
// almost nothing and export nothing.
//
// It must not: touch OpenTelemetry's global state (otel.SetTracerProvider,
// otel.SetTextMapPropagator) — every part receives its provider through its
// Options —, trust an incoming traceparent unless configured to, or put a
// value from a request (an id, a URL, a body) in a span name: names are a
// bounded set listed in docs/tracing.md.
package tracing
