package devauth

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/kobana/kadu/core/internal/fakeclock"
)

func TestAuthorizeErrors(t *testing.T) {
	env := newTestEnv(t, func(o *Options) { o.ClientCredentialsRole = "viewer" })
	redirect := "http://127.0.0.1:33418/callback"
	cl := env.publicClient(t, redirect)
	two := env.register(t, map[string]any{"token_endpoint_auth_method": "none",
		"redirect_uris": []string{redirect, "https://vscode.dev/redirect"}})
	creds := env.register(t, map[string]any{"token_endpoint_auth_method": "client_secret_basic",
		"grant_types": []string{"client_credentials"}, "redirect_uris": []string{redirect}})
	_, challenge := pkce()

	base := func() url.Values {
		return url.Values{
			"client_id": {cl.ID}, "redirect_uri": {redirect}, "response_type": {"code"},
			"code_challenge": {challenge}, "code_challenge_method": {"S256"}, "state": {"xyz"},
		}
	}
	tests := []struct {
		name     string
		mutate   func(url.Values)
		wantPage string // error code shown on an HTML page, status 400
		wantErr  string // error code sent to the redirect URI
	}{
		{name: "no client_id", mutate: func(q url.Values) { q.Del("client_id") }, wantPage: "invalid_request"},
		{name: "forged client_id", mutate: func(q url.Values) { q.Set("client_id", cl.ID[:len(cl.ID)-2]+"AA") }, wantPage: "invalid_client"},
		{name: "unregistered redirect_uri", mutate: func(q url.Values) { q.Set("redirect_uri", "http://127.0.0.1:33418/other") }, wantPage: "invalid_request"},
		{name: "non-loopback redirect_uri", mutate: func(q url.Values) { q.Set("redirect_uri", "http://evil.example/callback") }, wantPage: "invalid_request"},
		{name: "repeated redirect_uri", mutate: func(q url.Values) { q.Add("redirect_uri", redirect) }, wantPage: "invalid_request"},
		{name: "no redirect_uri with two registered", mutate: func(q url.Values) { q.Set("client_id", two.ID); q.Del("redirect_uri") }, wantPage: "invalid_request"},
		{name: "no response_type", mutate: func(q url.Values) { q.Del("response_type") }, wantErr: "invalid_request"},
		{name: "token response_type", mutate: func(q url.Values) { q.Set("response_type", "token") }, wantErr: "unsupported_response_type"},
		{name: "client without the code grant", mutate: func(q url.Values) { q.Set("client_id", creds.ID) }, wantErr: "unauthorized_client"},
		{name: "no code_challenge", mutate: func(q url.Values) { q.Del("code_challenge") }, wantErr: "invalid_request"},
		{name: "plain PKCE", mutate: func(q url.Values) { q.Set("code_challenge_method", "plain") }, wantErr: "invalid_request"},
		{name: "no PKCE method", mutate: func(q url.Values) { q.Del("code_challenge_method") }, wantErr: "invalid_request"},
		{name: "short code_challenge", mutate: func(q url.Values) { q.Set("code_challenge", "abc") }, wantErr: "invalid_request"},
		{name: "other resource", mutate: func(q url.Values) { q.Set("resource", "https://other.example/mcp") }, wantErr: "invalid_target"},
		{name: "unknown scope", mutate: func(q url.Values) { q.Set("scope", "kadu.read kadu.everything") }, wantErr: "invalid_scope"},
		{name: "prompt=none needs consent", mutate: func(q url.Values) { q.Set("prompt", "none") }, wantErr: "consent_required"},
		{name: "repeated scope", mutate: func(q url.Values) { q.Set("scope", "kadu.read"); q.Add("scope", "kadu.run") }, wantErr: "invalid_request"},
	}
	c := browser(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := base()
			tt.mutate(q)
			resp, body := get(t, c, env.issuer+pathAuthorize+"?"+q.Encode())
			if tt.wantPage != "" {
				if resp.StatusCode != http.StatusBadRequest {
					t.Fatalf("status %d, want 400 page", resp.StatusCode)
				}
				if !strings.Contains(body, tt.wantPage) || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
					t.Fatalf("page does not show %s:\n%s", tt.wantPage, body)
				}
				return
			}
			if resp.StatusCode != http.StatusFound {
				t.Fatalf("status %d, want 302; body %s", resp.StatusCode, body)
			}
			loc := location(t, resp)
			got := loc.Query()
			if got.Get("error") != tt.wantErr || got.Get("state") != "xyz" || got.Get("iss") != env.issuer {
				t.Fatalf("redirect %s, want error=%s with state and iss", loc, tt.wantErr)
			}
			if !strings.HasPrefix(loc.String(), "http://127.0.0.1:33418/callback?") {
				t.Fatalf("redirected to %s, want the client's redirect URI", loc)
			}
		})
	}
}

