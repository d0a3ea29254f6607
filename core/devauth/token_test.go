package devauth

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	jose "github.com/go-jose/go-jose/v4"

	"github.com/kobana/kadu/core/internal/fakeclock"
)

// tokenClaims are the claims tests read from an access token.
type tokenClaims struct {
	ClientID string `json:"client_id"`
	Scope    string `json:"scope"`
	OrgID    string `json:"org_id"`
	Role     string `json:"role"`
	JTI      string `json:"jti"`
	NBF      int64  `json:"nbf"`
	IAT      int64  `json:"iat"`
}

// verify checks tok the way core/auth does (go-oidc with the in-process key
// set, audience = env.resource, pinned algorithms) and that it is an at+jwt
// with a kid.
func verify(t *testing.T, s *Server, issuer, audience, tok string) (*oidc.IDToken, tokenClaims) {
	t.Helper()
	v := oidc.NewVerifier(issuer, s.KeySet(), &oidc.Config{ClientID: audience, SupportedSigningAlgs: s.Algorithms()})
	idt, err := v.Verify(context.Background(), tok)
	if err != nil {
		t.Fatalf("token does not verify: %v", err)
	}
	jws, err := jose.ParseSigned(tok, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		t.Fatal(err)
	}
	h := jws.Signatures[0].Header
	if h.ExtraHeaders[jose.HeaderType] != "at+jwt" || h.KeyID == "" {
		t.Errorf("header typ %v, kid %q; want at+jwt with a kid", h.ExtraHeaders[jose.HeaderType], h.KeyID)
	}
	var c tokenClaims
	if err := idt.Claims(&c); err != nil {
		t.Fatal(err)
	}
	if c.JTI == "" || c.NBF == 0 || c.IAT == 0 {
		t.Errorf("claims %+v lack jti, nbf or iat", c)
	}
	return idt, c
}

func TestAuthorizationCodeFlow(t *testing.T) {
	env := newTestEnv(t, nil)
	redirect := "http://127.0.0.1:33418/callback"
	cl := env.publicClient(t, redirect)
	verifier, challenge := pkce()
	code := env.approvedCode(t, cl.ID, redirect, challenge, nil)

	status, got := env.tokenRequest(t, url.Values{
		"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirect},
		"code_verifier": {verifier}, "client_id": {cl.ID}, "resource": {env.resource},
	}, "", "")
	if status != http.StatusOK {
		t.Fatalf("status %d: %v", status, got)
	}
	if got["token_type"] != "Bearer" || got["expires_in"] != float64(3600) || got["refresh_token"] == nil {
		t.Errorf("response %v, want Bearer, expires_in 3600, a refresh_token", got)
	}
	if got["scope"] != "kadu.read kadu.write kadu.run kadu.admin" {
		t.Errorf("scope = %v, want every supported scope", got["scope"])
	}
	idt, claims := verify(t, env.s, env.issuer, env.resource, got["access_token"].(string))
	if idt.Subject != "alice" || claims.OrgID != "org_acme" || claims.Role != "member" || claims.ClientID != cl.ID {
		t.Errorf("sub %q, claims %+v; want alice in org_acme as member for the client", idt.Subject, claims)
	}
	if len(idt.Audience) != 1 || idt.Audience[0] != env.resource {
		t.Errorf("aud = %v, want [%s]", idt.Audience, env.resource)
	}
}

