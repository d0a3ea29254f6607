package devauth

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/kobana/kadu/core/auth"
)

// csrfCookie holds a random value per browser; the consent form token
// carries its hash, so a form only submits from the browser that loaded it
// (double-submit, on top of the form token being sealed and short-lived).
const (
	csrfCookie      = "kadu_devauth_csrf"
	maxConsentBody  = 64 << 10
	csrfCookieBytes = 32
)

// consentForm is the sealed hidden field of the consent page.
type consentForm struct {
	Request authzRequest `json:"q"`
	CSRF    string       `json:"x"` // hash of the csrf cookie
	Exp     int64        `json:"e"` // unix seconds
}

// consentInput is what the approver typed, shown again when it is invalid.
type consentInput struct {
	Subject string
	OrgID   string
	Role    string
}

// handleConsent serves POST /oauth/authorize: the approver's decision.
func (s *Server) handleConsent(c echo.Context) error {
	req := c.Request()
	switch req.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
	default:
		return s.renderError(c, http.StatusForbidden, oerr(errAccessDenied, "the consent form was submitted from another site"))
	}
	req.Body = http.MaxBytesReader(c.Response(), req.Body, maxConsentBody)
	if err := req.ParseForm(); err != nil {
		return s.renderError(c, http.StatusBadRequest, oerr(errInvalidRequest, "the consent form could not be read"))
	}
	form := req.PostForm

	var cf consentForm
	if err := s.sealer.Open(purposeConsent, form.Get("form"), &cf, s.now()); err != nil {
		return s.renderError(c, http.StatusBadRequest, oerr(errInvalidRequest, "this consent form is invalid or has expired: start signing in again from your client"))
	}
	cookie, err := req.Cookie(csrfCookie)
	if err != nil || subtle.ConstantTimeCompare([]byte(csrfHash(cookie.Value)), []byte(cf.CSRF)) != 1 {
		return s.renderError(c, http.StatusForbidden, oerr(errAccessDenied, "this consent form was not issued to this browser: start signing in again from your client"))
	}
	ar := &cf.Request
	cl, err := s.openClient(ar.ClientID)
	if err != nil {
		return s.renderError(c, http.StatusBadRequest, oerr(errInvalidClient, "unknown client_id"))
	}

	switch form.Get("decision") {
	case "deny":
		s.log.Info("devauth: authorization denied", "client", cl.Name)
		return s.redirectError(c, http.StatusSeeOther, ar, oerr(errAccessDenied, "the user denied the request"))
	case "approve":
	default:
		return s.renderError(c, http.StatusBadRequest, oerr(errInvalidRequest, "the consent form needs a decision"))
	}

	in := consentInput{
		Subject: strings.TrimSpace(form.Get("subject")),
		OrgID:   strings.TrimSpace(form.Get("org")),
		Role:    form.Get("role"),
	}
	who, problem := in.identity()
	if problem != "" {
		return s.renderConsent(c, http.StatusBadRequest, ar, cl, in, problem)
	}
	return s.approve(c, http.StatusSeeOther, ar, cl, who)
}

// identity validates what the approver typed, returning the identity or
// the problem to show.
func (in consentInput) identity() (identity, string) {
	if err := checkSubject(in.Subject); err != nil {
		return identity{}, "User: " + err.Error()
	}
	if err := checkOrg(in.OrgID); err != nil {
		return identity{}, "Organisation: " + err.Error()
	}
	role, err := auth.ParseRole(in.Role)
	if err != nil {
		return identity{}, "Role: " + err.Error()
	}
	return identity{Subject: in.Subject, OrgID: in.OrgID, Role: role}, ""
}

// renderConsent shows the consent page for ar. in holds what the approver
// typed ("" fields take the defaults); problem, if set, is shown above the
// form.
func (s *Server) renderConsent(c echo.Context, status int, ar *authzRequest, cl *client, in consentInput, problem string) error {
	csrf := s.csrfValue(c)
	token, err := s.sealer.Seal(purposeConsent, consentForm{
		Request: *ar,
		CSRF:    csrfHash(csrf),
		Exp:     s.now().Add(consentTTL).Unix(),
	})
	if err != nil {
		s.log.Error("devauth: sealing consent form", "error", err)
		return s.renderError(c, http.StatusInternalServerError, oerr(errServerError, "could not render the consent page"))
	}
	if in.Subject == "" {
		in.Subject = s.opts.DefaultSubject
	}
	if in.OrgID == "" {
		in.OrgID = s.opts.DefaultOrg
	}
	if in.Role == "" {
		in.Role = string(s.opts.DefaultRole)
	}

	name := cl.Name
	if name == "" {
		name = "An unnamed client"
	}
	data := consentData{
		ClientName:  name,
		Destination: destination(ar.RedirectURI),
		Resource:    ar.Resource,
		Issuer:      s.opts.Issuer,
		Form:        token,
		Input:       in,
		Problem:     problem,
	}
	for _, sc := range ar.Scopes {
		data.Scopes = append(data.Scopes, scopeView{Name: sc, Description: scopeDescription(sc)})
	}
	for _, r := range auth.Roles() {
		data.Roles = append(data.Roles, roleView{Value: string(r), Selected: string(r) == in.Role})
	}
	return s.pages.render(c, status, "consent", cspFormTarget(ar.RedirectURI), &data)
}

// csrfValue returns this browser's CSRF cookie value, setting a new one if
// it has none (so two consent tabs share one).
func (s *Server) csrfValue(c echo.Context) string {
	if ck, err := c.Request().Cookie(csrfCookie); err == nil && len(ck.Value) == base64.RawURLEncoding.EncodedLen(csrfCookieBytes) {
		return ck.Value
	}
	v := base64.RawURLEncoding.EncodeToString(randomBytes(csrfCookieBytes))
	c.SetCookie(&http.Cookie{
		Name:     csrfCookie,
		Value:    v,
		Path:     pathAuthorize,
		HttpOnly: true,
		Secure:   strings.HasPrefix(s.opts.Issuer, "https://"),
		SameSite: http.SameSiteStrictMode,
	})
	return v
}

func csrfHash(v string) string {
	h := sha256.Sum256([]byte("kadu devauth csrf " + v))
	return base64.RawURLEncoding.EncodeToString(h[:])
}

// destination describes where the browser goes after the decision:
// "127.0.0.1:53682" or "cursor://anysphere.cursor-retrieval".
func destination(uri string) string {
	u, err := url.Parse(uri)
	if err != nil {
		return uri
	}
	if u.Scheme == "http" || u.Scheme == "https" {
		return u.Host
	}
	return u.Scheme + "://" + u.Host
}
