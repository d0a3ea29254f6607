package app

import (
	"context"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/kobana/kadu/core/config"
)

// requestDeadline ends a public request's context http.write_timeout after
// it reached the handler. The server's WriteTimeout already cuts the
// response off then, but does not stop the handler: with the deadline, the
// work stops too (its store calls fail, a bundle call inherits it), so no
// request runs longer than write_timeout, and an idempotency key it holds is
// released or completed within idempotencyLock.
func requestDeadline(d time.Duration) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		if d <= 0 { // no write timeout (a config built without Defaults)
			return next
		}
		return func(c echo.Context) error {
			ctx, cancel := context.WithTimeout(c.Request().Context(), d)
			defer cancel()
			c.SetRequest(c.Request().WithContext(ctx))
			return next(c)
		}
	}
}

// idempotencyMargin is what an idempotency record may take beyond its
// request's deadline: completing or releasing the record afterwards, and
// the clocks of replicas disagreeing a little.
const idempotencyMargin = 30 * time.Second

// idempotencyLock is how long an idempotency key stays in flight before
// another request may take it over (store.Options.IdempotencyLock): a key
// outliving every request that could hold it was left by a replica that
// died mid-request. Every request, REST or an in-process api() call of a
// bundle inside an MCP request, ends by http.write_timeout
// (requestDeadline).
func idempotencyLock(cfg *config.Config) time.Duration {
	if cfg.HTTP.WriteTimeout <= 0 {
		return 0 // the store's default
	}
	return cfg.HTTP.WriteTimeout + idempotencyMargin
}
