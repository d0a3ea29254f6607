package page

import (
	"crypto/subtle"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/kobana/kadu/core/auth"
)

// Cookie names and lifetimes. Both cookies are HttpOnly, SameSite=Lax (the
// sign-in returns by a top-level GET from the issuer, which Strict would
// strip), Secure when PublicURL is https, and scoped to /approve.
const (
	sessionCookie = "kadu_approve_session"
	signInCookie  = "kadu_approve_signin"
	cookiePath    = "/approve"

	sessionTTL = 15 * time.Minute // a signed-in person may decide for this long
	signInTTL  = 10 * time.Minute // time to finish signing in at the issuer
)

// session is who signed in: all the page keeps of the access token.
type session struct {
	Issuer  string `json:"i"`
	Subject string `json:"s"`
	OrgID   string `json:"o"`
	ID      string `json:"n"` // random per sign-in; form tokens carry it
	Exp     int64  `json:"e"` // unix seconds
}

// principal is the identity Decide compares with the approval's requester.
// It carries no role or scopes: the operation runs with the stored
// principal, never with this one.
func (s *session) principal() *auth.Principal {
	return &auth.Principal{Issuer: s.Issuer, Subject: s.Subject, OrgID: s.OrgID}
}

// signIn is a sign-in in progress: what the callback needs to finish it.
type signIn struct {
	Client   string `json:"c"` // the client_id the code is issued to
	State    string `json:"s"`
	Verifier string `json:"v"` // PKCE code_verifier
	Approval string `json:"a"` // where to return
	Lang     string `json:"l"`
	Exp      int64  `json:"e"`
}

// formToken is the hidden field of the decision form: it binds a POST to
// the sign-in that loaded the page (session.ID) and to one approval.
type formToken struct {
	Session  string `json:"n"`
	Approval string `json:"a"`
	Exp      int64  `json:"e"`
}

// matches reports whether f was issued for sess and approval id (opening
// it checked its expiry).
func (f *formToken) matches(sess *session, id string) bool {
	return subtle.ConstantTimeCompare([]byte(f.Session), []byte(sess.ID)) == 1 && f.Approval == id
}

// setCookie writes a page cookie; maxAge < 0 deletes it.
func (p *Page) setCookie(c echo.Context, name, value string, maxAge time.Duration) {
	ck := &http.Cookie{
		Name:     name,
		Value:    value,
		Path:     cookiePath,
		HttpOnly: true,
		Secure:   p.secure,
		SameSite: http.SameSiteLaxMode,
	}
	if maxAge < 0 {
		ck.MaxAge = -1
	} else {
		ck.MaxAge = int(maxAge / time.Second)
	}
	c.SetCookie(ck)
}

// session returns the signed-in identity of the request, if it has a valid
// one.
func (p *Page) session(c echo.Context) (*session, bool) {
	ck, err := c.Request().Cookie(sessionCookie)
	if err != nil {
		return nil, false
	}
	var s session
	if err := p.seal.Open(purposeSession, ck.Value, &s, p.now()); err != nil {
		return nil, false
	}
	if s.Issuer == "" || s.Subject == "" || s.OrgID == "" || s.ID == "" {
		return nil, false
	}
	return &s, true
}

// startSession keeps who p proved, for sessionTTL.
func (p *Page) startSession(c echo.Context, pr *auth.Principal) error {
	v, err := p.seal.Seal(purposeSession, session{
		Issuer:  pr.Issuer,
		Subject: pr.Subject,
		OrgID:   pr.OrgID,
		ID:      randomText(),
		Exp:     p.now().Add(sessionTTL).Unix(),
	})
	if err != nil {
		return err
	}
	p.setCookie(c, sessionCookie, v, sessionTTL)
	return nil
}

// formFor returns the sealed form token for sess and approval id. It lives
// as long as the session.
func (p *Page) formFor(sess *session, id string) (string, error) {
	return p.seal.Seal(purposeForm, formToken{Session: sess.ID, Approval: id, Exp: sess.Exp})
}
