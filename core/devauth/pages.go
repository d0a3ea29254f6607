package devauth

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"html/template"
	"strings"

	"github.com/labstack/echo/v4"
)

// pages renders the server's HTML: the consent page and the error page.
// It is safe for concurrent use.
type pages struct {
	tmpl *template.Template // fixed at creation
}

func newPages() (*pages, error) {
	t, err := template.New("pages").Parse(pageTemplates)
	if err != nil {
		return nil, fmt.Errorf("parsing page templates: %w", err)
	}
	return &pages{tmpl: t}, nil
}

// consentData fills the consent template.
type consentData struct {
	Nonce       string // CSP nonce of the inline style
	ClientName  string
	Destination string
	Resource    string
	Issuer      string
	Scopes      []scopeView
	Roles       []roleView
	Form        string // sealed consentForm
	Input       consentInput
	Problem     string
}

type scopeView struct{ Name, Description string }

type roleView struct {
	Value    string
	Selected bool
}

// errorData fills the error template.
type errorData struct {
	Nonce       string
	Code        string
	Description string
}

// nonced is a page's data: it receives the CSP nonce before rendering.
type nonced interface{ setNonce(string) }

func (d *consentData) setNonce(n string) { d.Nonce = n }
func (d *errorData) setNonce(n string)   { d.Nonce = n }

// render writes template name with data and the page security headers.
// formTarget, if set, is a CSP source the page's form may redirect to.
func (p *pages) render(c echo.Context, status int, name, formTarget string, data nonced) error {
	nonce := base64.RawStdEncoding.EncodeToString(randomBytes(16))
	data.setNonce(nonce)
	var buf bytes.Buffer
	if err := p.tmpl.ExecuteTemplate(&buf, name, data); err != nil {
		return fmt.Errorf("rendering %s page: %w", name, err)
	}
	formAction := "'self'"
	if formTarget != "" {
		formAction += " " + formTarget
	}
	h := c.Response().Header()
	h.Set("Content-Security-Policy", strings.Join([]string{
		"default-src 'none'",
		"style-src 'nonce-" + nonce + "'",
		"img-src data:",
		"form-action " + formAction,
		"frame-ancestors 'none'",
		"base-uri 'none'",
	}, "; "))
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	noStore(c)
	return c.HTMLBlob(status, buf.Bytes())
}

// renderError shows an error that cannot be sent to the client's redirect
// URI, because that URI is unknown or untrusted.
func (s *Server) renderError(c echo.Context, status int, oe *oauthError) error {
	return s.pages.render(c, status, "error", "", &errorData{Code: oe.Code, Description: oe.Description})
}

