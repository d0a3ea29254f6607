package page

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/kobana/kadu/core/audit"
	"github.com/kobana/kadu/core/confirm"
	"github.com/kobana/kadu/core/seal"
	"github.com/kobana/kadu/core/store"
)

// PathPrefix starts every route of the page, relative to the root of the
// echo instance and to PublicURL.
const PathPrefix = "/approve/"

// Routes, relative to the root of the echo instance and to PublicURL.
const (
	pathApprove  = "/approve/:id"
	pathCallback = "/approve/callback"
	approvePath  = PathPrefix
)

// maxFormBody bounds a decision form: two short fields and a form token.
const maxFormBody = 8 << 10

// Page serves the approval page.
//
// A Page is safe for concurrent use. It keeps nothing between requests in
// memory except the issuer's metadata (re-read hourly), so any replica
// with the same Options serves any step. It holds no resources and needs
// no Close. The zero value is not usable: use New.
type Page struct {
	// fixed at creation
	opts      Options
	log       *slog.Logger
	now       func() time.Time
	seal      *seal.Ring
	secure    bool // PublicURL is https: cookies get Secure
	publicURL *url.URL
	tmpl      *templates
	endpoints *discovery
	reg       registrar // the client registered when Options.ClientID is empty
	failed    signInThrottle
}

// New validates opts and returns a Page ready to Register. It does no I/O:
// the issuer's metadata is fetched at the first sign-in.
func New(opts Options) (*Page, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	sl, err := seal.New(maxSealedLen, opts.SealKey)
	if err != nil {
		return nil, fmt.Errorf("approval page: %w", err)
	}
	tmpl, err := parseTemplates()
	if err != nil {
		return nil, fmt.Errorf("approval page: %w", err)
	}
	pub, _ := url.Parse(opts.PublicURL) // checked by withDefaults
	return &Page{
		opts:      opts,
		log:       opts.Logger,
		now:       opts.Now,
		seal:      sl,
		secure:    pub.Scheme == "https",
		publicURL: pub,
		tmpl:      tmpl,
		endpoints: &discovery{issuer: opts.Issuer, client: opts.HTTPClient, now: opts.Now},
	}, nil
}

// Register mounts GET and POST /approve/:id and GET /approve/callback on
// the root of e.
func (p *Page) Register(e *echo.Echo) {
	e.GET(pathCallback, p.handleCallback)
	e.GET(pathApprove, p.handleGet)
	e.POST(pathApprove, p.handlePost)
}

// URL returns the public approval link of approval id.
func (p *Page) URL(id string) string { return p.opts.PublicURL + approvePath + url.PathEscape(id) }

// handleGet serves GET /approve/:id: sign in if needed, then show the
// approval, or why it cannot be decided.
func (p *Page) handleGet(c echo.Context) error {
	id := c.Param("id")
	chosen := chosenLang(c.QueryParam("lang"))
	l := pickLang(c, chosen)
	if !p.guarded(c) {
		return p.notice(c, http.StatusForbidden, l, noticeCrossSite, "")
	}
	if !store.ValidID(store.PrefixApproval, id) {
		return p.notice(c, http.StatusNotFound, l, noticeNotALink, "")
	}
	if target, ok := p.canonical(c); ok {
		// The sign-in returns to PublicURL, so it must start there too, or
		// its cookie would live on another host.
		return c.Redirect(http.StatusSeeOther, target)
	}
	if c.QueryParam("switch") != "" {
		p.setCookie(c, sessionCookie, "", -1)
		return p.startSignIn(c, id, chosen, true)
	}
	sess, ok := p.session(c)
	if !ok {
		return p.startSignIn(c, id, chosen, false)
	}

	ctx := c.Request().Context()
	a, err := p.opts.Approvals.Approval(ctx, sess.OrgID, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return p.notFound(c, l, sess, id)
	case err != nil:
		return p.failure(c, l, id, fmt.Errorf("reading approval %s: %w", id, err))
	case !sameUser(sess, &a):
		return p.refused(c, l, sess, &a)
	}
	switch a.StatusAt(p.now()) {
	case store.ApprovalPending:
		return p.renderApproval(c, l, chosen, sess, &a)
	case store.ApprovalExpired:
		return p.notice(c, http.StatusGone, l, noticeExpired, id)
	default:
		return p.renderOutcome(c, http.StatusOK, l, chosen, &a, true)
	}
}

