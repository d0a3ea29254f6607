package api

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/kobana/kadu/core/store"
)

// Problem is one entry of an API error body (docs/reference/rest.md#conventions).
type Problem struct {
	Code   string  `json:"code"`
	Title  string  `json:"title"`
	Detail string  `json:"detail"`
	Param  *string `json:"param"`
	Hint   string  `json:"hint"`
	// Extra members some codes carry, e.g. cap_cents on cost_cap_exceeded.
	Extra map[string]any `json:"-"`
}

// Error is an API error: an HTTP status and one or more problems. Handlers
// return it; ErrorHandler renders it. Two Errors match under errors.Is when
// status and first code are equal.
type Error struct {
	Status     int
	Problems   []Problem
	RetryAfter int         // seconds, for 429 and 503
	Header     http.Header // extra response headers, e.g. WWW-Authenticate on insufficient_scope
}

func (e *Error) Error() string {
	if len(e.Problems) == 0 {
		return fmt.Sprintf("api: %d", e.Status)
	}
	return fmt.Sprintf("api: %d %s: %s", e.Status, e.Problems[0].Code, e.Problems[0].Detail)
}

// Is reports whether target is an *Error with the same status and code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	if !ok || t.Status != e.Status {
		return false
	}
	return len(t.Problems) == 0 || (len(e.Problems) > 0 && t.Problems[0].Code == e.Problems[0].Code)
}

// problem builds a single-problem Error.
func problem(status int, code, title, detail, hint string) *Error {
	return &Error{Status: status, Problems: []Problem{{Code: code, Title: title, Detail: detail, Hint: hint}}}
}

// paramProblem builds a single-problem Error about one parameter.
func paramProblem(status int, code, param, detail, hint string) *Error {
	e := problem(status, code, http.StatusText(status), detail, hint)
	e.Problems[0].Param = &param
	return e
}

// Errors handlers return often.
func errNotFound(what string) *Error {
	return problem(http.StatusNotFound, "not_found", "Not found",
		what+" was not found in your organisation.",
		"Check the id; list the resources to find valid ids.")
}

func errInvalidState(detail, hint string) *Error {
	return problem(http.StatusConflict, "invalid_state", "Invalid state", detail, hint)
}

func errBadRequest(detail string) *Error {
	return problem(http.StatusBadRequest, "bad_request", "Bad request", detail, "Fix the request and send it again.")
}

// validation collects 422 validation_error problems, one per param.
type validation struct{ problems []Problem }

func (v *validation) add(param, detail, hint string) {
	p := param
	v.problems = append(v.problems, Problem{Code: "validation_error", Title: "Invalid parameter", Detail: detail, Param: &p, Hint: hint})
}

func (v *validation) err() error {
	if len(v.problems) == 0 {
		return nil
	}
	return &Error{Status: http.StatusUnprocessableEntity, Problems: v.problems}
}

// errorBody is the wire form of an Error.
type errorBody struct {
	Status    int              `json:"status"`
	Errors    []map[string]any `json:"errors"`
	RequestID string           `json:"request_id"`
}

func (e *Error) body(requestID string) errorBody {
	out := errorBody{Status: e.Status, RequestID: requestID, Errors: make([]map[string]any, 0, len(e.Problems))}
	for _, p := range e.Problems {
		m := map[string]any{"code": p.Code, "title": p.Title, "detail": p.Detail, "param": p.Param, "hint": p.Hint}
		for k, v := range p.Extra {
			m[k] = v
		}
		out.Errors = append(out.Errors, m)
	}
	return out
}

// ErrorHandler renders every error a /api/v1 handler returns: *Error as it
// is, Echo's own errors (404 route, 405, 413 body limit) in the same shape,
// anything else as a logged 500 whose details stay in the logs.
func ErrorHandler(log *slog.Logger) echo.HTTPErrorHandler {
	return func(err error, c echo.Context) {
		if c.Response().Committed {
			return
		}
		var ae *Error
		var he *echo.HTTPError
		switch {
		case errors.As(err, &ae):
		case errors.As(err, &he):
			ae = fromEcho(he)
		case store.Unavailable(err):
			// Not a bug: the disk is full or the database unreachable. The
			// log line is throttled (store.ThrottleHandler) by its kind.
			log.WarnContext(c.Request().Context(), "api: storage unavailable",
				slog.String("request_id", requestID(c)), slog.String("path", c.Path()),
				slog.String("kind", store.Classify(err)), slog.Any("error", err))
			ae = errStorageUnavailable()
		default:
			log.ErrorContext(c.Request().Context(), "api: internal error",
				slog.String("request_id", requestID(c)), slog.String("path", c.Path()), slog.Any("error", err))
			ae = problem(http.StatusInternalServerError, "internal_error", "Internal error",
				"Something went wrong on our side.", "Retry later; if it persists, report the request_id.")
		}
		ae.setHeaders(c.Response().Header())
		if c.Request().Method == http.MethodHead {
			_ = c.NoContent(ae.Status)
			return
		}
		_ = c.JSON(ae.Status, ae.body(requestID(c)))
	}
}

// storageRetryAfter is the Retry-After of a 503 for unavailable storage: a
// full disk or a database restart is not fixed in a second, and clients
// retrying every second would only add load.
const storageRetryAfter = 30

// errStorageUnavailable answers a request whose write (or read) the storage
// could not take: 503 unavailable with Retry-After and the
// reason "store_unavailable", the word the MCP endpoint uses too.
// The idempotency key, if any, is released as for every 5xx, so the same
// request with the same key may be sent again after Retry-After.
func errStorageUnavailable() *Error {
	e := problem(http.StatusServiceUnavailable, "unavailable", "Service unavailable",
		"Kadu's storage could not take this request right now (for example, its disk is full).",
		"Retry the same request, with the same idempotency_key, after Retry-After seconds; if it keeps failing, tell the operator of this Kadu server.")
	e.RetryAfter = storageRetryAfter
	e.Problems[0].Extra = map[string]any{"reason": "store_unavailable"}
	return e
}

// setHeaders writes the headers every error response carries.
func (e *Error) setHeaders(h http.Header) {
	for k, vs := range e.Header {
		h[k] = append([]string(nil), vs...)
	}
	h.Set("Cache-Control", "no-store")
	if e.RetryAfter > 0 {
		h.Set("Retry-After", fmt.Sprint(e.RetryAfter))
	}
}

func fromEcho(he *echo.HTTPError) *Error {
	switch he.Code {
	case http.StatusNotFound:
		return problem(http.StatusNotFound, "not_found", "Not found", "No such route.", "See the API reference for the routes.")
	case http.StatusMethodNotAllowed:
		return problem(http.StatusMethodNotAllowed, "method_not_allowed", "Method not allowed", "This route does not accept that method.", "See the API reference for the routes.")
	case http.StatusRequestEntityTooLarge:
		return problem(http.StatusRequestEntityTooLarge, "payload_too_large", "Payload too large", "The body is over 1 MiB.", "Files travel through presigned URLs, never in a request body.")
	case http.StatusUnsupportedMediaType:
		return problem(http.StatusUnsupportedMediaType, "unsupported_media_type", "Unsupported media type", "Send the body as application/json.", "Set Content-Type: application/json.")
	}
	msg := http.StatusText(he.Code)
	return problem(he.Code, "bad_request", msg, fmt.Sprint(he.Message), "Fix the request and send it again.")
}
