package page

import (
	"bytes"
	"context"
	"crypto/rand"
	"embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/kobana/kadu/core/store"
)

//go:embed templates/*.html
var templateFS embed.FS

// Page names: each is templates/<name>.html, rendered inside layout.html.
const (
	tmplApproval = "approval"
	tmplOutcome  = "outcome"
	tmplNotice   = "notice"
)

// templates holds one parsed set per page. Immutable after
// parseTemplates; safe for concurrent use.
type templates struct {
	byName map[string]*template.Template
}

func parseTemplates() (*templates, error) {
	t := &templates{byName: map[string]*template.Template{}}
	for _, name := range []string{tmplApproval, tmplOutcome, tmplNotice} {
		set, err := template.ParseFS(templateFS, "templates/layout.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("parsing the %s page: %w", name, err)
		}
		t.byName[name] = set
	}
	return t, nil
}

// view fills layout.html; exactly one of Approval, Outcome and Notice is
// set.
type view struct {
	HTMLLang    string
	T           *text
	Nonce       string // CSP nonce of the inline style
	Title       string
	SwitchURL   string // the same page in the other language; "" hides the link
	SwitchLabel string
	SwitchLang  string

	Approval *approvalView
	Outcome  *outcomeView
	Notice   *noticeView
}

// approvalView is a pending approval, as the decision page shows it.
type approvalView struct {
	Describe     []span
	ClientName   string // registered name; "" when unknown
	ClientID     string // shortened for display
	ClientIDFull string
	Reported     string // the clientInfo sentence, or ""
	OrgID        string
	Subject      string
	ToolTitle    string
	Tool         string
	Expires      string
	ExpiresISO   string
	Arguments    string // indented JSON, as data
	Action       string // the form's action
	Form         string // sealed formToken
	Lang         string // explicit language choice, carried by the form
	SwitchUser   string
}

// outcomeView is a decided approval.
type outcomeView struct {
	Kind      string // "done", "failed" or "cancelled": the page's accent
	Heading   string
	Lead      string
	Earlier   string // set when the decision was taken before this visit
	Result    summary
	ShowClose bool
}

// noticeView is a page that explains why nothing can be done.
type noticeView struct {
	Heading   string
	Text      string
	LinkURL   string
	LinkLabel string
}

func (p *Page) newView(l lang, title, switchURL string) *view {
	t := texts[l]
	v := &view{HTMLLang: l.htmlLang(), T: t, Title: title}
	if switchURL != "" {
		o := l.other()
		v.SwitchURL, v.SwitchLabel, v.SwitchLang = switchURL, texts[o].Language, o.htmlLang()
	}
	return v
}

// switchURL is approval id's page in the other language, or "" without an
// approval.
func (p *Page) switchURL(id string, l lang) string {
	if id == "" {
		return ""
	}
	return p.approvalPath(id, l.other())
}

// render writes page name with v and the page security headers.
func (p *Page) render(c echo.Context, status int, name string, v *view) error {
	nonce := make([]byte, 16)
	rand.Read(nonce)
	v.Nonce = base64.RawURLEncoding.EncodeToString(nonce) // no "+": html/template would escape it
	var buf bytes.Buffer
	if err := p.tmpl.byName[name].ExecuteTemplate(&buf, "layout", v); err != nil {
		return fmt.Errorf("rendering the %s page: %w", name, err)
	}
	h := c.Response().Header()
	h.Set("Content-Security-Policy", strings.Join([]string{
		"default-src 'none'",
		"style-src 'nonce-" + v.Nonce + "'",
		"img-src data:",
		"form-action 'self'",
		"frame-ancestors 'none'",
		"base-uri 'none'",
	}, "; "))
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	// same-origin, not no-referrer: with no-referrer a browser sends
	// "Origin: null" on the form post, which sameOrigin must refuse.
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Vary", "Accept-Language, Cookie")
	noStore(c)
	return c.HTMLBlob(status, buf.Bytes())
}

