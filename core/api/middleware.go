package api

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"

	"github.com/labstack/echo/v4"
)

// MaxBodyBytes is the request body limit of SPEC §7.3 (1 MiB), the same as
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