func TestAuthorizeLoopbackAnyPort(t *testing.T) {
	env := newTestEnv(t, func(o *Options) { o.AutoApprove = true })
	cl := env.publicClient(t, "http://127.0.0.1:33418/callback")
	_, challenge := pkce()
	for _, redirect := range []string{"http://127.0.0.1:54321/callback", "http://127.0.0.1/callback", "http://127.0.0.1:33418/callback"} {
		resp, body := get(t, browser(t), env.authorizeURL(cl.ID, redirect, challenge, "s", nil))
		if resp.StatusCode != http.StatusFound {
			t.Fatalf("%s: status %d, body %s", redirect, resp.StatusCode, body)
		}
		loc := location(t, resp)
		if loc.Query().Get("code") == "" || !strings.HasPrefix(loc.String(), redirect+"?") {
			t.Fatalf("%s: redirected to %s, want a code at the requested port", redirect, loc)
		}
	}
}

func TestConsentPage(t *testing.T) {
	env := newTestEnv(t, nil)
	cl := env.register(t, map[string]any{"client_name": `<script>alert("x")</script>`, "token_endpoint_auth_method": "none",
		"redirect_uris": []string{"http://localhost:6274/oauth/callback"}})
	_, challenge := pkce()
	resp, page := get(t, browser(t), env.authorizeURL(cl.ID, "http://localhost:6274/oauth/callback", challenge, "s",
		url.Values{"scope": {"kadu.read kadu.run offline_access"}}))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	h := resp.Header
	if h.Get("Cache-Control") != "no-store" || h.Get("X-Frame-Options") != "DENY" {
		t.Errorf("Cache-Control %q, X-Frame-Options %q; want no-store, DENY", h.Get("Cache-Control"), h.Get("X-Frame-Options"))
	}
	csp := h.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "frame-ancestors 'none'", "form-action 'self' http://localhost:*", "style-src 'nonce-"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if strings.Contains(page, "<script>") {
		t.Errorf("client name not escaped:\n%s", page)
	}
	for _, want := range []string{"&lt;script&gt;", "kadu.read", "kadu.run", `value="dev-user"`, `value="org_dev"`,
		`<option value="owner" selected>`, `<option value="viewer">`, `value="approve"`, `value="deny"`} {
		if !strings.Contains(page, want) {
			t.Errorf("consent page lacks %q", want)
		}
	}
	if strings.Contains(page, "kadu.write") || strings.Contains(page, "offline_access") {
		t.Errorf("consent page shows scopes that were not requested")
	}
	if ck := resp.Cookies(); len(ck) != 1 || ck[0].Name != csrfCookie || !ck[0].HttpOnly || ck[0].SameSite != http.SameSiteStrictMode {
		t.Errorf("cookies = %v, want one HttpOnly SameSite=Strict %s", ck, csrfCookie)
	}
}

