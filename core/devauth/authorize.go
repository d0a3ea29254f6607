package devauth

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/kobana/kadu/core/auth"
)

// Bounds on authorization request parameters.
const (
	maxStateLen     = 2048
	maxChallengeLen = 128
	minChallengeLen = 43
)

// authzRequest is a validated authorization request, carried sealed in the
// consent form between GET and POST.
type authzRequest struct {
	ClientID      string   `json:"c"`
	RedirectURI   string   `json:"r"`  // where the response goes
	RedirectGiven bool     `json:"rg"` // the request named it, so the token request must repeat it
	State         string   `json:"s,omitempty"`
	Challenge     string   `json:"pc"` // PKCE S256 code_challenge
	Resource      string   `json:"a"`  // the audience of the tokens
	Scopes        []string `json:"sc"`
}

// identity is who the approver chose to be.
type identity struct {
	Subject string
	OrgID   string
	Role    auth.Role
}

// handleAuthorize serves GET /oauth/authorize: it validates the request,
// then shows the consent page (or, with AutoApprove, redirects with a code
// for the default identity).
func (s *Server) handleAuthorize(c echo.Context) error {
	ar, cl, pageErr, redirErr := s.parseAuthorize(c.Request().URL.Query())
	if pageErr != nil {
		s.log.Info("devauth: authorization request refused", "error", pageErr.Code, "reason", pageErr.Description)
		return s.renderError(c, http.StatusBadRequest, pageErr)
	}
	if redirErr != nil {
		s.log.Info("devauth: authorization request refused", "error", redirErr.Code, "reason", redirErr.Description)
		return s.redirectError(c, http.StatusFound, ar, redirErr)
	}
	if s.opts.AutoApprove {
		who := identity{Subject: s.opts.DefaultSubject, OrgID: s.opts.DefaultOrg, Role: s.opts.DefaultRole}
		return s.approve(c, http.StatusFound, ar, cl, who)
	}
	if promptNone(c.Request().URL.Query()) {
		// OIDC Core §3.1.2.1: prompt=none must not show any page.
		return s.redirectError(c, http.StatusFound, ar, oerr(errConsentRequired, "prompt=none, but this server always asks for consent"))
	}
	return s.renderConsent(c, http.StatusOK, ar, cl, consentInput{}, "")
}

// promptNone reports whether the request asked for no user interaction.
func promptNone(q url.Values) bool {
	for _, p := range strings.Fields(q.Get("prompt")) {
		if p == "none" {
			return true
		}
	}
	return false
}

// parseAuthorize validates an authorization request. pageErr means no
// redirect URI can be trusted, so the error is shown on a page; redirErr is
// sent to ar.RedirectURI.
func (s *Server) parseAuthorize(q url.Values) (ar *authzRequest, cl *client, pageErr, redirErr *oauthError) {
	clientID, ok := single(q, "client_id")
	if !ok || clientID == "" {
		return nil, nil, oerr(errInvalidRequest, "the request needs exactly one client_id"), nil
	}
	cl, err := s.openClient(clientID)
	if err != nil {
		return nil, nil, oerr(errInvalidClient, "unknown client_id: register the client again (POST %s)", pathRegister), nil
	}
	requested, ok := single(q, "redirect_uri")
	if !ok {
		return nil, nil, oerr(errInvalidRequest, "redirect_uri is repeated"), nil
	}
	redirect, ok := cl.redirectFor(requested)
	if !ok {
		if requested == "" {
			return nil, nil, oerr(errInvalidRequest, "redirect_uri is required: the client registered %d redirect URIs", len(cl.RedirectURIs)), nil
		}
		return nil, nil, oerr(errInvalidRequest, "redirect_uri %q is not registered for this client", requested), nil
	}

	ar = &authzRequest{ClientID: clientID, RedirectURI: redirect, RedirectGiven: requested != ""}
	state, ok := single(q, "state")
	switch {
	case !ok:
		return ar, cl, nil, oerr(errInvalidRequest, "state is repeated")
	case len(state) > maxStateLen:
		return ar, cl, nil, oerr(errInvalidRequest, "state is longer than %d bytes", maxStateLen)
	}
	ar.State = state
	for _, name := range []string{"response_type", "code_challenge", "code_challenge_method", "scope"} {
		if len(q[name]) > 1 {
			return ar, cl, nil, oerr(errInvalidRequest, "%s is repeated", name)
		}
	}

	switch rt := q.Get("response_type"); {
	case rt == "":
		return ar, cl, nil, oerr(errInvalidRequest, "response_type is required (want code)")
	case rt != "code":
		return ar, cl, nil, oerr(errUnsupportedResponseType, "response_type %q is not supported (want code)", rt)
	case !cl.allows(grantCode):
		return ar, cl, nil, oerr(errUnauthorizedClient, "the client did not register the authorization_code grant type")
	}

	ar.Challenge = q.Get("code_challenge")
	switch method := q.Get("code_challenge_method"); {
	case ar.Challenge == "":
		return ar, cl, nil, oerr(errInvalidRequest, "code_challenge is required (PKCE with S256)")
	case method != "S256":
		return ar, cl, nil, oerr(errInvalidRequest, "code_challenge_method %q is not supported (want S256)", method)
	case !validPKCE(ar.Challenge):
		return ar, cl, nil, oerr(errInvalidRequest, "code_challenge must be %d to %d characters of [A-Za-z0-9-._~]", minChallengeLen, maxChallengeLen)
	}

	resource, oe := s.resolveResource(q["resource"], s.opts.Resource)
	if oe != nil {
		return ar, cl, nil, oe
	}
	ar.Resource = resource

	scopes, oe := parseScope(q.Get("scope"))
	if oe != nil {
		return ar, cl, nil, oe
	}
	ar.Scopes = scopes
	return ar, cl, nil, nil
}