// renderApproval shows a pending approval with its Continue and Cancel
// form.
func (p *Page) renderApproval(c echo.Context, l, chosen lang, sess *session, a *store.Approval) error {
	form, err := p.formFor(sess, a.ID)
	if err != nil {
		return p.failure(c, l, a.ID, err)
	}
	t := texts[l]
	title := toolTitle(a)
	clientID := a.ClientID
	if clientID == "" {
		clientID = a.Principal.ClientID
	}
	av := &approvalView{
		Describe:     emphasis(p.describe(c.Request().Context(), a, l)),
		ClientIDFull: clientID,
		ClientID:     shortID(clientID),
		OrgID:        a.OrgID,
		Subject:      sess.Subject,
		ToolTitle:    title,
		Tool:         a.Tool,
		Expires:      t.expiry(a.ExpiresAt, p.now()),
		ExpiresISO:   a.ExpiresAt.UTC().Format("2006-01-02T15:04:05Z"),
		Arguments:    indent(a.Arguments),
		Action:       approvePath + a.ID,
		Form:         form,
		Lang:         string(chosen),
		SwitchUser:   p.switchUserPath(a.ID, chosen),
	}
	if p.opts.ClientNames != nil {
		if name, ok := p.opts.ClientNames(clientID); ok {
			av.ClientName = clip(name, maxFieldLen)
		}
	}
	if reported := strings.TrimSpace(a.ClientName); reported != "" {
		av.Reported = fmt.Sprintf(t.ReportedF, clip(reported, maxFieldLen))
	}
	v := p.newView(l, t.ApproveTitle, p.switchURL(a.ID, l))
	v.Approval = av
	return p.render(c, http.StatusOK, tmplApproval, v)
}

// renderOutcome shows a decided approval: the result of a run, a failure,
// or a cancellation. earlier marks a decision taken before this request.
func (p *Page) renderOutcome(c echo.Context, status int, l, chosen lang, a *store.Approval, earlier bool) error {
	t := texts[l]
	title := toolTitle(a)
	ov := &outcomeView{}
	switch {
	case a.Status == store.ApprovalCancelled:
		ov.Kind, ov.Heading, ov.Lead = "cancelled", t.CancelledTitle, t.CancelledLead
		if earlier {
			ov.Earlier = t.CancelledEarlier
		}
	case a.Status == store.ApprovalApproved && a.Outcome == nil:
		// Decided on another request that is still running the call.
		ov.Kind, ov.Heading, ov.Lead = "done", t.RunningTitle, fmt.Sprintf(t.RunningLeadF, title)
	default:
		ov.Result = summarize(a.Outcome, a.Status == store.ApprovalFailed)
		ov.ShowClose = true
		if ov.Result.Failed {
			ov.Kind, ov.Heading, ov.Lead = "failed", t.FailedTitle, fmt.Sprintf(t.FailedLeadF, title)
			if earlier {
				ov.Earlier = t.FailedEarlier
			}
		} else {
			ov.Kind, ov.Heading, ov.Lead = "done", t.DoneTitle, fmt.Sprintf(t.DoneLeadF, title)
			if earlier {
				ov.Earlier = t.ApprovedEarlier
			}
		}
	}
	v := p.newView(l, ov.Heading, p.switchURL(a.ID, l))
	v.Outcome = ov
	return p.render(c, status, tmplOutcome, v)
}

// Notices: why nothing can be done, and what to do instead.
type noticeKind int

const (
	noticeNotALink noticeKind = iota
	noticeExpired
	noticeSessionExpired
	noticeFormInvalid
	noticeCrossSite
	noticeUnavailable
	noticeBadForm
)

// notice renders a notice page about approval id ("" when unknown).
func (p *Page) notice(c echo.Context, status int, l lang, kind noticeKind, id string) error {
	t := texts[l]
	nv := &noticeView{}
	again := ""
	if id != "" {
		again = p.approvalPath(id, "")
	}
	switch kind {
	case noticeNotALink:
		nv.Heading, nv.Text = t.NotFoundTitle, t.NotFoundAnonText
	case noticeExpired:
		nv.Heading, nv.Text = t.ExpiredTitle, t.ExpiredText
	case noticeSessionExpired:
		nv.Heading, nv.Text, nv.LinkURL, nv.LinkLabel = t.SessionExpiredTitle, t.SessionExpiredText, again, t.SignInAgain
	case noticeFormInvalid:
		nv.Heading, nv.Text, nv.LinkURL, nv.LinkLabel = t.FormInvalidTitle, t.FormInvalidText, again, t.OpenAgain
	case noticeCrossSite:
		nv.Heading, nv.Text = t.CrossSiteTitle, t.CrossSiteText
	case noticeUnavailable:
		nv.Heading, nv.Text, nv.LinkURL, nv.LinkLabel = t.UnavailableTitle, t.UnavailableText, again, t.SignInAgain
	case noticeBadForm:
		nv.Heading, nv.Text, nv.LinkURL, nv.LinkLabel = t.BadFormTitle, t.BadFormText, again, t.OpenAgain
	}
	return p.renderNotice(c, status, l, id, nv)
}

