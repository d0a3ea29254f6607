package tracing

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/kobana/kadu/core/store"
)

// StoreObserver returns the store.Observer that records each statement as a
// client span named by its operation ("select executions", "transaction"),
// with db.system.name (system: "sqlite" or "postgresql"). Only statements
// run inside a trace are recorded: the queue's polling and the sweeps,
// which run outside any request, would otherwise start a trace each. Nil
// when tracing is off, so that the store pays nothing.
func (t *Tracing) StoreObserver(system string) store.Observer {
	if !t.Enabled() {
		return nil
	}
	return storeObserver{tracer: t.tracer, system: system}
}

type storeObserver struct {
	tracer trace.Tracer
	system string
}

func noDone(error) {}

func (o storeObserver) Start(ctx context.Context, op string) (context.Context, func(error)) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ctx, noDone
	}
	verb, table, _ := strings.Cut(op, " ")
	attrs := []attribute.KeyValue{
		attribute.String("db.system.name", o.system),
		attribute.String("db.operation.name", verb),
	}
	if table != "" {
		attrs = append(attrs, attribute.String("db.collection.name", table))
	}
	ctx, span := o.tracer.Start(ctx, op, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	return ctx, func(err error) {
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			// Not the error's text: a driver's message may quote values.
			span.SetStatus(codes.Error, "statement failed")
		}
		span.End()
	}
}