func TestAuthorizationCodeRefused(t *testing.T) {
	env := newTestEnv(t, nil)
	redirect := "http://127.0.0.1:33418/callback"
	cl := env.publicClient(t, redirect)
	other := env.publicClient(t, redirect)

	tests := []struct {
		name    string
		mutate  func(form url.Values)
		twice   bool // exchange once successfully first
		wantErr string
		wantSt  int
	}{
		{name: "wrong code_verifier", mutate: func(f url.Values) { v, _ := pkce(); f.Set("code_verifier", v) }, wantErr: "invalid_grant"},
		{name: "no code_verifier", mutate: func(f url.Values) { f.Del("code_verifier") }, wantErr: "invalid_request"},
		{name: "reused code", twice: true, wantErr: "invalid_grant"},
		{name: "wrong redirect_uri", mutate: func(f url.Values) { f.Set("redirect_uri", "http://127.0.0.1:33419/callback") }, wantErr: "invalid_grant"},
		{name: "missing redirect_uri", mutate: func(f url.Values) { f.Del("redirect_uri") }, wantErr: "invalid_grant"},
		{name: "forged code", mutate: func(f url.Values) { f.Set("code", f.Get("code")[:20]+"x") }, wantErr: "invalid_grant"},
		{name: "other client", mutate: func(f url.Values) { f.Set("client_id", other.ID) }, wantErr: "invalid_grant"},
		{name: "unknown client", mutate: func(f url.Values) { f.Set("client_id", "nope") }, wantErr: "invalid_client", wantSt: 401},
		{name: "no client", mutate: func(f url.Values) { f.Del("client_id") }, wantErr: "invalid_client", wantSt: 401},
		{name: "secret for a public client", mutate: func(f url.Values) { f.Set("client_secret", "s") }, wantErr: "invalid_client", wantSt: 401},
		{name: "other resource", mutate: func(f url.Values) { f.Set("resource", "https://elsewhere.example/mcp") }, wantErr: "invalid_target"},
		{name: "no grant_type", mutate: func(f url.Values) { f.Del("grant_type") }, wantErr: "invalid_request"},
		{name: "password grant", mutate: func(f url.Values) { f.Set("grant_type", "password") }, wantErr: "unsupported_grant_type"},
		{name: "repeated code", mutate: func(f url.Values) { f.Add("code", "x") }, wantErr: "invalid_request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			verifier, challenge := pkce()
			code := env.approvedCode(t, cl.ID, redirect, challenge, nil)
			form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirect},
				"code_verifier": {verifier}, "client_id": {cl.ID}}
			if tt.twice {
				if status, got := env.tokenRequest(t, form, "", ""); status != http.StatusOK {
					t.Fatalf("first exchange: %d %v", status, got)
				}
			}
			if tt.mutate != nil {
				tt.mutate(form)
			}
			wantSt := tt.wantSt
			if wantSt == 0 {
				wantSt = http.StatusBadRequest
			}
			status, got := env.tokenRequest(t, form, "", "")
			if status != wantSt || got["error"] != tt.wantErr {
				t.Fatalf("got %d %v, want %d %s", status, got, wantSt, tt.wantErr)
			}
		})
	}
}

func TestCodeExpires(t *testing.T) {
	clock := fakeclock.New(time.Now())
	env := newTestEnv(t, func(o *Options) { o.Now = clock.Now })
	redirect := "http://127.0.0.1:33418/callback"
	cl := env.publicClient(t, redirect)
	verifier, challenge := pkce()
	code := env.approvedCode(t, cl.ID, redirect, challenge, nil)
	clock.Advance(codeTTL + 2*time.Second)
	status, got := env.tokenRequest(t, url.Values{"grant_type": {"authorization_code"}, "code": {code},
		"redirect_uri": {redirect}, "code_verifier": {verifier}, "client_id": {cl.ID}}, "", "")
	if status != http.StatusBadRequest || got["error"] != "invalid_grant" {
		t.Fatalf("got %d %v, want invalid_grant", status, got)
	}
}

func TestCodeDoesNotSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	env1 := newTestEnv(t, func(o *Options) { o.DataDir = dir })
	redirect := "http://127.0.0.1:33418/callback"
	cl := env1.publicClient(t, redirect)
	verifier, challenge := pkce()
	code := env1.approvedCode(t, cl.ID, redirect, challenge, nil)

	env2 := newTestEnv(t, func(o *Options) { o.DataDir = dir })
	status, got := env2.tokenRequest(t, url.Values{"grant_type": {"authorization_code"}, "code": {code},
		"redirect_uri": {redirect}, "code_verifier": {verifier}, "client_id": {cl.ID}}, "", "")
	if status != http.StatusBadRequest || got["error"] != "invalid_grant" {
		t.Fatalf("got %d %v, want invalid_grant", status, got)
	}
}