func TestConsentDecisions(t *testing.T) {
	clock := fakeclock.New(time.Now())
	env := newTestEnv(t, func(o *Options) { o.Now = clock.Now })
	redirect := "http://127.0.0.1:40000/cb"
	cl := env.publicClient(t, redirect)
	_, challenge := pkce()

	// open loads a consent page in a fresh browser.
	open := func(t *testing.T) (*http.Client, string) {
		c := browser(t)
		resp, page := get(t, c, env.authorizeURL(cl.ID, redirect, challenge, "st", nil))
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d", resp.StatusCode)
		}
		return c, consentToken(t, page)
	}
	approve := func(token string) url.Values {
		return url.Values{"form": {token}, "decision": {"approve"}, "subject": {"bob"}, "org": {"org_x"}, "role": {"admin"}}
	}

	t.Run("approve", func(t *testing.T) {
		c, token := open(t)
		resp, _ := env.submitConsent(t, c, approve(token))
		q := location(t, resp).Query()
		if resp.StatusCode != http.StatusSeeOther || q.Get("code") == "" || q.Get("state") != "st" || q.Get("iss") != env.issuer {
			t.Fatalf("status %d, query %v; want 303 with code, state, iss", resp.StatusCode, q)
		}
	})
	t.Run("deny", func(t *testing.T) {
		c, token := open(t)
		resp, _ := env.submitConsent(t, c, url.Values{"form": {token}, "decision": {"deny"}})
		q := location(t, resp).Query()
		if q.Get("error") != "access_denied" || q.Get("code") != "" || q.Get("state") != "st" || q.Get("iss") != env.issuer {
			t.Fatalf("query %v, want error=access_denied with state and iss", q)
		}
	})
	t.Run("invalid org shows the form again", func(t *testing.T) {
		c, token := open(t)
		form := approve(token)
		form.Set("org", "has space")
		resp, page := env.submitConsent(t, c, form)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(page, "Organisation:") || !strings.Contains(page, `value="has space"`) {
			t.Fatalf("status %d, page:\n%s", resp.StatusCode, page)
		}
		resp, _ = env.submitConsent(t, c, approve(consentToken(t, page)))
		if location(t, resp).Query().Get("code") == "" {
			t.Fatalf("resubmitted form gave no code")
		}
	})
	t.Run("org id with dots shows the form again", func(t *testing.T) {
		c, token := open(t)
		form := approve(token)
		form.Set("org", "a..b")
		resp, page := env.submitConsent(t, c, form)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(page, "Organisation:") || !strings.Contains(page, "letters, digits") {
			t.Fatalf("status %d, page:\n%s", resp.StatusCode, page)
		}
	})

	forged := []struct {
		name       string
		submit     func(t *testing.T) *http.Response
		wantStatus int
	}{
		{"tampered form token", func(t *testing.T) *http.Response {
			c, token := open(t)
			b := []byte(token)
			b[len(b)/2] ^= 1
			resp, _ := env.submitConsent(t, c, approve(string(b)))
			return resp
		}, http.StatusBadRequest},
		{"form token from another browser", func(t *testing.T) *http.Response {
			_, token := open(t)
			other, _ := open(t)
			resp, _ := env.submitConsent(t, other, approve(token))
			return resp
		}, http.StatusForbidden},
		{"no CSRF cookie", func(t *testing.T) *http.Response {
			_, token := open(t)
			resp, _ := env.submitConsent(t, browser(t), approve(token))
			return resp
		}, http.StatusForbidden},
		{"cross-site submission", func(t *testing.T) *http.Response {
			c, token := open(t)
			req, _ := http.NewRequest(http.MethodPost, env.issuer+pathAuthorize, strings.NewReader(approve(token).Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Sec-Fetch-Site", "cross-site")
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp
		}, http.StatusForbidden},
		{"expired form token", func(t *testing.T) *http.Response {
			c, token := open(t)
			clock.Advance(consentTTL + time.Minute)
			defer clock.Advance(-consentTTL - time.Minute)
			resp, _ := env.submitConsent(t, c, approve(token))
			return resp
		}, http.StatusBadRequest},
	}
	for _, tt := range forged {
		t.Run(tt.name, func(t *testing.T) {
			resp := tt.submit(t)
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.wantStatus)
			}
			if loc := resp.Header.Get("Location"); loc != "" {
				t.Fatalf("forged consent redirected to %s", loc)
			}
		})
	}
}
