package page

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/internal/fakeclock"
	"github.com/kobana/kadu/core/origin"
)

func TestGuardRefusesForeignHostsAndOrigins(t *testing.T) {
	policy, err := origin.NewPolicy("", true)
	if err != nil {
		t.Fatal(err)
	}
	env := newEnv(t, func(o *Options) { o.Guard = policy })
	a := env.pending("alice", "org_acme")
	b := env.browser(t)
	req, _ := http.NewRequest(http.MethodGet, env.srv.URL+approvePath+a.ID, nil)
	req.Host = "evil.example:80"
	if r := b.do(req); r.status != http.StatusForbidden {
		t.Errorf("DNS-rebinding Host: status %d, want 403", r.status)
	}
	req, _ = http.NewRequest(http.MethodGet, env.srv.URL+approvePath+a.ID, nil)
	req.Header.Set("Origin", "null")
	if r := b.do(req); r.status != http.StatusForbidden {
		t.Errorf("Origin: null: status %d, want 403", r.status)
	}
	if r := b.get(approvePath + a.ID); r.status != http.StatusSeeOther {
		t.Errorf("loopback Host: status %d, want 303 to sign in", r.status)
	}
}

func TestLoopbackAliasIsRedirectedToPublicURL(t *testing.T) {
	env := newEnv(t, nil)
	a := env.pending("alice", "org_acme")
	alias := strings.Replace(env.srv.URL, "127.0.0.1", "localhost", 1)
	r := env.browser(t).get(alias + approvePath + a.ID + "?lang=pt")
	if r.status != http.StatusSeeOther || r.loc != env.srv.URL+approvePath+a.ID+"?lang=pt" {
		t.Errorf("GET on localhost: status %d to %q, want 303 to the public URL", r.status, r.loc)
	}
}

func TestCallbackRefusals(t *testing.T) {
	env := newEnv(t, nil)
	a := env.pending("alice", "org_acme")
	tests := []struct {
		name       string
		query      func(state string) string
		wantStatus int
		wantText   string
	}{
		{"state mismatch", func(string) string { return "code=x&state=forged" }, http.StatusBadRequest, "started in another window"},
		{"declined at the issuer", func(s string) string { return "error=access_denied&state=" + s }, http.StatusForbidden, "You declined to sign in"},
		{"issuer error", func(s string) string { return "error=server_error&state=" + s }, http.StatusBadRequest, "(server_error)"},
		{"another issuer answered", func(s string) string { return "code=x&iss=https%3A%2F%2Fevil.example&state=" + s }, http.StatusBadRequest, "(invalid_issuer)"},
		{"bad code", func(s string) string { return "code=not-a-code&state=" + s }, http.StatusBadGateway, "(token)"},
		{"no code", func(s string) string { return "state=" + s }, http.StatusBadRequest, "(no code)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := env.browser(t)
			start := b.get(approvePath + a.ID)
			authz, _ := url.Parse(start.loc)
			r := b.get("/approve/callback?" + tt.query(authz.Query().Get("state")))
			if r.status != tt.wantStatus || !strings.Contains(r.body, tt.wantText) || !strings.Contains(r.body, "Nothing was done.") {
				t.Errorf("status %d, want %d with %q:\n%s", r.status, tt.wantStatus, tt.wantText, r.body)
			}
			if setCookie(r, sessionCookie) != nil {
				t.Errorf("a refused callback set a session")
			}
		})
	}
	// Without the sign-in cookie there is nothing to finish.
	if r := env.browser(t).get("/approve/callback?code=x&state=y"); r.status != http.StatusBadRequest {
		t.Errorf("callback without a sign-in: status %d, want 400", r.status)
	}
}

func TestCallbackIsSingleUse(t *testing.T) {
	env := newEnv(t, nil)
	a := env.pending("alice", "org_acme")
	b := env.browser(t)
	r := b.follow(b.get(approvePath + a.ID))
	m := regexp.MustCompile(`name="form" value="([^"]+)"`).FindStringSubmatch(r.body)
	consent := b.post("/oauth/authorize", url.Values{"form": {m[1]}, "decision": {"approve"},
		"subject": {"alice"}, "org": {"org_acme"}, "role": {"member"}}, nil)
	if first := b.get(consent.loc); first.status != http.StatusSeeOther {
		t.Fatalf("callback: status %d", first.status)
	}
	if again := b.get(consent.loc); again.status != http.StatusBadRequest {
		t.Errorf("the same callback again: status %d, want 400", again.status)
	}
}

func TestTamperedSessionStartsASignIn(t *testing.T) {
	env := newEnv(t, nil)
	a := env.pending("alice", "org_acme")
	b := env.browser(t)
	b.open(a.ID, "alice", "org_acme")
	u := mustURL(t, env.srv.URL+"/approve/")
	for _, ck := range b.c.Jar.Cookies(u) {
		if ck.Name == sessionCookie {
			ck.Value = ck.Value[:len(ck.Value)-3] + "AAA"
			ck.Path = "/approve"
			b.c.Jar.SetCookies(u, []*http.Cookie{ck})
		}
	}
	if r := b.get(approvePath + a.ID); r.status != http.StatusSeeOther {
		t.Errorf("tampered session: status %d, want 303 to sign in", r.status)
	}
}

func TestIssuerUnreachable(t *testing.T) {
	env := newEnv(t, func(o *Options) { o.Issuer = "http://127.0.0.1:1" })
	a := env.pending("alice", "org_acme")
	r := env.browser(t).get(approvePath + a.ID)
	if r.status != http.StatusServiceUnavailable || !strings.Contains(r.body, "Sign-in is unavailable") {
		t.Errorf("issuer unreachable: status %d, want 503 and a clear page:\n%s", r.status, r.body)
	}
}