func TestRefreshRotation(t *testing.T) {
	env := newTestEnv(t, nil)
	redirect := "http://127.0.0.1:33418/callback"
	cl := env.publicClient(t, redirect)
	verifier, challenge := pkce()
	code := env.approvedCode(t, cl.ID, redirect, challenge, url.Values{"role": {"viewer"}})
	_, first := env.tokenRequest(t, url.Values{"grant_type": {"authorization_code"}, "code": {code},
		"redirect_uri": {redirect}, "code_verifier": {verifier}, "client_id": {cl.ID}}, "", "")
	rt1 := first["refresh_token"].(string)

	refresh := func(rt string, extra url.Values) (int, map[string]any) {
		form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}, "client_id": {cl.ID}}
		for k, v := range extra {
			form[k] = v
		}
		return env.tokenRequest(t, form, "", "")
	}

	status, second := refresh(rt1, url.Values{"scope": {"kadu.read"}, "resource": {env.resource + "/"}})
	if status != http.StatusOK {
		t.Fatalf("refresh: %d %v", status, second)
	}
	rt2, _ := second["refresh_token"].(string)
	if rt2 == "" || rt2 == rt1 {
		t.Fatalf("refresh token not rotated")
	}
	if second["scope"] != "kadu.read" {
		t.Errorf("narrowed scope = %v, want kadu.read", second["scope"])
	}
	idt, claims := verify(t, env.s, env.issuer, env.resource, second["access_token"].(string))
	if idt.Subject != "alice" || claims.OrgID != "org_acme" || claims.Role != "viewer" || claims.Scope != "kadu.read" {
		t.Errorf("refreshed token sub %q claims %+v; want alice, org_acme, viewer, kadu.read", idt.Subject, claims)
	}

	// Narrowing applies to the access token only: the new refresh token can
	// still ask for the original scopes.
	status, third := refresh(rt2, url.Values{"scope": {"kadu.admin"}})
	if status != http.StatusOK || third["scope"] != "kadu.admin" {
		t.Fatalf("refresh with an original scope: %d %v", status, third)
	}
	rt3 := third["refresh_token"].(string)

	if status, got := refresh(rt3, url.Values{"scope": {"kadu.nope"}}); status != http.StatusBadRequest || got["error"] != "invalid_scope" {
		t.Errorf("unknown scope: %d %v, want invalid_scope", status, got)
	}
	other := env.publicClient(t, redirect)
	if status, got := env.tokenRequest(t, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt3}, "client_id": {other.ID}}, "", ""); status != http.StatusBadRequest || got["error"] != "invalid_grant" {
		t.Errorf("other client: %d %v, want invalid_grant", status, got)
	}

	// Replaying a rotated token fails and cuts off the whole family.
	if status, got := refresh(rt1, nil); status != http.StatusBadRequest || got["error"] != "invalid_grant" {
		t.Fatalf("old refresh token: %d %v, want invalid_grant", status, got)
	}
	if status, got := refresh(rt3, nil); status != http.StatusBadRequest || got["error"] != "invalid_grant" {
		t.Fatalf("latest refresh token after a replay: %d %v, want invalid_grant", status, got)
	}
}

func TestRefreshSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	env1 := newTestEnv(t, func(o *Options) { o.DataDir = dir })
	redirect := "http://127.0.0.1:33418/callback"
	cl := env1.publicClient(t, redirect)
	verifier, challenge := pkce()
	code := env1.approvedCode(t, cl.ID, redirect, challenge, nil)
	_, first := env1.tokenRequest(t, url.Values{"grant_type": {"authorization_code"}, "code": {code},
		"redirect_uri": {redirect}, "code_verifier": {verifier}, "client_id": {cl.ID}}, "", "")

	env2 := newTestEnv(t, func(o *Options) { o.DataDir = dir })
	status, got := env2.tokenRequest(t, url.Values{"grant_type": {"refresh_token"},
		"refresh_token": {first["refresh_token"].(string)}, "client_id": {cl.ID}}, "", "")
	if status != http.StatusOK {
		t.Fatalf("refresh after restart: %d %v", status, got)
	}
}

