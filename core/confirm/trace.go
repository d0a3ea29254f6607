package confirm

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/kobana/kadu/core/mcp"
)

// startStep starts the span of the confirmation step of a destructive call,
// "confirm <mode>" (docs/tracing.md): "confirm ask" asks in the chat,
// "confirm answer" takes the answer (and, accepted, runs the call under
// it), "confirm approval" hands out an approval link.
func (c *Confirmer) startStep(ctx context.Context, call *mcp.ToolCall) (context.Context, trace.Span) {
	mode := "approval"
	switch {
	case call.RequestState != "":
		mode = "answer"
	case canAsk(&call.Client):
		mode = "ask"
	}
	return c.tracer.Start(ctx, "confirm "+mode, trace.WithAttributes(
		attribute.String("kadu.confirm.mode", mode),
		attribute.String("gen_ai.tool.name", call.Tool.Name),
	))
}

func tracerOf(tp trace.TracerProvider) trace.Tracer {
	if tp == nil {
		tp = noop.NewTracerProvider()
	}
	return tp.Tracer("github.com/kobana/kadu/core/confirm")
}
