package tracing

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// ScopeName is the instrumentation scope of every Kadu span.
const ScopeName = "github.com/kobana/kadu"

// Config is what the tracing section of the configuration says
// (core/config Tracing).
type Config struct {
	// Endpoint is the OTLP/HTTP traces URL. A URL without a path gets
	// "/v1/traces". Empty: tracing is on only when OTEL_EXPORTER_OTLP_ENDPOINT
	// or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set.
	Endpoint string
	// SampleRatio is the share of new traces recorded, 0 to 1; a span with a
	// parent follows its parent's decision.
	SampleRatio float64
	// TrustTraceparent makes an incoming W3C traceparent the parent of the
	// request's span. False: the request starts a new trace and the incoming
	// one is only recorded as a link.
	TrustTraceparent bool
	// ServiceName is the service.name resource attribute, unless
	// OTEL_SERVICE_NAME says otherwise. Empty: "kadu".
	ServiceName string
	// ServiceVersion is the service.version resource attribute.
	ServiceVersion string
}

// Options are the parts that do not come from configuration.
type Options struct {
	// Exporter replaces the OTLP/HTTP exporter (tests). With it, tracing is
	// on whatever the endpoint says.
	Exporter sdktrace.SpanExporter
	// BatchTimeout is the longest a finished span waits before export.
	// Default: the SDK's (5 s, or OTEL_BSP_SCHEDULE_DELAY).
	BatchTimeout time.Duration
	// Getenv reads the environment. Default os.Getenv.
	Getenv func(string) string
}

// Tracing is the process's tracing: a provider (no-op when off), the
// propagator and the trust rule. Safe for concurrent use.
type Tracing struct {
	provider trace.TracerProvider
	sdk      *sdktrace.TracerProvider // nil when off
	tracer   trace.Tracer
	prop     propagation.TextMapPropagator
	trust    bool
}

// Noop returns tracing that is off.
func Noop() *Tracing {
	p := noop.NewTracerProvider()
	return &Tracing{provider: p, tracer: p.Tracer(ScopeName), prop: propagation.TraceContext{}}
}

// New builds the tracing cfg and the environment describe. Shut it down
// (Shutdown) to export the spans still buffered.
func New(ctx context.Context, cfg Config, opts Options) (*Tracing, error) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	t := Noop()
	t.trust = cfg.TrustTraceparent
	if !enabled(cfg, opts, getenv) {
		return t, nil
	}
	exp := opts.Exporter
	if exp == nil {
		var eopts []otlptracehttp.Option
		if cfg.Endpoint != "" {
			u, err := tracesURL(cfg.Endpoint)
			if err != nil {
				return nil, err
			}
			eopts = append(eopts, otlptracehttp.WithEndpointURL(u))
		}
		var err error
		// Reads the OTEL_EXPORTER_OTLP_* variables (headers, timeout,
		// compression, certificates) itself; a configured endpoint wins.
		if exp, err = otlptracehttp.New(ctx, eopts...); err != nil {
			return nil, fmt.Errorf("tracing: OTLP/HTTP exporter: %w", err)
		}
	}
	res, err := newResource(ctx, cfg)
	if err != nil {
		return nil, err
	}
	var bopts []sdktrace.BatchSpanProcessorOption
	if opts.BatchTimeout > 0 {
		bopts = append(bopts, sdktrace.WithBatchTimeout(opts.BatchTimeout))
	}
	ratio := cfg.SampleRatio
	t.sdk = sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp, bopts...),
		sdktrace.WithResource(res),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(ratio))),
	)
	t.provider = t.sdk
	t.tracer = t.sdk.Tracer(ScopeName)
	return t, nil
}

// enabled applies the rules of docs/tracing.md: OTEL_SDK_DISABLED=true or
// OTEL_TRACES_EXPORTER=none turn tracing off; otherwise a configured
// endpoint, an OTLP endpoint in the environment or a given exporter turn it
// on.
func enabled(cfg Config, opts Options, getenv func(string) string) bool {
	if b, err := strconv.ParseBool(strings.TrimSpace(getenv("OTEL_SDK_DISABLED"))); err == nil && b {
		return false
	}
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")), "none") {
		return false
	}
	return opts.Exporter != nil || cfg.Endpoint != "" ||
		getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// tracesURL appends the OTLP traces path to an endpoint given without one.
func tracesURL(endpoint string) (string, error) {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("tracing.endpoint %q: want an http(s) URL such as http://127.0.0.1:4318/v1/traces", endpoint)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/v1/traces"
	}
	return u.String(), nil
}

// newResource describes the process: the configured service name and
// version, then OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME, which win.
func newResource(ctx context.Context, cfg Config) (*resource.Resource, error) {
	name := cfg.ServiceName
	if name == "" {
		name = "kadu"
	}
	attrs := []attribute.KeyValue{attribute.String("service.name", name)}
	if cfg.ServiceVersion != "" {
		attrs = append(attrs, attribute.String("service.version", cfg.ServiceVersion))
	}
	res, err := resource.New(ctx,
		resource.WithTelemetrySDK(),
		resource.WithAttributes(attrs...),
		resource.WithFromEnv(),
	)
	if err != nil && res == nil {
		return nil, fmt.Errorf("tracing: resource: %w", err)
	}
	// A malformed OTEL_RESOURCE_ATTRIBUTES entry is skipped, the rest kept.
	return res, nil
}

// Enabled reports whether spans are recorded and exported.
func (t *Tracing) Enabled() bool { return t.sdk != nil }

// Provider is the TracerProvider to hand to each part's Options.
func (t *Tracing) Provider() trace.TracerProvider { return t.provider }

// Tracer is the provider's tracer for Kadu's scope.
func (t *Tracing) Tracer() trace.Tracer { return t.tracer }

// Propagator is the W3C Trace Context propagator, held here rather than
// globally.
func (t *Tracing) Propagator() propagation.TextMapPropagator { return t.prop }

// Inject writes the traceparent (and tracestate) of ctx's span into h, for
// a request Kadu sends (the HTTP runner, webhook deliveries). Nothing is
// written without a span.
func (t *Tracing) Inject(ctx context.Context, h http.Header) {
	t.prop.Inject(ctx, propagation.HeaderCarrier(h))
}

// ForceFlush exports every finished span now.
func (t *Tracing) ForceFlush(ctx context.Context) error {
	if t.sdk == nil {
		return nil
	}
	return t.sdk.ForceFlush(ctx)
}

// Shutdown exports what is buffered and stops the provider; spans started
// afterwards are dropped.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if t.sdk == nil {
		return nil
	}
	if err := t.sdk.Shutdown(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("tracing: flushing spans: %w", err)
	}
	return nil
}
