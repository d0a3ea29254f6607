package devauth

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/kobana/kadu/core/auth"
)

// maxTokenBody bounds a token request.
const maxTokenBody = 64 << 10

// codeClaims is what an authorization code carries, sealed with the
// per-process key.
type codeClaims struct {
	ID            string    `json:"i"`
	Client        string    `json:"c"` // clientHash of the client it was issued to
	RedirectURI   string    `json:"r"`
	RedirectGiven bool      `json:"rg"`
	Challenge     string    `json:"pc"`
	Resource      string    `json:"a"`
	Scopes        []string  `json:"sc"`
	Subject       string    `json:"s"`
	OrgID         string    `json:"o"`
	Role          auth.Role `json:"ro"`
	Exp           int64     `json:"e"` // unix seconds
}

// refreshClaims is what a refresh token carries, sealed with the persisted
// key so that it survives restarts. Tokens of one family descend from one
// authorization; replaying a rotated token cuts the family off.
type refreshClaims struct {
	ID       string    `json:"i"`
	Family   string    `json:"f"`
	Client   string    `json:"c"` // clientHash
	Resource string    `json:"a"`
	Scopes   []string  `json:"sc"`
	Subject  string    `json:"s"`
	OrgID    string    `json:"o"`
	Role     auth.Role `json:"ro"`
	Exp      int64     `json:"e"` // unix seconds
}

// tokenResponse is the RFC 6749 §5.1 response.
type tokenResponse struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int64  `json:"expires_in"`
	RefreshToken string `json:"refresh_token,omitempty"`
	Scope        string `json:"scope"`
}

// issueCode seals a code for an approved request.
func (s *Server) issueCode(ar *authzRequest, who identity) (string, error) {
	return s.codes.Seal(purposeCode, codeClaims{
		ID:            rand.Text(),
		Client:        clientHash(ar.ClientID),
		RedirectURI:   ar.RedirectURI,
		RedirectGiven: ar.RedirectGiven,
		Challenge:     ar.Challenge,
		Resource:      ar.Resource,
		Scopes:        ar.Scopes,
		Subject:       who.Subject,
		OrgID:         who.OrgID,
		Role:          who.Role,
		Exp:           s.now().Add(codeTTL).Unix(),
	})
}

// handleToken serves POST /oauth/token.
func (s *Server) handleToken(c echo.Context) error {
	req := c.Request()
	req.Body = http.MaxBytesReader(c.Response(), req.Body, maxTokenBody)
	if err := req.ParseForm(); err != nil {
		return writeJSONError(c, oerr(errInvalidRequest, "the request body must be application/x-www-form-urlencoded"), false)
	}
	form := req.PostForm
	for name, vs := range form {
		if len(vs) > 1 && name != "resource" {
			return writeJSONError(c, oerr(errInvalidRequest, "%s is repeated", name), false)
		}
	}
	grantType := form.Get("grant_type")
	switch grantType {
	case grantCode, grantRefr, grantCreds:
	case "":
		return writeJSONError(c, oerr(errInvalidRequest, "grant_type is required"), false)
	default:
		return writeJSONError(c, oerr(errUnsupportedGrantType, "grant_type %q is not supported (want authorization_code, refresh_token or client_credentials)", grantType), false)
	}

	cl, usedBasic, oe := s.authenticateClient(req, form)
	if oe != nil {
		s.log.Info("devauth: token request refused", "grant_type", grantType, "error", oe.Code, "reason", oe.Description)
		return writeJSONError(c, oe, usedBasic)
	}
	if !cl.allows(grantType) {
		return writeJSONError(c, oerr(errUnauthorizedClient, "the client did not register the %s grant type", grantType), usedBasic)
	}
	if grantType == grantCreds && !s.clientCredentialsOn() {
		// A client registered while the grant was on keeps its grant types
		// (they are sealed in its id); the server's switch wins.
		s.log.Info("devauth: token request refused", "grant_type", grantType, "client", cl.Name, "error", errUnsupportedGrantType, "reason", "client_credentials is off")
		return writeJSONError(c, errCredentialsOff(errUnsupportedGrantType), usedBasic)
	}

	var resp *tokenResponse
	switch grantType {
	case grantCode:
		resp, oe = s.exchangeCode(cl, form)
	case grantRefr:
		resp, oe = s.refresh(cl, form)
	case grantCreds:
		resp, oe = s.clientCredentials(cl, form)
	}
	if oe != nil {
		s.log.Info("devauth: token request refused", "grant_type", grantType, "client", cl.Name, "error", oe.Code, "reason", oe.Description)
		return writeJSONError(c, oe, usedBasic)
	}
	s.log.Info("devauth: token issued", "grant_type", grantType, "client", cl.Name, "scope", resp.Scope)
	noStore(c)
	return c.JSON(http.StatusOK, resp)
}

