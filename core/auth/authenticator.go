package auth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"
)

// TokenVerifier turns a raw bearer token into a Principal. *Verifier
// implements it; tests and the embedded dev server may supply others.
// Errors should wrap ErrInvalidToken or ErrKeysUnavailable; any other error
// is treated as ErrInvalidToken.
type TokenVerifier interface {
	Verify(ctx context.Context, raw string) (*Principal, error)
}

// Authenticator applies docs/reference/auth.md to HTTP requests: it extracts the bearer
// token, verifies it, and answers failures with the exact challenges.
//
// An Authenticator is immutable and safe for concurrent use; build one per
// resource at start-up with NewAuthenticator. It never logs or keeps a
// token: reasons are logged, at Debug for a missing token (every client's
// first request) and at Info for a rejected one.
type Authenticator struct {
	// fixed at creation
	verifier    TokenVerifier
	metadataURL string            // of the canonical resource
	byHost      map[string]string // lower-case host[:port] of an alias → its metadata URL
	logger      *slog.Logger
}

// NewAuthenticator returns an Authenticator for the MCP endpoint whose
// public URL is resource (absolute, as validated by NewVerifier; a trailing
// slash is ignored). aliases are other URLs of the same endpoint (the
// embedded development setup answers on localhost, 127.0.0.1 and [::1]): a
// request whose Host is an alias's gets challenges naming that alias's
// metadata, because clients check that the metadata's resource is the URL
// they were given. A nil logger discards.
func NewAuthenticator(v TokenVerifier, resource string, logger *slog.Logger, aliases ...string) *Authenticator {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	a := &Authenticator{verifier: v, metadataURL: metadataURL(resource), byHost: map[string]string{}, logger: logger}
	for _, alias := range aliases {
		if u, err := url.Parse(alias); err == nil {
			a.byHost[strings.ToLower(u.Host)] = metadataURL(alias)
		}
	}
	return a
}

func metadataURL(resource string) string {
	origin, path := metadataLocation(resource)
	return origin + metadataPrefix + path
}

// MetadataURL is the Protected Resource Metadata URL named in challenges
// to r: "<origin>/.well-known/oauth-protected-resource<path of resource>",
// for the alias r's Host names, else for the canonical resource.
func (a *Authenticator) MetadataURL(r *http.Request) string {
	if r != nil {
		if u, ok := a.byHost[strings.ToLower(r.Host)]; ok {
			return u
		}
	}
	return a.metadataURL
}

// Authenticate returns the request's Principal, or the Challenge to answer
// with (401 no token / invalid token, 503 keys unavailable). Exactly one of
// the results is nil. The token is dropped before it returns.
func (a *Authenticator) Authenticate(r *http.Request) (*Principal, *Challenge) {
	raw, err := bearerToken(r.Header)
	if err != nil {
		a.logger.DebugContext(r.Context(), "auth: request without a usable bearer token",
			"path", r.URL.Path, "reason", err)
		return nil, noTokenChallenge(a.MetadataURL(r), err)
	}
	p, err := a.verifier.Verify(r.Context(), raw)
	switch {
	case err == nil && p == nil:
		err = fmt.Errorf("%w: the verifier returned no principal", ErrInvalidToken)
	case err == nil:
		return p, nil
	case errors.Is(err, ErrKeysUnavailable):
		a.logger.WarnContext(r.Context(), "auth: cannot verify tokens, issuer keys unavailable",
			"path", r.URL.Path, "reason", err)
		return nil, unavailableChallenge(err)
	case !errors.Is(err, ErrInvalidToken):
		err = fmt.Errorf("%w: %w", ErrInvalidToken, err)
	}
	a.logger.InfoContext(r.Context(), "auth: token rejected", "path", r.URL.Path, "reason", err)
	return nil, invalidTokenChallenge(a.MetadataURL(r), err)
}

// InsufficientScope returns the 403 step-up challenge for a principal that
// lacks required (one scope, or several space-separated). Its scope
// parameter is the principal's granted scopes ∪ required, closed under the
// lattice, sorted; unknown granted scopes (offline_access, …) are kept so
// the client does not lose them by stepping up. r selects the metadata URL
// (see MetadataURL) and may be nil.
func (a *Authenticator) InsufficientScope(r *http.Request, p *Principal, required string) *Challenge {
	var granted []string
	if p != nil {
		granted = p.Scopes
	}
	return stepUpChallenge(a.MetadataURL(r), granted, required)
}

// Middleware authenticates every request of the group it guards (/api/v1).
// On success the Principal is in the request context (PrincipalFrom). On
// failure it sets the challenge headers and answers with the API error body:
//
//	{"status":401,"errors":[{"code":"unauthorized","title":"Unauthorized","detail":"…","param":null,"hint":"…"}],"request_id":"…"}
//
// (503: code "unavailable", with Retry-After). request_id is the response's
// X-Request-Id header when a request-id middleware ran before, else "".
// Mount it after the CORS middleware, which answers preflights unauthenticated.
func (a *Authenticator) Middleware() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			p, ch := a.Authenticate(req)
			if ch != nil {
				return WriteChallenge(c, ch)
			}
			c.SetRequest(req.WithContext(WithPrincipal(req.Context(), p)))
			return next(c)
		}
	}
}

// WriteChallenge answers c with ch the way Middleware does: the challenge
// headers and the API error body. For callers that authenticate themselves
// (the API's rate-limited authentication) and must answer alike.
func WriteChallenge(c echo.Context, ch *Challenge) error {
	ch.SetHeaders(c.Response().Header())
	return c.JSON(ch.Status, problemBody(ch, c.Response().Header().Get(echo.HeaderXRequestID)))
}

// apiError mirrors core/api's error body (docs/reference/rest.md#conventions). auth cannot import
// core/api (dependencies point down), so the shape is repeated here.
type apiError struct {
	Status    int          `json:"status"`
	Errors    []apiProblem `json:"errors"`
	RequestID string       `json:"request_id"`
}

type apiProblem struct {
	Code   string  `json:"code"`
	Title  string  `json:"title"`
	Detail string  `json:"detail"`
	Param  *string `json:"param"`
	Hint   string  `json:"hint"`
}

func problemBody(ch *Challenge, requestID string) apiError {
	p := apiProblem{
		Code:   "unauthorized",
		Title:  "Unauthorized",
		Detail: "The request has no bearer access token.",
		Hint:   "Send an access token issued for this server as Authorization: Bearer followed by the token; the resource_metadata URL in WWW-Authenticate says where to sign in.",
	}
	switch {
	case ch.Status == http.StatusServiceUnavailable:
		p.Code, p.Title = "unavailable", "Service Unavailable"
		p.Detail = "The access token cannot be checked right now."
		p.Hint = "Retry after the number of seconds in Retry-After."
	case ch.Status == http.StatusForbidden:
		p.Code, p.Title = "insufficient_scope", "Forbidden"
		p.Detail = "The access token lacks a scope this operation requires."
		p.Hint = "Ask the authorization server for the scopes listed in WWW-Authenticate, then retry."
	case errors.Is(ch.Reason, ErrInvalidToken):
		p.Detail = "The access token is invalid or expired."
		p.Hint = "Get a new access token from the authorization server (refresh or sign in again), then retry."
		if d, ok := errors.AsType[*describedError](ch.Reason); ok {
			p.Detail, p.Hint = "The access token was refused: "+d.desc+".", d.hint
		}
	case errors.Is(ch.Reason, ErrMalformedAuthorization):
		p.Detail = "The Authorization header is not a single Bearer token."
	}
	return apiError{Status: ch.Status, Errors: []apiProblem{p}, RequestID: requestID}
}
