package page

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
)

// Bounds on what the issuer sends back.
const (
	maxMetadataBody = 256 << 10
	maxTokenBody    = 64 << 10
	metadataTTL     = time.Hour // the issuer's endpoints are re-read this often
)

// endpoints are the parts of the issuer's metadata the sign-in uses.
type endpoints struct {
	Issuer        string   `json:"issuer"`
	Authorization string   `json:"authorization_endpoint"`
	Token         string   `json:"token_endpoint"`
	Registration  string   `json:"registration_endpoint"`
	PKCEMethods   []string `json:"code_challenge_methods_supported"`
}

// discovery caches the issuer's endpoints. It is safe for concurrent use;
// a failed fetch is not cached, so the next sign-in tries again.
type discovery struct {
	issuer string
	client *http.Client
	now    func() time.Time

	mu      sync.Mutex // guards the fields below
	cached  *endpoints
	fetched time.Time
}

// get returns the issuer's endpoints, fetching them when the cache is
// empty or older than metadataTTL.
func (d *discovery) get(ctx context.Context) (*endpoints, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cached != nil && d.now().Sub(d.fetched) < metadataTTL {
		return d.cached, nil
	}
	var errs []error
	for _, u := range metadataURLs(d.issuer) {
		ep, err := d.fetch(ctx, u)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		d.cached, d.fetched = ep, d.now()
		return ep, nil
	}
	return nil, fmt.Errorf("discovering the endpoints of %s: %w", d.issuer, errors.Join(errs...))
}

// metadataURLs lists where the issuer's metadata may be: RFC 8414 first
// (inserted before the issuer's path), then OpenID Connect Discovery.
func metadataURLs(issuer string) []string {
	trimmed := strings.TrimSuffix(issuer, "/")
	u, err := url.Parse(trimmed)
	if err != nil || u.Path == "" {
		return []string{
			trimmed + "/.well-known/oauth-authorization-server",
			trimmed + "/.well-known/openid-configuration",
		}
	}
	origin := u.Scheme + "://" + u.Host
	return []string{
		origin + "/.well-known/oauth-authorization-server" + u.EscapedPath(),
		trimmed + "/.well-known/openid-configuration",
	}
}

func (d *discovery) fetch(ctx context.Context, u string) (*endpoints, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", u, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := d.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: status %d", u, resp.StatusCode)
	}
	var ep endpoints
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxMetadataBody)).Decode(&ep); err != nil {
		return nil, fmt.Errorf("%s: %w", u, err)
	}
	switch {
	case ep.Issuer != d.issuer:
		// RFC 8414 §3.3: a document for another issuer is not this one's.
		return nil, fmt.Errorf("%s: issuer %q, want %q", u, ep.Issuer, d.issuer)
	case checkAbsolute(ep.Authorization) != nil:
		return nil, fmt.Errorf("%s: authorization_endpoint %q is not an http(s) URL", u, ep.Authorization)
	case checkAbsolute(ep.Token) != nil:
		return nil, fmt.Errorf("%s: token_endpoint %q is not an http(s) URL", u, ep.Token)
	case len(ep.PKCEMethods) > 0 && !slices.Contains(ep.PKCEMethods, "S256"):
		return nil, fmt.Errorf("%s: the issuer does not support PKCE S256", u)
	}
	return &ep, nil
}

// redirectURI is where the issuer sends the person back.
func (p *Page) redirectURI() string { return p.opts.PublicURL + pathCallback }