// exchangeCode serves the authorization_code grant.
func (s *Server) exchangeCode(cl *authenticatedClient, form map[string][]string) (*tokenResponse, *oauthError) {
	code := first(form, "code")
	if code == "" {
		return nil, oerr(errInvalidRequest, "code is required")
	}
	now := s.now()
	var cc codeClaims
	if err := s.codes.Open(purposeCode, code, &cc, now); err != nil {
		return nil, oerr(errInvalidGrant, "the code is invalid or has expired")
	}
	if subtle.ConstantTimeCompare([]byte(cc.Client), []byte(clientHash(cl.ID))) != 1 {
		return nil, oerr(errInvalidGrant, "the code was issued to another client")
	}
	redirect := first(form, "redirect_uri")
	if (cc.RedirectGiven || redirect != "") && redirect != cc.RedirectURI {
		return nil, oerr(errInvalidGrant, "redirect_uri does not match the one of the authorization request")
	}
	verifier := first(form, "code_verifier")
	if verifier == "" {
		return nil, oerr(errInvalidRequest, "code_verifier is required (PKCE)")
	}
	if !validPKCE(verifier) || subtle.ConstantTimeCompare([]byte(s256(verifier)), []byte(cc.Challenge)) != 1 {
		return nil, oerr(errInvalidGrant, "code_verifier does not match the code_challenge")
	}
	resource, oe := s.resolveResource(form["resource"], cc.Resource)
	if oe != nil {
		return nil, oe
	}
	if resource != cc.Resource {
		return nil, oerr(errInvalidTarget, "resource differs from the one of the authorization request")
	}
	if !s.usedCodes.add(cc.ID, time.Unix(cc.Exp, 0).Add(time.Second), now) {
		// RFC 6749 §4.1.2: a code used twice revokes what it was exchanged
		// for. Refresh tokens can be; access tokens are stateless and live
		// out their (short) lifetime.
		s.revokedFamilies.add(cc.ID, now.Add(s.opts.RefreshTokenTTL), now)
		s.log.Warn("devauth: authorization code replayed; revoking its refresh tokens", "client", cl.Name, "subject", cc.Subject)
		return nil, oerr(errInvalidGrant, "the code was already used")
	}
	rc := &refreshClaims{
		Family:   cc.ID, // the code's id, so a replayed code can cut the family off
		Client:   cc.Client,
		Resource: cc.Resource,
		Scopes:   cc.Scopes,
		Subject:  cc.Subject,
		OrgID:    cc.OrgID,
		Role:     cc.Role,
	}
	return s.respond(cl, rc, rc.Scopes, cl.allows(grantRefr))
}