// resolveResource checks the RFC 8707 resource parameters of a request:
// each must name the MCP resource or one of its aliases, with or without a
// trailing slash, and all must name the same one. With none, the audience
// is fallback. The audience is written as in Options (Resource or the
// matching ResourceAliases entry).
func (s *Server) resolveResource(values []string, fallback string) (string, *oauthError) {
	if len(values) == 0 {
		return fallback, nil
	}
	var got string
	for _, v := range values {
		match := ""
		for _, r := range s.resources() {
			if strings.TrimSuffix(v, "/") == strings.TrimSuffix(r, "/") {
				match = r
			}
		}
		if match == "" || (got != "" && match != got) {
			return "", oerr(errInvalidTarget, "resource %q is not served here (want %s)", v, s.opts.Resource)
		}
		got = match
	}
	return got, nil
}

// resources lists the MCP URLs tokens may be issued for: Resource first.
func (s *Server) resources() []string {
	return append([]string{s.opts.Resource}, s.opts.ResourceAliases...)
}

// single returns the only value of name in q ("" when absent), or false if
// it is repeated.
func single(q url.Values, name string) (string, bool) {
	vs := q[name]
	if len(vs) > 1 {
		return "", false
	}
	if len(vs) == 0 {
		return "", true
	}
	return vs[0], true
}

// validPKCE reports whether s is a well-formed code_challenge or
// code_verifier (RFC 7636 §4.1): 43 to 128 unreserved characters.
func validPKCE(s string) bool {
	if len(s) < minChallengeLen || len(s) > maxChallengeLen {
		return false
	}
	for _, r := range s {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-._~", r)
		if !ok {
			return false
		}
	}
	return true
}

// approve issues a code for ar and who and redirects to the client.
func (s *Server) approve(c echo.Context, status int, ar *authzRequest, cl *client, who identity) error {
	code, err := s.issueCode(ar, who)
	if err != nil {
		s.log.Error("devauth: issuing code", "error", err)
		return s.redirectError(c, status, ar, oerr(errServerError, "could not issue a code"))
	}
	s.log.Info("devauth: authorization approved", "client", cl.Name, "subject", who.Subject,
		"org_id", who.OrgID, "role", who.Role, "scope", strings.Join(ar.Scopes, " "))
	noStore(c)
	return c.Redirect(status, redirectWith(ar.RedirectURI, url.Values{
		"code":  {code},
		"state": {ar.State},
		"iss":   {s.opts.Issuer},
	}))
}

// redirectError sends an authorization error response to the client
// (RFC 6749 §4.1.2.1), with iss (RFC 9207).
func (s *Server) redirectError(c echo.Context, status int, ar *authzRequest, oe *oauthError) error {
	noStore(c)
	return c.Redirect(status, redirectWith(ar.RedirectURI, url.Values{
		"error":             {oe.Code},
		"error_description": {oe.Description},
		"state":             {ar.State},
		"iss":               {s.opts.Issuer},
	}))
}