func TestIssuerMetadataForAnotherIssuerIsRefused(t *testing.T) {
	// The embedded server's metadata names its own URL as issuer; a page
	// configured with a path under it must not trust it.
	env := newEnv(t, nil)
	env.page.endpoints.issuer = env.srv.URL + "/tenant"
	a := env.pending("alice", "org_acme")
	if r := env.browser(t).get(approvePath + a.ID); r.status != http.StatusServiceUnavailable {
		t.Errorf("metadata of another issuer: status %d, want 503", r.status)
	}
}

func TestRegistersItselfWhenNoClientIsConfigured(t *testing.T) {
	env := newEnv(t, func(o *Options) { o.ClientID = "" })
	a := env.pending("alice", "org_acme")
	page := env.browser(t).open(a.ID, "alice", "org_acme")
	if page.status != http.StatusOK || !strings.Contains(page.body, `value="continue"`) {
		t.Fatalf("sign-in with a registered client: status %d:\n%s", page.status, page.body)
	}
	first := env.page.reg.id
	if name, ok := env.dev.ClientName(first); !ok || name != "Kadu approval page" {
		t.Errorf("registered client %q: name %q, %v; want \"Kadu approval page\"", first, name, ok)
	}
	env.browser(t).open(a.ID, "alice", "org_acme")
	if env.page.reg.id != first {
		t.Errorf("a second sign-in registered again")
	}
}

func TestCallbackOnAnotherReplica(t *testing.T) {
	env := newEnv(t, func(o *Options) { o.ClientID = "" })
	replica, err := New(env.page.opts) // same key, no registration of its own yet
	if err != nil {
		t.Fatal(err)
	}
	e := echo.New()
	replica.Register(e)
	a := env.pending("alice", "org_acme")
	b := env.browser(t)
	consentPage := b.follow(b.get(approvePath + a.ID)) // replica 1 registers and starts
	m := regexp.MustCompile(`name="form" value="([^"]+)"`).FindStringSubmatch(consentPage.body)
	consent := b.post("/oauth/authorize", url.Values{"form": {m[1]}, "decision": {"approve"},
		"subject": {"alice"}, "org": {"org_acme"}, "role": {"member"}}, nil)

	req := httptest.NewRequest(http.MethodGet, consent.loc, nil)
	for _, ck := range b.c.Jar.Cookies(mustURL(t, env.srv.URL+"/approve/callback")) {
		req.AddCookie(ck)
	}
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	r := response{status: rec.Code, header: rec.Header()}
	if rec.Code != http.StatusSeeOther || setCookie(r, sessionCookie) == nil {
		t.Fatalf("callback on the other replica: status %d:\n%s", rec.Code, rec.Body)
	}
	if replica.reg.id != "" {
		t.Errorf("the other replica registered a client of its own to finish the sign-in")
	}
}

func TestNoRegistrationEndpoint(t *testing.T) {
	env := newEnv(t, func(o *Options) { o.ClientID = "" })
	ep, err := env.page.endpoints.get(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	ep.Registration = "" // as an issuer without RFC 7591 would publish
	a := env.pending("alice", "org_acme")
	if r := env.browser(t).get(approvePath + a.ID); r.status != http.StatusServiceUnavailable {
		t.Errorf("issuer without registration and no client configured: status %d, want 503", r.status)
	}
}

func TestOptionsNameTheField(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Options)
		want   string
	}{
		{"no public URL", func(o *Options) { o.PublicURL = "" }, "PublicURL: required"},
		{"public URL with a path", func(o *Options) { o.PublicURL = "https://kadu.example.com/x" }, "PublicURL: "},
		{"issuer not http", func(o *Options) { o.Issuer = "ftp://x" }, "Issuer: "},
		{"secret without a client", func(o *Options) { o.ClientID = ""; o.ClientSecret = "s" }, "ClientSecret: set without ClientID"},
		{"no MCP URL", func(o *Options) { o.MCPURL = "" }, "MCPURL: required"},
		{"no verifier", func(o *Options) { o.Verify = nil }, "Verify: required"},
		{"no approvals", func(o *Options) { o.Approvals = nil }, "Approvals: required"},
		{"short key", func(o *Options) { o.SealKey = []byte("short") }, "SealKey: want 32 bytes, got 5"},
		{"bad scope", func(o *Options) { o.Scopes = []string{"a b"} }, "Scopes[0]: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := validOptions()
			tt.mutate(&o)
			_, err := New(o)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New() error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
	if _, err := New(validOptions()); err != nil {
		t.Errorf("New(valid) error = %v", err)
	}
}

func validOptions() Options {
	return Options{
		PublicURL: "https://kadu.example.com/",
		Issuer:    "https://id.example.com",
		ClientID:  "approval-page",
		MCPURL:    "https://kadu.example.com/mcp",
		Verify:    func(context.Context, string) (*auth.Principal, error) { return nil, nil },
		Approvals: newFakeApprovals(fakeclock.New(time.Time{})),
		SealKey:   make([]byte, 32),
	}
}

func TestSecureCookiesOnHTTPS(t *testing.T) {
	p, err := New(validOptions())
	if err != nil {
		t.Fatal(err)
	}
	if !p.secure {
		t.Errorf("https PublicURL: cookies are not Secure")
	}
	if got := p.URL("apr_1"); got != "https://kadu.example.com/approve/apr_1" {
		t.Errorf("URL() = %q", got)
	}
}