func TestNoRefreshTokenWithoutTheGrant(t *testing.T) {
	env := newTestEnv(t, nil)
	redirect := "http://localhost:9999/cb"
	cl := env.register(t, map[string]any{"token_endpoint_auth_method": "none", "redirect_uris": []string{redirect},
		"grant_types": []string{"authorization_code"}})
	verifier, challenge := pkce()
	code := env.approvedCode(t, cl.ID, redirect, challenge, nil)
	status, got := env.tokenRequest(t, url.Values{"grant_type": {"authorization_code"}, "code": {code},
		"redirect_uri": {redirect}, "code_verifier": {verifier}, "client_id": {cl.ID}}, "", "")
	if status != http.StatusOK || got["refresh_token"] != nil {
		t.Fatalf("got %d %v, want a token without refresh_token", status, got)
	}
}

func TestConfidentialClientAuth(t *testing.T) {
	env := newTestEnv(t, func(o *Options) { o.ClientCredentialsRole = "viewer" })
	redirect := "https://app.example.com/cb"
	basic := env.register(t, map[string]any{"token_endpoint_auth_method": "client_secret_basic",
		"redirect_uris": []string{redirect}, "grant_types": []string{"authorization_code", "client_credentials"}})

	tests := []struct {
		name        string
		form        url.Values
		basicID     string
		basicSecret string
		wantStatus  int
		wantErr     string
	}{
		{name: "basic", basicID: basic.ID, basicSecret: basic.Secret, wantStatus: 200},
		{name: "post", form: url.Values{"client_id": {basic.ID}, "client_secret": {basic.Secret}}, wantStatus: 200},
		{name: "wrong secret", basicID: basic.ID, basicSecret: basic.Secret + "x", wantStatus: 401, wantErr: "invalid_client"},
		{name: "no secret", form: url.Values{"client_id": {basic.ID}}, wantStatus: 401, wantErr: "invalid_client"},
		{name: "basic and body differ", basicID: basic.ID, basicSecret: basic.Secret,
			form: url.Values{"client_id": {"other"}}, wantStatus: 400, wantErr: "invalid_request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			form := url.Values{"grant_type": {"client_credentials"}}
			for k, v := range tt.form {
				form[k] = v
			}
			status, got := env.tokenRequest(t, form, tt.basicID, tt.basicSecret)
			if status != tt.wantStatus || (tt.wantErr != "" && got["error"] != tt.wantErr) {
				t.Fatalf("got %d %v, want %d %s", status, got, tt.wantStatus, tt.wantErr)
			}
		})
	}

	t.Run("401 carries a Basic challenge", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodPost, env.issuer+pathToken, strings.NewReader("grant_type=client_credentials"))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.SetBasicAuth(basic.ID, "wrong")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Basic") {
			t.Fatalf("status %d, WWW-Authenticate %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
		}
	})
}

func TestClientCredentials(t *testing.T) {
	env := newTestEnv(t, func(o *Options) { o.DefaultOrg = "org_ci"; o.ClientCredentialsRole = "admin" })
	cl := env.register(t, map[string]any{"token_endpoint_auth_method": "client_secret_post",
		"grant_types": []string{"client_credentials"}})
	public := env.publicClient(t, "http://127.0.0.1/cb")

	status, got := env.tokenRequest(t, url.Values{"grant_type": {"client_credentials"}, "client_id": {cl.ID},
		"client_secret": {cl.Secret}, "scope": {"kadu.read kadu.run"}, "resource": {env.resource}}, "", "")
	if status != http.StatusOK || got["refresh_token"] != nil || got["scope"] != "kadu.read kadu.run" {
		t.Fatalf("got %d %v, want a token with scope kadu.read kadu.run and no refresh token", status, got)
	}
	idt, claims := verify(t, env.s, env.issuer, env.resource, got["access_token"].(string))
	if idt.Subject != cl.ID || claims.ClientID != cl.ID || claims.OrgID != "org_ci" || claims.Role != "admin" {
		t.Errorf("sub %q claims %+v; want the client in org_ci as admin", idt.Subject, claims)
	}

	status, got = env.tokenRequest(t, url.Values{"grant_type": {"client_credentials"}, "client_id": {public.ID}}, "", "")
	if status != http.StatusBadRequest || got["error"] != "unauthorized_client" {
		t.Errorf("public client: %d %v, want unauthorized_client", status, got)
	}
	status, got = env.tokenRequest(t, url.Values{"grant_type": {"authorization_code"}, "code": {"x"},
		"client_id": {cl.ID}, "client_secret": {cl.Secret}}, "", "")
	if status != http.StatusBadRequest || got["error"] != "unauthorized_client" {
		t.Errorf("code grant for a client_credentials client: %d %v, want unauthorized_client", status, got)
	}
}

