package app

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"

	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/config"
	"github.com/kobana/kadu/core/plugin"
	"github.com/kobana/kadu/core/tracing"
)

// newTracing builds the process's tracing from the tracing section and the
// OTEL_* environment (docs/tracing.md); off, it is the no-op provider.
func newTracing(ctx context.Context, cfg *config.Config, version string, opts tracing.Options) (*tracing.Tracing, error) {
	return tracing.New(ctx, tracing.Config{
		Endpoint:         cfg.Tracing.Endpoint,
		SampleRatio:      cfg.Tracing.SampleRatio,
		TrustTraceparent: cfg.Tracing.TrustTraceparent,
		ServiceName:      cfg.Tracing.ServiceName,
		ServiceVersion:   version,
	}, opts)
}

// dbSystem is the db.system.name of the configured store.
func dbSystem(driver string) string {
	if driver == config.DriverPostgres {
		return "postgresql"
	}
	return "sqlite"
}

// routeSpan names the request's span (the server span on the public
// listener, the api() span on the in-process dispatcher) after the route
// template Echo matched: "GET /api/v1/executions/:id", never the path.
func routeSpan(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		tracing.SetRoute(c.Request().Context(), c.Request().Method, c.Path())
		return next(c)
	}
}

// tracedDispatcher records each api() dispatch of a bundle into the
// in-process REST API as a span "api <METHOD> <route>", a child of the
// bundle call's span.
type tracedDispatcher struct {
	next *apiDispatcher
	tr   *tracing.Tracing
}

// traceDispatch wraps d when tracing is on.
func traceDispatch(d *apiDispatcher, tr *tracing.Tracing) plugin.Dispatcher {
	if !tr.Enabled() {
		return d
	}
	d.h.Use(routeSpan)
	return tracedDispatcher{next: d, tr: tr}
}

func (t tracedDispatcher) Dispatch(ctx context.Context, p *auth.Principal, method, path string, body []byte) (int, []byte) {
	ctx, span := t.tr.StartRouted(ctx, "api ", method)
	defer span.End()
	status, resp := t.next.Dispatch(ctx, p, method, path, body)
	if span.IsRecording() {
		span.SetAttributes(attribute.Int("http.response.status_code", status))
		if status >= http.StatusInternalServerError {
			span.SetStatus(codes.Error, http.StatusText(status))
		}
	}
	return status, resp
}
