package plugin

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// callTrace is the span of one bundle call, "bundle <op>" (docs/tracing.md),
// and the timings it reports: the wait for an instance, the time inside the
// guest and the time the guest spent waiting on the host's api() dispatches
// (each of which has its own span below this one).
type callTrace struct {
	span    trace.Span
	acquire time.Duration
	call    time.Duration
}

// startCall starts the span of a call. Without a TracerProvider it does
// nothing, not even build the attributes: a call's own cost is a few
// microseconds, and these allocations were a tenth of them.
func (r *Registry) startCall(ctx context.Context, v *version, req *request) (context.Context, callTrace) {
	if _, off := r.tracer.(noop.Tracer); off {
		return ctx, callTrace{}
	}
	attrs := []attribute.KeyValue{
		attribute.String("kadu.bundle.name", v.cfg.Name),
		attribute.String("kadu.bundle.id", v.id),
		attribute.String("kadu.bundle.op", req.op),
	}
	if req.op == opToolsCall || req.op == opPromptsGet {
		// A name the registry served, never a resource URI (which holds ids).
		attrs = append(attrs, attribute.String("kadu.bundle.target", req.target))
	}
	ctx, span := r.tracer.Start(ctx, "bundle "+req.op, trace.WithAttributes(attrs...))
	return ctx, callTrace{span: span}
}

// end records the timings and the outcome, and ends the span.
func (c *callTrace) end(inv *invocation, err error) {
	if c.span == nil {
		return
	}
	if c.span.IsRecording() {
		attrs := []attribute.KeyValue{attribute.Float64("kadu.bundle.acquire_ms", ms(c.acquire))}
		if inv != nil {
			host := inv.hostTime
			attrs = append(attrs,
				attribute.Float64("kadu.bundle.guest_ms", ms(max(c.call-host, 0))),
				attribute.Float64("kadu.bundle.host_ms", ms(host)),
				attribute.Int("kadu.bundle.api_calls", inv.apiCalls))
		}
		var fe *FaultError
		switch {
		case errors.As(err, &fe):
			attrs = append(attrs, attribute.String("kadu.bundle.fault", string(fe.Kind)))
			c.span.SetStatus(codes.Error, "bundle fault")
		case err != nil && !isAnswer(err):
			c.span.SetStatus(codes.Error, "bundle call failed")
		}
		c.span.SetAttributes(attrs...)
	}
	c.span.End()
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func tracerOf(tp trace.TracerProvider) trace.Tracer {
	if tp == nil {
		tp = noop.NewTracerProvider()
	}
	return tp.Tracer("github.com/kobana/kadu/core/plugin")
}
