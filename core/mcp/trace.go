package mcp

import (
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// traceMethod runs the method handler h under a span "mcp <method>"
// (docs/tracing.md): the method comes from the method table, so names stay
// a bounded set; the tool name is an attribute, set by callTool once the
// registry knows the tool. Errors answered to the client mark the span.
func (e *Engine) traceMethod(x *exchange, h handler) (decorable, *Error) {
	ctx, span := e.tracer.Start(x.r.Context(), "mcp "+x.msg.method, trace.WithAttributes(
		attribute.String("mcp.method.name", x.msg.method),
		attribute.String("mcp.protocol.version", x.client.ProtocolVersion),
	))
	defer span.End()
	x.r = x.r.WithContext(ctx)
	result, err := h(e, x)
	if x.tool != "" && x.toolKnown {
		span.SetAttributes(attribute.String("gen_ai.tool.name", x.tool))
	}
	switch {
	case err == errAnswered:
		span.SetAttributes(attribute.String("kadu.mcp.outcome", "answered"))
	case err != nil:
		span.SetAttributes(attribute.Int64("rpc.jsonrpc.error_code", err.Code))
		span.SetStatus(codes.Error, "json-rpc error")
	default:
		if r, ok := result.(*callToolResult); ok && r.IsError {
			span.SetAttributes(attribute.Bool("kadu.mcp.tool_error", true))
		}
	}
	return result, err
}

// tracerOf returns opts' tracer, or a no-op one.
func tracerOf(tp trace.TracerProvider) trace.Tracer {
	if tp == nil {
		tp = noop.NewTracerProvider()
	}
	return tp.Tracer("github.com/kobana/kadu/core/mcp")
}
