package app

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/kobana/kadu/core/api"
	"github.com/kobana/kadu/core/confirm/page"
	"github.com/kobana/kadu/core/mcp"
	"github.com/kobana/kadu/core/origin"
)

// The edge is what every request to the public listener passes first, before
// routing: the Host and Origin guard (core/origin), then the drain
// answer while the server shuts down. Both cover every route — MCP
// endpoint, REST API, embedded authorization server, approval page, blob
// URLs, metadata documents, unknown paths — and each refusal is written in
// the wire format of the route it was meant for.

// retryAfterDraining is the Retry-After, in seconds, of a draining answer:
// the load balancer sends the retry to another replica.
const retryAfterDraining = 1

// edge is the echo Pre middleware of the public listener.
type edge struct {
	origins  *origin.Policy
	mcpPath  string
	engine   *mcp.Engine // rung 2's answer for the MCP endpoint
	page     *page.Page  // the approval page's answer
	draining func() bool
	log      *slog.Logger
}

func (g *edge) middleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if err := g.origins.Allow(r); err != nil {
			// Warn: a refusal is an attack or a client that reaches the
			// server under a name public_url does not give.
			g.log.Warn("request refused: Host or Origin not allowed (DNS rebinding or cross-site request guard)",
				slog.String("method", r.Method), slog.String("path", clip(r.URL.Path)), slog.Any("reason", err))
			return g.refuse(c, err)
		}
		if g.draining() {
			return g.unavailable(c)
		}
		return next(c)
	}
}

// kind is which wire format a path answers in.
type kind int

const (
	kindOther kind = iota // OAuth endpoints, metadata, blobs, unknown paths: an OAuth-style JSON error
	kindMCP
	kindAPI
	kindPage
)

func (g *edge) kindOf(path string) kind {
	switch {
	case path == g.mcpPath:
		return kindMCP
	case path == api.BasePath || strings.HasPrefix(path, api.BasePath+"/"):
		return kindAPI
	case strings.HasPrefix(path, page.PathPrefix) && g.page != nil:
		return kindPage
	}
	return kindOther
}

// refuse answers 403 to a request the guard refused.
func (g *edge) refuse(c echo.Context, why error) error {
	w, r := c.Response(), c.Request()
	switch g.kindOf(r.URL.Path) {
	case kindMCP:
		g.engine.Refuse(w, r)
		return nil
	case kindPage:
		return g.page.Refuse(c)
	case kindAPI:
		hint := "Call the API from a non-browser client or from a page on an allowed origin (loopback, or public_url)."
		if errors.Is(why, origin.ErrHost) {
			hint = "Use the host name of public_url, or localhost / 127.0.0.1 / [::1] on a loopback server."
		}
		return renderAPIError(c, &api.Error{Status: http.StatusForbidden, Problems: []api.Problem{{
			Code:   "forbidden_origin",
			Title:  "Forbidden",
			Detail: "The request's Host or Origin is not allowed on this server (DNS rebinding and cross-site request guard).",
			Hint:   hint,
		}}}, g.log)
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusForbidden, map[string]string{
		"error":             "access_denied",
		"error_description": "Host or Origin not allowed: use localhost, 127.0.0.1, [::1] or the public_url host, from a non-browser client or a page on one of them",
	})
}

// unavailable answers 503 with Retry-After while the server drains.
func (g *edge) unavailable(c echo.Context) error {
	w, r := c.Response(), c.Request()
	h := w.Header()
	h.Set("Retry-After", strconv.Itoa(retryAfterDraining))
	h.Set("Cache-Control", "no-store")
	switch g.kindOf(r.URL.Path) {
	case kindMCP:
		h.Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = fmt.Fprintf(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-31503,"message":"Service unavailable","data":{"retry_after_seconds":%d,"reason":"draining"}}}`+"\n", retryAfterDraining)
		return nil
	case kindAPI:
		return renderAPIError(c, &api.Error{
			Status: http.StatusServiceUnavailable,
			Problems: []api.Problem{{
				Code:   "unavailable",
				Title:  "Service unavailable",
				Detail: "This server is shutting down.",
				Hint:   "Send the same request again after Retry-After seconds; another replica will answer it.",
				Extra:  map[string]any{"retry_after_seconds": retryAfterDraining, "reason": "draining"},
			}},
			RetryAfter: retryAfterDraining,
		}, g.log)
	}
	return c.JSON(http.StatusServiceUnavailable, map[string]string{
		"error":             "temporarily_unavailable",
		"error_description": "the server is shutting down; retry after Retry-After seconds",
	})
}

// renderAPIError answers with e through the REST API's own middlewares, so
// the body, request_id and access log line are those of /api/v1.
func renderAPIError(c echo.Context, e *api.Error, log *slog.Logger) error {
	fail := func(echo.Context) error { return e }
	return api.RequestID()(api.AccessLog(log)(api.Errors(log)(fail)))(c)
}

// clip bounds what a log line repeats from a request.
func clip(s string) string {
	const max = 200
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
}