// startSignIn sends the browser to the issuer to sign in, remembering (in
// a sealed cookie) how to finish and where to return. switchUser asks the
// issuer to show its sign-in again even if it remembers someone.
func (p *Page) startSignIn(c echo.Context, id string, chosen lang, switchUser bool) error {
	ctx := c.Request().Context()
	ep, err := p.endpoints.get(ctx)
	var client string
	if err == nil {
		client, err = p.clientID(ctx)
	}
	if err != nil {
		p.log.Error("approval page: sign-in unavailable", "error", err)
		return p.notice(c, http.StatusServiceUnavailable, pickLang(c, chosen), noticeUnavailable, id)
	}
	st := signIn{
		Client:   client,
		State:    randomText(),
		Verifier: randomText() + randomText(), // 52 characters of [A-Z2-7]
		Approval: id,
		Lang:     string(chosen),
		Exp:      p.now().Add(signInTTL).Unix(),
	}
	sealed, err := p.seal.Seal(purposeSignIn, st)
	if err != nil {
		return p.failure(c, pickLang(c, chosen), id, err)
	}
	p.setCookie(c, signInCookie, sealed, signInTTL)

	q := url.Values{
		"response_type":         {"code"},
		"client_id":             {client},
		"redirect_uri":          {p.redirectURI()},
		"scope":                 {joinScopes(p.opts.Scopes)},
		"state":                 {st.State},
		"code_challenge":        {s256(st.Verifier)},
		"code_challenge_method": {"S256"},
		"resource":              {p.opts.MCPURL},
		"ui_locales":            {pickLang(c, chosen).htmlLang()},
	}
	if switchUser {
		q.Set("prompt", "login")
	}
	target := ep.Authorization
	if strings.Contains(target, "?") {
		target += "&" + q.Encode()
	} else {
		target += "?" + q.Encode()
	}
	noStore(c)
	return c.Redirect(http.StatusSeeOther, target)
}

// handleCallback serves GET /approve/callback: it checks the state against
// the sign-in cookie, exchanges the code, verifies the access token, keeps
// who it proves in the session cookie (never the token) and returns to the
// approval.
func (p *Page) handleCallback(c echo.Context) error {
	if !p.guarded(c) {
		return p.notice(c, http.StatusForbidden, pickLang(c, ""), noticeCrossSite, "")
	}
	q := c.Request().URL.Query()
	var st signIn
	ck, err := c.Request().Cookie(signInCookie)
	if err == nil {
		err = p.seal.Open(purposeSignIn, ck.Value, &st, p.now())
	}
	valid := err == nil && q.Get("state") != "" &&
		subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(st.State)) == 1
	if !valid {
		// No sign-in of this browser matches: a stale tab, a second window,
		// or a forged callback. Nothing to finish.
		p.auditSignInFailed(c, st.Approval, http.StatusBadRequest, "no sign-in of this browser matches the callback")
		return p.signInFailed(c, http.StatusBadRequest, "", st.Approval, texts[pickLang(c, lang(st.Lang))].SignInLost)
	}
	// One try per sign-in: a reload of the callback must start again.
	p.setCookie(c, signInCookie, "", -1)
	chosen := lang(st.Lang)
	t := texts[pickLang(c, chosen)]

	if iss := q.Get("iss"); iss != "" && iss != p.opts.Issuer {
		// RFC 9207: the answer comes from another authorization server
		// (a mix-up attack), so its code must not be used.
		p.log.Warn("approval page: sign-in answered by another issuer", "iss", iss)
		p.auditSignInFailed(c, st.Approval, http.StatusBadRequest, "answered by another issuer")
		return p.signInFailed(c, http.StatusBadRequest, chosen, st.Approval, fmt.Sprintf(t.SignInRefusedF, "invalid_issuer"))
	}
	if e := q.Get("error"); e != "" {
		p.log.Info("approval page: sign-in refused by the issuer", "error", clip(e, 64), "approval_id", st.Approval)
		if e == "access_denied" {
			p.auditSignInFailed(c, st.Approval, http.StatusForbidden, "declined at the issuer: access_denied")
			return p.signInFailed(c, http.StatusForbidden, chosen, st.Approval, t.SignInDeclined)
		}
		p.auditSignInFailed(c, st.Approval, http.StatusBadRequest, "refused by the issuer: "+oauthCode(e))
		return p.signInFailed(c, http.StatusBadRequest, chosen, st.Approval, fmt.Sprintf(t.SignInRefusedF, oauthCode(e)))
	}
	code := q.Get("code")
	if code == "" {
		p.auditSignInFailed(c, st.Approval, http.StatusBadRequest, "no authorization code")
		return p.signInFailed(c, http.StatusBadRequest, chosen, st.Approval, fmt.Sprintf(t.SignInRefusedF, "no code"))
	}

	ctx := c.Request().Context()
	token, err := p.exchange(ctx, st.Client, code, st.Verifier)
	if err != nil {
		p.log.Warn("approval page: code exchange failed", "error", err, "approval_id", st.Approval)
		p.auditSignInFailed(c, st.Approval, http.StatusBadGateway, "the code exchange failed")
		return p.signInFailed(c, http.StatusBadGateway, chosen, st.Approval, fmt.Sprintf(t.SignInRefusedF, "token"))
	}
	pr, err := p.opts.Verify(ctx, token)
	token = "" // never kept past this point
	if err != nil {
		p.log.Warn("approval page: the sign-in's access token did not verify", "error", err, "approval_id", st.Approval)
		p.auditSignInFailed(c, st.Approval, http.StatusForbidden, "the access token did not verify")
		return p.signInFailed(c, http.StatusForbidden, chosen, st.Approval, fmt.Sprintf(t.SignInRefusedF, "invalid_token"))
	}
	if err := p.auditSignIn(c, pr, st.Approval); err != nil {
		return p.failure(c, pickLang(c, chosen), st.Approval, err)
	}
	if err := p.startSession(c, pr); err != nil {
		return p.failure(c, pickLang(c, chosen), st.Approval, err)
	}
	p.log.Info("approval page: signed in", "issuer", pr.Issuer, "subject", pr.Subject, "org_id", pr.OrgID,
		"approval_id", st.Approval)
	noStore(c)
	return c.Redirect(http.StatusSeeOther, p.approvalPath(st.Approval, chosen))
}

