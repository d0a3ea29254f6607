package tracing

import (
	"context"
	"net/http"

	"github.com/felixge/httpsnoop"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// routedKey marks the span SetRoute renames: the server span of a request,
// or the span of an in-process API dispatch, never a span below them.
type routedKey struct{}

type routed struct {
	span   trace.Span
	prefix string
}

// Middleware starts the server span of every request to next. Its name is
// the method until SetRoute, called once the router has matched, makes it
// "<METHOD> <route template>". An incoming traceparent is the parent only
// with tracing.trust_traceparent; otherwise the request starts a new trace
// that links to it. Off: next unchanged.
func (t *Tracing) Middleware(next http.Handler) http.Handler {
	if !t.Enabled() {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		opts := []trace.SpanStartOption{
			trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(attribute.String("http.request.method", r.Method)),
		}
		remote := trace.SpanContextFromContext(t.prop.Extract(context.Background(), propagation.HeaderCarrier(r.Header)))
		switch {
		case remote.IsValid() && t.trust:
			ctx = trace.ContextWithRemoteSpanContext(ctx, remote)
		case remote.IsValid():
			opts = append(opts, trace.WithNewRoot(), trace.WithLinks(trace.Link{
				SpanContext: remote,
				Attributes:  []attribute.KeyValue{attribute.Bool("kadu.traceparent.trusted", false)},
			}))
		default:
			opts = append(opts, trace.WithNewRoot())
		}
		ctx, span := t.tracer.Start(ctx, r.Method, opts...)
		defer span.End()
		ctx = context.WithValue(ctx, routedKey{}, &routed{span: span})
		status := 0
		ww := httpsnoop.Wrap(w, httpsnoop.Hooks{
			WriteHeader: func(next httpsnoop.WriteHeaderFunc) httpsnoop.WriteHeaderFunc {
				return func(code int) {
					if status == 0 {
						status = code
					}
					next(code)
				}
			},
			Write: func(next httpsnoop.WriteFunc) httpsnoop.WriteFunc {
				return func(b []byte) (int, error) {
					if status == 0 {
						status = http.StatusOK
					}
					return next(b)
				}
			},
		})
		next.ServeHTTP(ww, r.WithContext(ctx))
		if status == 0 {
			status = http.StatusOK
		}
		span.SetAttributes(attribute.Int("http.response.status_code", status))
		if status >= 500 {
			span.SetStatus(codes.Error, http.StatusText(status))
		}
	})
}

// StartRouted starts an internal span named "<prefix><METHOD>" that
// SetRoute renames once the route is known: the span of an api() dispatch
// into the in-process REST API ("api GET /api/v1/executions/:id").
func (t *Tracing) StartRouted(ctx context.Context, prefix, method string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ctx, trace.SpanFromContext(ctx) // no trace to join: record nothing
	}
	attrs = append(attrs, attribute.String("http.request.method", method))
	ctx, span := t.tracer.Start(ctx, prefix+method, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	return context.WithValue(ctx, routedKey{}, &routed{span: span, prefix: prefix}), span
}

// SetRoute names the request's span after its route template, once the
// router has matched it: "<METHOD> <route>". An empty route (no match)
// leaves the method alone, so that unknown paths never become names.
func SetRoute(ctx context.Context, method, route string) {
	rt, ok := ctx.Value(routedKey{}).(*routed)
	if !ok || route == "" {
		return
	}
	rt.span.SetName(rt.prefix + method + " " + route)
	rt.span.SetAttributes(attribute.String("http.route", route))
}