// TestClientCredentialsOffByDefault: anyone who reaches the embedded server
// can register a client, so by default that must not yield a token (it
// would be the default organisation's owner, with no consent page).
func TestClientCredentialsOffByDefault(t *testing.T) {
	dir := t.TempDir()
	off := newTestEnv(t, func(o *Options) { o.DataDir = dir })
	status, raw := off.postJSON(t, pathRegister, map[string]any{"token_endpoint_auth_method": "client_secret_post",
		"grant_types": []string{"client_credentials"}})
	if status != http.StatusBadRequest || !strings.Contains(string(raw), "invalid_client_metadata") ||
		!strings.Contains(string(raw), "auth.dev.client_credentials_role") {
		t.Errorf("registering for client_credentials: %d %s, want 400 invalid_client_metadata naming auth.dev.client_credentials_role", status, raw)
	}
	status, raw = off.postJSON(t, pathRegister, map[string]any{"token_endpoint_auth_method": "client_secret_post",
		"grant_types": []string{"authorization_code", "client_credentials"}, "redirect_uris": []string{"http://127.0.0.1/cb"}})
	if status != http.StatusBadRequest {
		t.Errorf("registering for code and client_credentials: %d %s, want 400", status, raw)
	}

	// A client registered while the grant was on (same keys) gets nothing
	// once it is off: the server's switch wins over the sealed grant types.
	on := newTestEnv(t, func(o *Options) { o.DataDir = dir; o.ClientCredentialsRole = "owner" })
	cl := on.register(t, map[string]any{"token_endpoint_auth_method": "client_secret_post",
		"grant_types": []string{"client_credentials"}})
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {cl.ID}, "client_secret": {cl.Secret}}
	if status, got := on.tokenRequest(t, form, "", ""); status != http.StatusOK {
		t.Fatalf("grant on: %d %v, want 200", status, got)
	}
	status, got := off.tokenRequest(t, form, "", "")
	if status != http.StatusBadRequest || got["error"] != "unsupported_grant_type" || got["access_token"] != nil {
		t.Errorf("grant off: %d %v, want 400 unsupported_grant_type and no token", status, got)
	}
}

func TestCodeReplayRevokesRefreshTokens(t *testing.T) {
	env := newTestEnv(t, nil)
	redirect := "http://127.0.0.1:33418/callback"
	cl := env.publicClient(t, redirect)
	verifier, challenge := pkce()
	code := env.approvedCode(t, cl.ID, redirect, challenge, nil)
	form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirect},
		"code_verifier": {verifier}, "client_id": {cl.ID}}
	status, first := env.tokenRequest(t, form, "", "")
	if status != http.StatusOK {
		t.Fatalf("exchange: %d %v", status, first)
	}
	if status, got := env.tokenRequest(t, form, "", ""); status != http.StatusBadRequest || got["error"] != "invalid_grant" {
		t.Fatalf("replayed code: %d %v, want invalid_grant", status, got)
	}
	status, got := env.tokenRequest(t, url.Values{"grant_type": {"refresh_token"},
		"refresh_token": {first["refresh_token"].(string)}, "client_id": {cl.ID}}, "", "")
	if status != http.StatusBadRequest || got["error"] != "invalid_grant" {
		t.Fatalf("refresh token of a replayed code: %d %v, want invalid_grant", status, got)
	}
}
