package app

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/kobana/kadu/core/api"
	"github.com/kobana/kadu/core/auth"
)

// apiDispatcher serves /api/v1 in-process to bundles (docs/reference/bundles.md#api-calls): the same
// handlers and middleware as the REST listener, except that the caller is
// the principal the MCP request already proved — no token exists here to
// forward — and the request was already charged to the organisation's rate
// limit by the MCP endpoint.
type apiDispatcher struct {
	h *echo.Echo
}

func newAPIDispatcher(rest *api.API) *apiDispatcher {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	rest.Register(e.Group(api.BasePath, rest.Middlewares(principalFromContext)...))
	e.HTTPErrorHandler = func(err error, c echo.Context) {
		if c.Response().Committed {
			return
		}
		code := http.StatusInternalServerError
		if he, ok := err.(*echo.HTTPError); ok {
			code = he.Code
		}
		_ = c.JSON(code, map[string]any{"status": code, "errors": []map[string]any{{
			"code": "not_found", "title": http.StatusText(code), "detail": "No such API route.", "param": nil,
			"hint": "Use one of the routes of the Kadu API (/api/v1/…).",
		}}})
	}
	return &apiDispatcher{h: e}
}

// principalFromContext stands where the bearer-token middleware stands on
// the REST listener.
func principalFromContext(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if _, ok := auth.PrincipalFrom(c.Request().Context()); !ok {
			return echo.NewHTTPError(http.StatusUnauthorized)
		}
		return next(c)
	}
}

// Dispatch performs one API request as p and returns the status and body.
// path is absolute ("/api/v1/…", query included).
func (d *apiDispatcher) Dispatch(ctx context.Context, p *auth.Principal, method, path string, body []byte) (int, []byte) {
	if !strings.HasPrefix(path, api.BasePath+"/") {
		return http.StatusNotFound, dispatchError(http.StatusNotFound, "not_found", "Only "+api.BasePath+" routes can be called.")
	}
	req, err := http.NewRequestWithContext(auth.WithPrincipal(ctx, p), method, path, bytes.NewReader(body))
	if err != nil {
		return http.StatusBadRequest, dispatchError(http.StatusBadRequest, "bad_request", "The method or path is not valid: "+err.Error())
	}
	if len(body) > 0 {
		req.Header.Set("Content-Type", "application/json")
	}
	req.RemoteAddr = "in-process"
	w := &responseBuffer{header: http.Header{}}
	d.h.ServeHTTP(w, req)
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.status, w.body
}

func dispatchError(status int, code, detail string) []byte {
	b, _ := json.Marshal(map[string]any{"status": status, "errors": []map[string]any{{
		"code": code, "title": http.StatusText(status), "detail": detail, "param": nil, "hint": "",
	}}})
	return b
}

// responseBuffer is an http.ResponseWriter that keeps the response.
// The API writes its body in one Write (api.encode renders it first), so
// a plain slice sized by that write is all the buffering needed.
type responseBuffer struct {
	header http.Header
	status int
	body   []byte
}

func (w *responseBuffer) Header() http.Header { return w.header }

func (w *responseBuffer) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *responseBuffer) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	w.body = append(w.body, b...)
	return len(b), nil
}
