package api

import (
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/kobana/kadu/core/auth"
)

// MaxBodyBytes is the request body limit of docs/reference/rest.md#conventions (1 MiB), the same as
// the MCP endpoint's.
const MaxBodyBytes = 1 << 20

const requestIDKey = "kadu.request_id"

// RequestID gives every request an id ("req_…"), echoed in the
// X-Request-Id response header and in every error body, so a person can
// quote it and an operator can find the log lines.
func RequestID() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			id := newRequestID()
			c.Set(requestIDKey, id)
			c.Response().Header().Set(echo.HeaderXRequestID, id)
			return next(c)
		}
	}
}

func requestID(c echo.Context) string {
	if id, ok := c.Get(requestIDKey).(string); ok {
		return id
	}
	return c.Response().Header().Get(echo.HeaderXRequestID)
}

func newRequestID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "req_" + hex.EncodeToString(b[:])
}

// BodyLimit refuses bodies over MaxBodyBytes with 413 payload_too_large,
// whether declared by Content-Length or found while reading (chunked).
func BodyLimit() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := c.Request()
			if r.ContentLength > MaxBodyBytes {
				return echo.NewHTTPError(http.StatusRequestEntityTooLarge)
			}
			r.Body = http.MaxBytesReader(c.Response(), r.Body, MaxBodyBytes)
			return next(c)
		}
	}
}

// AccessLog writes one line per request: request id, method, route, status,
// duration and, once authenticated, the organisation. Never a header, a
// body or a query string (they can carry secrets and customer data).
func AccessLog(log *slog.Logger) echo.MiddlewareFunc {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			start := time.Now()
			err := next(c)
			if !log.Enabled(c.Request().Context(), slog.LevelInfo) {
				return err // the line would be dropped: skip building it
			}
			attrs := []slog.Attr{
				slog.String("request_id", requestID(c)),
				slog.String("method", c.Request().Method),
				slog.String("route", c.Path()),
				slog.Int("status", c.Response().Status),
				slog.Duration("duration", time.Since(start)),
			}
			if p, ok := auth.PrincipalFrom(c.Request().Context()); ok {
				attrs = append(attrs, slog.String("org_id", p.OrgID))
			}
			log.LogAttrs(c.Request().Context(), slog.LevelInfo, "api request", attrs...)
			return err
		}
	}
}