// handlePost serves POST /approve/:id: the person's decision.
func (p *Page) handlePost(c echo.Context) error {
	id := c.Param("id")
	req := c.Request()
	req.Body = http.MaxBytesReader(c.Response(), req.Body, maxFormBody)
	formErr := req.ParseForm()
	chosen := chosenLang(req.PostFormValue("lang"))
	l := pickLang(c, chosen)

	if !p.guarded(c) || !p.sameOrigin(req) {
		p.log.Warn("approval page: decision refused: not from the page's own origin",
			"origin", clip(req.Header.Get("Origin"), 200), "sec_fetch_site", clip(req.Header.Get("Sec-Fetch-Site"), 32))
		return p.notice(c, http.StatusForbidden, l, noticeCrossSite, "")
	}
	if !store.ValidID(store.PrefixApproval, id) {
		return p.notice(c, http.StatusNotFound, l, noticeNotALink, "")
	}
	if formErr != nil {
		return p.notice(c, http.StatusBadRequest, l, noticeBadForm, id)
	}
	sess, ok := p.session(c)
	if !ok {
		return p.notice(c, http.StatusUnauthorized, l, noticeSessionExpired, id)
	}
	var ft formToken
	if err := p.seal.Open(purposeForm, req.PostFormValue("form"), &ft, p.now()); err != nil || !ft.matches(sess, id) {
		p.log.Warn("approval page: decision refused: form token invalid for this sign-in",
			"approval_id", id, "subject", sess.Subject)
		return p.notice(c, http.StatusForbidden, l, noticeFormInvalid, id)
	}
	var proceed bool
	switch req.PostFormValue("decision") {
	case "continue":
		proceed = true
	case "cancel":
	default:
		return p.notice(c, http.StatusBadRequest, l, noticeBadForm, id)
	}

	// The decision's audit event is the approval page's, with this
	// request's id (core/confirm records it).
	ctx := audit.WithCall(req.Context(), audit.Call{Surface: store.SurfaceApproval, RequestID: requestID(c)})
	// The page checks the requester itself before Decide checks it again
	// atomically: a refusal must never depend on one component alone.
	a, err := p.opts.Approvals.Approval(ctx, sess.OrgID, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return p.notFound(c, l, sess, id)
	case err != nil:
		return p.failure(c, l, id, fmt.Errorf("reading approval %s: %w", id, err))
	case !sameUser(sess, &a):
		return p.refused(c, l, sess, &a)
	}

	decided, err := p.opts.Approvals.Decide(ctx, sess.principal(), sess.OrgID, id, proceed)
	switch {
	case errors.Is(err, confirm.ErrNotRequester):
		return p.refused(c, l, sess, &a)
	case errors.Is(err, confirm.ErrExpired):
		return p.notice(c, http.StatusGone, l, noticeExpired, id)
	case errors.Is(err, confirm.ErrDecided):
		// A replayed form, a second tab, or another replica first: show
		// what was decided, change nothing.
		now, rerr := p.opts.Approvals.Approval(ctx, sess.OrgID, id)
		if rerr != nil {
			return p.failure(c, l, id, fmt.Errorf("reading approval %s: %w", id, rerr))
		}
		return p.renderOutcome(c, http.StatusConflict, l, chosen, &now, true)
	case errors.Is(err, store.ErrNotFound):
		return p.notFound(c, l, sess, id)
	case err != nil:
		return p.failure(c, l, id, fmt.Errorf("deciding approval %s: %w", id, err))
	}
	p.log.Info("approval page: decided", "approval_id", id, "org_id", sess.OrgID, "subject", sess.Subject,
		"tool", decided.Tool, "proceed", proceed, "status", decided.Status)
	return p.renderOutcome(c, http.StatusOK, l, chosen, &decided, false)
}

// sameUser reports whether the signed-in person is the approval's
// requester: same issuer and subject (docs/reference/confirmation.md). The organisation is
// already the session's: Approval looked it up there.
func sameUser(s *session, a *store.Approval) bool {
	return s.Issuer == a.Principal.Issuer && s.Subject == a.Principal.Subject && s.OrgID == a.OrgID
}

// Refuse answers c as the page does when its guard refuses a request: 403
// with the localized "request refused" notice. core/app calls it when the
// same guard, in front of the whole listener, refuses a request for the
// page, so that a person sees the page's own answer.
func (p *Page) Refuse(c echo.Context) error {
	return p.notice(c, http.StatusForbidden, pickLang(c, ""), noticeCrossSite, "")
}

// guarded applies the Host and Origin guard, if one is configured.
func (p *Page) guarded(c echo.Context) bool {
	return p.opts.Guard == nil || p.opts.Guard.Check(c.Request())
}

// sameOrigin reports whether a form post comes from the page itself: the
// browser's Fetch Metadata says same-origin (or is absent, for old
// browsers and non-browser tools), and an Origin, when sent, is exactly
// PublicURL's. Loopback pages on other ports are same-site, so SameSite
// cookies alone would not stop them.
func (p *Page) sameOrigin(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin":
	default:
		return false
	}
	origins := r.Header.Values("Origin")
	switch len(origins) {
	case 0:
		return true
	case 1:
		return strings.EqualFold(origins[0], p.publicURL.Scheme+"://"+p.publicURL.Host)
	}
	return false
}

// canonical returns where to send a GET that reached the server under
// another loopback name than PublicURL's (localhost instead of 127.0.0.1),
// so the sign-in starts and ends on one host. Only loopback hosts are
// redirected: behind a proxy the Host may legitimately differ, and
// redirecting there could loop.
func (p *Page) canonical(c echo.Context) (string, bool) {
	r := c.Request()
	if strings.EqualFold(r.Host, p.publicURL.Host) || !isLoopback(p.publicURL.Hostname()) {
		return "", false
	}
	host := r.Host
	if h, _, ok := strings.Cut(strings.TrimPrefix(host, "["), "]"); ok && strings.HasPrefix(host, "[") {
		host = h
	} else if i := strings.LastIndexByte(host, ':'); i >= 0 {
		host = host[:i]
	}
	if !isLoopback(host) {
		return "", false
	}
	return p.opts.PublicURL + r.URL.RequestURI(), true
}

func isLoopback(host string) bool {
	host = strings.ToLower(host)
	return host == "localhost" || host == "127.0.0.1" || host == "::1"
}

// chosenLang reads an explicit language choice (?lang= or the form's
// hidden field); "" when there is none.
func chosenLang(s string) lang {
	l, _ := parseLang(s)
	return l
}

// pickLang is the explicit choice, else the browser's Accept-Language.
func pickLang(c echo.Context, chosen lang) lang {
	if chosen != "" {
		return chosen
	}
	return negotiate(c.Request().Header.Get("Accept-Language"))
}

// approvalPath is the page's own link to approval id, keeping an explicit
// language choice.
func (p *Page) approvalPath(id string, chosen lang) string {
	u := approvePath + url.PathEscape(id)
	if chosen != "" {
		u += "?lang=" + string(chosen)
	}
	return u
}
