package devauth

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
)

// corsMaxAge is how long, in seconds, a browser may cache a preflight.
const corsMaxAge = "600"

// withCORS lets any origin read the response. Browser clients such as MCP
// Inspector (served from http://localhost:6274) fetch metadata, register and
// exchange codes from their page. No cookies are involved: credentials
// travel in the body or the Authorization header, which the page sets.
func withCORS(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("Access-Control-Allow-Origin", "*")
		h.Set("Access-Control-Expose-Headers", "WWW-Authenticate")
		return next(c)
	}
}

// preflight answers a CORS preflight for a route served with method.
func preflight(method string) echo.HandlerFunc {
	allow := method + ", OPTIONS"
	return func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("Access-Control-Allow-Origin", "*")
		h.Set("Access-Control-Allow-Methods", allow)
		h.Add("Vary", "Access-Control-Request-Headers")
		if req := c.Request().Header.Get("Access-Control-Request-Headers"); req != "" && validHeaderList(req) {
			h.Set("Access-Control-Allow-Headers", req)
		}
		h.Set("Access-Control-Max-Age", corsMaxAge)
		return c.NoContent(http.StatusNoContent)
	}
}

// validHeaderList reports whether s is a comma-separated list of header
// names, safe to reflect.
func validHeaderList(s string) bool {
	if len(s) > 1024 {
		return false
	}
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			return false
		}
		for _, r := range name {
			ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
				strings.ContainsRune("!#$%&'*+-.^_`|~", r)
			if !ok {
				return false
			}
		}
	}
	return true
}
