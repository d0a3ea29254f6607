package api

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/clientip"
)

// Limiter enforces the rate limits of docs/reference/limits.md#rate-limits; core/ratelimit implements
// it (the same limiter the MCP endpoint uses, so both count together).
type Limiter interface {
	// AllowIP charges one unauthenticated or failed-auth request to ip.
	AllowIP(ctx context.Context, ip string) (ok bool, retryAfter time.Duration)
	// AllowOrg charges one request to the organisation.
	AllowOrg(ctx context.Context, orgID string) (ok bool, retryAfter time.Duration)
}

// Authenticator verifies a request's bearer token; *auth.Authenticator
// implements it.
type Authenticator interface {
	Authenticate(r *http.Request) (*auth.Principal, *auth.Challenge)
}

// LimitedAuth authenticates every request like auth.Authenticator's
// Middleware and applies the rate limits in the order the MCP endpoint does
// (docs/reference/mcp.md#order-of-checks, docs/reference/limits.md#rate-limits): a request whose authentication fails is charged to its
// IP — 429 once the IP is over its limit, else the challenge —, an
// authenticated one to its organisation — 429 over the plan's limit. A nil
// limiter only authenticates. Pass it to Middlewares in place of the
// authenticator's own middleware.
func LimitedAuth(authn Authenticator, limiter Limiter) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			p, ch := authn.Authenticate(req)
			if ch != nil {
				if ch.Status == http.StatusUnauthorized && limiter != nil {
					if ok, retry := limiter.AllowIP(req.Context(), clientip.FromRequest(req)); !ok {
						return errRateLimited(retry, "Too many requests without a valid access token came from your address.")
					}
				}
				return auth.WriteChallenge(c, ch)
			}
			if limiter != nil {
				if ok, retry := limiter.AllowOrg(req.Context(), p.OrgID); !ok {
					return errRateLimited(retry, "Your organisation sent more requests this minute than its plan allows.")
				}
			}
			c.SetRequest(req.WithContext(auth.WithPrincipal(req.Context(), p)))
			return next(c)
		}
	}
}

// errRateLimited is 429 rate_limited with Retry-After in whole seconds.
func errRateLimited(retry time.Duration, detail string) *Error {
	secs := max(1, int(math.Ceil(retry.Seconds())))
	e := problem(http.StatusTooManyRequests, "rate_limited", "Rate limit exceeded", detail,
		fmt.Sprintf("Wait %d seconds (Retry-After) before the next request; do not retry in a loop.", secs))
	e.Problems[0].Extra = map[string]any{"retry_after_seconds": secs}
	e.Header = http.Header{"Retry-After": {strconv.Itoa(secs)}}
	return e
}