func (p *Page) renderNotice(c echo.Context, status int, l lang, id string, nv *noticeView) error {
	v := p.newView(l, nv.Heading, p.switchURL(id, l))
	v.Notice = nv
	return p.render(c, status, tmplNotice, v)
}

// notFound explains an unknown approval, or one of another organisation
// than the session's, offering to sign in again.
func (p *Page) notFound(c echo.Context, l lang, sess *session, id string) error {
	t := texts[l]
	return p.renderNotice(c, http.StatusNotFound, l, id, &noticeView{
		Heading:   t.NotFoundTitle,
		Text:      fmt.Sprintf(t.NotFoundTextF, sess.OrgID),
		LinkURL:   p.switchUserPath(id, ""),
		LinkLabel: t.SignInOther,
	})
}

// refused explains that the signed-in person is not the requester.
func (p *Page) refused(c echo.Context, l lang, sess *session, a *store.Approval) error {
	p.log.Warn("approval page: refused: signed in as someone other than the requester",
		"approval_id", a.ID, "org_id", a.OrgID, "subject", sess.Subject, "issuer", sess.Issuer)
	t := texts[l]
	return p.renderNotice(c, http.StatusForbidden, l, a.ID, &noticeView{
		Heading:   t.RefusedTitle,
		Text:      fmt.Sprintf(t.RefusedTextF, sess.Subject),
		LinkURL:   p.switchUserPath(a.ID, ""),
		LinkLabel: t.SignInOther,
	})
}

// signInFailed explains a sign-in that did not complete; what is a
// sentence of texts[l].
func (p *Page) signInFailed(c echo.Context, status int, chosen lang, id, what string) error {
	l := pickLang(c, chosen)
	t := texts[l]
	nv := &noticeView{Heading: t.SignInFailedTitle, Text: what}
	if store.ValidID(store.PrefixApproval, id) {
		nv.LinkURL, nv.LinkLabel = p.approvalPath(id, chosen), t.SignInAgain
	} else {
		id = ""
	}
	return p.renderNotice(c, status, l, id, nv)
}

// failure logs err and tells the person something went wrong on the
// server's side.
func (p *Page) failure(c echo.Context, l lang, id string, err error) error {
	p.log.Error("approval page: failed", "approval_id", id, "error", err)
	t := texts[l]
	nv := &noticeView{Heading: t.ErrorTitle, Text: t.ErrorText}
	if id != "" {
		nv.LinkURL, nv.LinkLabel = p.approvalPath(id, ""), t.OpenAgain
	}
	return p.renderNotice(c, http.StatusInternalServerError, l, id, nv)
}

// switchUserPath signs out and starts a fresh sign-in for approval id.
func (p *Page) switchUserPath(id string, chosen lang) string {
	u := approvePath + id + "?switch=1"
	if chosen != "" {
		u += "&lang=" + string(chosen)
	}
	return u
}

// describe says in plain words what a will do.
func (p *Page) describe(ctx context.Context, a *store.Approval, l lang) string {
	if p.opts.Describe != nil {
		if s := strings.TrimSpace(p.opts.Describe(ctx, *a, string(l))); s != "" {
			return s
		}
	}
	return toolTitle(a)
}

// span is a run of text, emphasised or not. Templates escape it.
type span struct {
	Text string
	Em   bool
}

// emphasis turns the one *emphasised* run a description may carry (the
// confirmer writes "Run task *Conciliação diária* …" for chats) into a
// span the page shows in italics. Any other number of asterisks is shown
// as it is: a name that contains one must not shift the emphasis.
func emphasis(s string) []span {
	if strings.Count(s, "*") != 2 {
		return []span{{Text: s}}
	}
	before, rest, _ := strings.Cut(s, "*")
	em, after, _ := strings.Cut(rest, "*")
	if strings.TrimSpace(em) == "" {
		return []span{{Text: s}}
	}
	var out []span
	for _, sp := range []span{{Text: before}, {Text: em, Em: true}, {Text: after}} {
		if sp.Text != "" {
			out = append(out, sp)
		}
	}
	return out
}

func toolTitle(a *store.Approval) string {
	if a.ToolTitle != "" {
		return a.ToolTitle
	}
	return a.Tool
}

// shortID shortens a long client_id (the embedded server's are a few
// hundred characters) to its two ends.
func shortID(id string) string {
	const keep = 12
	r := []rune(strings.ToValidUTF8(id, "\uFFFD"))
	if len(r) <= 2*keep+1 {
		return string(r)
	}
	return string(r[:keep]) + "…" + string(r[len(r)-keep:])
}

// noStore marks a response as never cacheable.
func noStore(c echo.Context) {
	h := c.Response().Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Pragma", "no-cache")
}