// tokenResponse is the part of RFC 6749 §5.1 the page reads.
type tokenResponse struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
}

// exchange trades an authorization code issued to client for an access
// token at the issuer's token endpoint. Only the configured client has a
// secret; a registered one is public.
func (p *Page) exchange(ctx context.Context, client, code, verifier string) (string, error) {
	secret := ""
	if client == p.opts.ClientID {
		secret = p.opts.ClientSecret
	}
	ep, err := p.endpoints.get(ctx)
	if err != nil {
		return "", err
	}
	form := url.Values{
		"grant_type":    {"authorization_code"},
		"code":          {code},
		"redirect_uri":  {p.redirectURI()},
		"code_verifier": {verifier},
		"resource":      {p.opts.MCPURL},
	}
	if secret == "" {
		form.Set("client_id", client)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep.Token, strings.NewReader(form.Encode()))
	if err != nil {
		return "", fmt.Errorf("token request: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if secret != "" {
		// RFC 6749 §2.3.1: both parts form-urlencoded before Basic.
		req.SetBasicAuth(url.QueryEscape(client), url.QueryEscape(secret))
	}
	resp, err := p.opts.HTTPClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("token request: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxTokenBody))
	if err != nil {
		return "", fmt.Errorf("token response: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		var oe struct {
			Error string `json:"error"`
		}
		_ = json.Unmarshal(body, &oe)
		return "", fmt.Errorf("token endpoint answered %d %s", resp.StatusCode, oauthCode(oe.Error))
	}
	var tr tokenResponse
	if err := json.Unmarshal(body, &tr); err != nil {
		return "", fmt.Errorf("token response is not JSON: %w", err)
	}
	if tr.AccessToken == "" || !strings.EqualFold(tr.TokenType, "bearer") {
		return "", fmt.Errorf("token response has no bearer access token (token_type %q)", oauthCode(tr.TokenType))
	}
	return tr.AccessToken, nil
}

func joinScopes(scopes []string) string { return strings.Join(scopes, " ") }

// s256 is the PKCE S256 transform (RFC 7636 §4.2).
func s256(verifier string) string {
	h := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(h[:])
}

// oauthCode returns an OAuth error code fit to show and log: the
// characters RFC 6749 allows, at most 64, else "invalid".
func oauthCode(s string) string {
	if s == "" || len(s) > 64 {
		return "invalid"
	}
	for _, r := range s {
		if r < 0x20 || r > 0x7e || r == '"' || r == '\\' {
			return "invalid"
		}
	}
	return s
}