// pageTemplates holds both pages. They need no JavaScript; html/template
// escapes every value.
const pageTemplates = `
{{define "head"}}<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>{{.}}</title>
{{end}}

{{define "style"}}<style nonce="{{.}}">
:root { color-scheme: light dark; --bg:#f4f5f7; --card:#fff; --ink:#1b1f24; --muted:#5b6470; --line:#dde1e6; --brand:#3b5bdb; --brand-ink:#fff; --warn:#fff4e5; --warn-ink:#8a4b00; --bad:#fdecec; --bad-ink:#a11; }
@media (prefers-color-scheme: dark) { :root { --bg:#111418; --card:#1a1e24; --ink:#e8eaed; --muted:#9aa3ad; --line:#2c323a; --brand:#5c7cfa; --warn:#2e2410; --warn-ink:#f0b35a; --bad:#3a1618; --bad-ink:#f19999; } }
* { box-sizing: border-box; }
body { margin:0; min-height:100vh; display:flex; flex-direction:column; align-items:center; justify-content:center; background:var(--bg); color:var(--ink); font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif; padding:24px; }
.brand { display:flex; align-items:center; gap:10px; font-weight:700; font-size:20px; letter-spacing:.02em; margin-bottom:18px; }
.logo { width:30px; height:30px; border-radius:8px; background:var(--brand); color:var(--brand-ink); display:grid; place-items:center; font-size:17px; }
.card { width:100%; max-width:460px; background:var(--card); border:1px solid var(--line); border-radius:14px; padding:28px; box-shadow:0 8px 28px rgba(0,0,0,.07); }
h1 { font-size:20px; margin:0 0 6px; line-height:1.3; }
.sub { color:var(--muted); margin:0 0 20px; overflow-wrap:anywhere; }
.badge { display:inline-block; font-size:12px; font-weight:600; padding:2px 8px; border-radius:999px; background:var(--warn); color:var(--warn-ink); margin-bottom:14px; }
ul.scopes { list-style:none; padding:0; margin:0 0 20px; border:1px solid var(--line); border-radius:10px; }
ul.scopes li { padding:10px 14px; border-top:1px solid var(--line); }
ul.scopes li:first-child { border-top:0; }
code { font:13px ui-monospace,SFMono-Regular,Menlo,monospace; }
.desc { display:block; color:var(--muted); font-size:13px; }
fieldset { border:0; padding:0; margin:0 0 20px; display:grid; gap:12px; }
legend { font-weight:600; margin-bottom:8px; }
label { display:grid; gap:4px; font-size:13px; color:var(--muted); }
input, select { font:inherit; color:var(--ink); background:var(--bg); border:1px solid var(--line); border-radius:8px; padding:8px 10px; }
.actions { display:flex; gap:10px; }
button { flex:1; font:inherit; font-weight:600; border-radius:8px; padding:10px 14px; cursor:pointer; border:1px solid var(--line); background:transparent; color:var(--ink); }
button.primary { background:var(--brand); border-color:var(--brand); color:var(--brand-ink); }
.problem { background:var(--bad); color:var(--bad-ink); border-radius:8px; padding:10px 14px; margin-bottom:16px; }
.foot { color:var(--muted); font-size:12px; margin-top:16px; text-align:center; max-width:460px; }
</style>
{{end}}

{{define "consent"}}{{template "head" "Sign in to Kadu"}}{{template "style" .Nonce}}</head>
<body>
<div class="brand"><span class="logo">K</span>Kadu</div>
<main class="card">
<span class="badge">Developer sign-in</span>
<h1>{{.ClientName}} wants to use Kadu</h1>
<p class="sub">After you decide, your browser returns to <code>{{.Destination}}</code>.</p>
{{if .Problem}}<p class="problem" role="alert">{{.Problem}}</p>{{end}}
<form method="post" action="/oauth/authorize">
<input type="hidden" name="form" value="{{.Form}}">
<p><strong>It asks to</strong></p>
<ul class="scopes">
{{range .Scopes}}<li><code>{{.Name}}</code><span class="desc">{{.Description}}</span></li>
{{end}}</ul>
<fieldset>
<legend>Sign in as</legend>
<label>User<input name="subject" value="{{.Input.Subject}}" required maxlength="128" autocomplete="off" spellcheck="false"></label>
<label>Organisation<input name="org" value="{{.Input.OrgID}}" required maxlength="64" autocomplete="off" spellcheck="false"></label>
<label>Role<select name="role">
{{range .Roles}}<option value="{{.Value}}"{{if .Selected}} selected{{end}}>{{.Value}}</option>
{{end}}</select></label>
</fieldset>
<div class="actions">
<button type="submit" name="decision" value="deny">Deny</button>
<button type="submit" name="decision" value="approve" class="primary" autofocus>Approve</button>
</div>
</form>
</main>
<p class="foot">Tokens are for <code>{{.Resource}}</code>, issued by the development authorization server at <code>{{.Issuer}}</code>. Anyone who reaches this page may sign in as anyone: never expose it beyond this machine.</p>
</body>
</html>
{{end}}

{{define "error"}}{{template "head" "Sign-in failed · Kadu"}}{{template "style" .Nonce}}</head>
<body>
<div class="brand"><span class="logo">K</span>Kadu</div>
<main class="card">
<h1>Sign-in could not continue</h1>
<p class="problem" role="alert">{{.Description}}</p>
<p class="sub">Error code: <code>{{.Code}}</code>. Return to your client and try signing in again.</p>
</main>
</body>
</html>
{{end}}
`
