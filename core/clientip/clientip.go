package clientip

import (
	"context"
	"net"
	"net/http"

	"github.com/labstack/echo/v4"
)

// Resolver applies the rule of the package doc to requests. The zero
// value is not usable; build one with New.
type Resolver struct {
	extract echo.IPExtractor
}

// New builds the resolver of trusted, the parsed entries of
// http.trusted_proxies. With none, X-Forwarded-For is never believed.
//
// Only the listed networks are trusted: echo's defaults, which trust every
// loopback, link-local and private address, are turned off, since a
// client on the same private network as Kadu is not a proxy.
func New(trusted []*net.IPNet) *Resolver {
	if len(trusted) == 0 {
		return &Resolver{extract: echo.ExtractIPDirect()}
	}
	opts := []echo.TrustOption{echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
	for _, n := range trusted {
		opts = append(opts, echo.TrustIPRange(n))
	}
	return &Resolver{extract: echo.ExtractIPFromXFFHeader(opts...)}
}

// IP is the client address of r by the rule of the package doc. It has
// the type of echo.IPExtractor, for echo.Echo.IPExtractor.
func (res *Resolver) IP(r *http.Request) string {
	return res.extract(r)
}

type ctxKey struct{}

// Middleware records the client address of every request in its context,
// where FromRequest finds it.
func (res *Resolver) Middleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		c.SetRequest(r.WithContext(context.WithValue(r.Context(), ctxKey{}, res.IP(r))))
		return next(c)
	}
}

// FromRequest is the client address Middleware recorded for r, or, for a
// request that did not pass through it (in-process calls, tests), the
// host of its direct peer. Every reader of a client address goes through
// it, so that one rule decides.
func FromRequest(r *http.Request) string {
	if ip, ok := r.Context().Value(ctxKey{}).(string); ok && ip != "" {
		return ip
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