// refresh serves the refresh_token grant: it rotates the refresh token,
// keeping the identity and scopes (which the request may narrow).
func (s *Server) refresh(cl *authenticatedClient, form map[string][]string) (*tokenResponse, *oauthError) {
	token := first(form, "refresh_token")
	if token == "" {
		return nil, oerr(errInvalidRequest, "refresh_token is required")
	}
	now := s.now()
	var rc refreshClaims
	if err := s.sealer.Open(purposeRefresh, token, &rc, now); err != nil {
		return nil, oerr(errInvalidGrant, "the refresh token is invalid or has expired")
	}
	if subtle.ConstantTimeCompare([]byte(rc.Client), []byte(clientHash(cl.ID))) != 1 {
		return nil, oerr(errInvalidGrant, "the refresh token was issued to another client")
	}
	if s.revokedFamilies.has(rc.Family, now) {
		return nil, oerr(errInvalidGrant, "the refresh token was revoked")
	}
	scopes := rc.Scopes
	if requested := first(form, "scope"); requested != "" {
		narrowed, oe := parseScope(requested)
		if oe != nil {
			return nil, oe
		}
		for _, sc := range narrowed {
			if !slices.Contains(rc.Scopes, sc) {
				return nil, oerr(errInvalidScope, "scope %q was not granted to this refresh token", sc)
			}
		}
		scopes = narrowed
	}
	resource, oe := s.resolveResource(form["resource"], rc.Resource)
	if oe != nil {
		return nil, oe
	}
	if !s.usedRefresh.add(rc.ID, time.Unix(rc.Exp, 0).Add(time.Second), now) {
		// A rotated token came back: someone holds a copy. Cut the family off.
		s.revokedFamilies.add(rc.Family, now.Add(s.opts.RefreshTokenTTL), now)
		s.log.Warn("devauth: refresh token replayed; revoking its family", "client", cl.Name, "subject", rc.Subject)
		return nil, oerr(errInvalidGrant, "the refresh token was already used")
	}
	rc.Resource = resource
	return s.respond(cl, &rc, scopes, true)
}

// clientCredentials serves the client_credentials grant, when
// Options.ClientCredentialsRole turns it on: the client acts as itself, in
// the default organisation with that role.
func (s *Server) clientCredentials(cl *authenticatedClient, form map[string][]string) (*tokenResponse, *oauthError) {
	if cl.public() {
		return nil, oerr(errUnauthorizedClient, "client_credentials needs a confidential client")
	}
	scopes, oe := parseScope(first(form, "scope"))
	if oe != nil {
		return nil, oe
	}
	resource, oe := s.resolveResource(form["resource"], s.opts.Resource)
	if oe != nil {
		return nil, oe
	}
	return s.respond(cl, &refreshClaims{
		Subject:  cl.ID,
		OrgID:    s.opts.DefaultOrg,
		Role:     s.opts.ClientCredentialsRole,
		Resource: resource,
	}, scopes, false)
}

// respond issues an access token for the identity and audience in rc with
// scopes and, if withRefresh, a new refresh token of rc's family with rc's
// scopes (RFC 6749 §6: narrowing applies to the access token only).
func (s *Server) respond(cl *authenticatedClient, rc *refreshClaims, scopes []string, withRefresh bool) (*tokenResponse, *oauthError) {
	at, err := s.sign(grant{
		Subject:  rc.Subject,
		OrgID:    rc.OrgID,
		Role:     rc.Role,
		Scopes:   scopes,
		ClientID: cl.ID,
		Audience: rc.Resource,
	}, s.opts.AccessTokenTTL)
	if err != nil {
		s.log.Error("devauth: signing token", "error", err)
		return nil, oerr(errServerError, "could not issue a token")
	}
	resp := &tokenResponse{
		AccessToken: at,
		TokenType:   "Bearer",
		ExpiresIn:   int64(s.opts.AccessTokenTTL / time.Second),
		Scope:       strings.Join(scopes, " "),
	}
	if !withRefresh {
		return resp, nil
	}
	next := *rc
	next.ID = rand.Text()
	next.Exp = s.now().Add(s.opts.RefreshTokenTTL).Unix()
	resp.RefreshToken, err = s.sealer.Seal(purposeRefresh, next)
	if err != nil {
		s.log.Error("devauth: sealing refresh token", "error", err)
		return nil, oerr(errServerError, "could not issue a token")
	}
	return resp, nil
}

// first returns the first value of name in form, or "".
func first(form map[string][]string, name string) string {
	if vs := form[name]; len(vs) > 0 {
		return vs[0]
	}
	return ""
}

// s256 is the PKCE S256 transform (RFC 7636 §4.2).
func s256(verifier string) string {
	h := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(h[:])
}
