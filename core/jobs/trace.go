package jobs

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// metaTrace is the key of a job's metadata that holds the trace context of
// the request that enqueued it: {"traceparent": …, "tracestate": …}.
const metaTrace = "trace"

// traceMiddleware carries the enqueuing request's trace context into each
// job's metadata and runs each job under a span "job <kind>"
// (docs/tracing.md) that links to it. A link, not a parent: a run outlives
// the request that launched it (and may be retried by another replica), so
// it is a trace of its own that points back at the launch.
type traceMiddleware struct {
	river.MiddlewareDefaults
	tracer trace.Tracer
	prop   propagation.TextMapPropagator
}

// traceMiddlewares returns the River middleware for opts, or none when
// tracing is off.
func traceMiddlewares(opts Options) []rivertype.Middleware {
	if opts.TracerProvider == nil || opts.Propagator == nil {
		return nil
	}
	return []rivertype.Middleware{&traceMiddleware{
		tracer: opts.TracerProvider.Tracer("github.com/kobana/kadu/core/jobs"),
		prop:   opts.Propagator,
	}}
}

func (m *traceMiddleware) InsertMany(ctx context.Context, many []*rivertype.JobInsertParams, doInner func(context.Context) ([]*rivertype.JobInsertResult, error)) ([]*rivertype.JobInsertResult, error) {
	carrier := propagation.MapCarrier{}
	m.prop.Inject(ctx, carrier)
	if len(carrier) > 0 {
		for _, p := range many {
			p.Metadata = withMeta(p.Metadata, metaTrace, carrier)
		}
	}
	return doInner(ctx)
}

func (m *traceMiddleware) Work(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
	opts := []trace.SpanStartOption{
		trace.WithNewRoot(),
		trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithAttributes(
			attribute.String("messaging.system", "river"),
			attribute.String("messaging.destination.name", job.Queue),
			attribute.String("kadu.job.kind", job.Kind),
			attribute.Int("kadu.job.attempt", job.Attempt),
		),
	}
	if sc := m.launchedBy(job.Metadata); sc.IsValid() {
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: sc}))
	}
	ctx, span := m.tracer.Start(ctx, "job "+job.Kind, opts...)
	defer span.End()
	err := doInner(ctx)
	if err != nil {
		span.SetStatus(codes.Error, "job failed")
	}
	return err
}

// launchedBy reads the trace context metadata holds, if any.
func (m *traceMiddleware) launchedBy(metadata []byte) trace.SpanContext {
	var meta struct {
		Trace map[string]string `json:"trace"`
	}
	if len(metadata) == 0 || json.Unmarshal(metadata, &meta) != nil || len(meta.Trace) == 0 {
		return trace.SpanContext{}
	}
	return trace.SpanContextFromContext(m.prop.Extract(context.Background(), propagation.MapCarrier(meta.Trace)))
}

// withMeta sets key in a job's JSON metadata object, keeping what is there.
func withMeta(metadata []byte, key string, v any) []byte {
	m := map[string]json.RawMessage{}
	if len(metadata) > 0 {
		_ = json.Unmarshal(metadata, &m) // not an object: replaced
	}
	b, err := json.Marshal(v)
	if err != nil {
		return metadata
	}
	m[key] = b
	out, err := json.Marshal(m)
	if err != nil {
		return metadata
	}
	return out
}

// propagateFunc injects the trace context of ctx into outgoing headers
// (webhook deliveries), or is nil when tracing is off.
func propagateFunc(p propagation.TextMapPropagator) func(context.Context, http.Header) {
	if p == nil {
		return nil
	}
	return func(ctx context.Context, h http.Header) { p.Inject(ctx, propagation.HeaderCarrier(h)) }
}
