package auth

import (
	"bytes"
	"context"
	"crypto"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/labstack/echo/v4"

	"github.com/kobana/kadu/core/internal/fakeclock"
)

const (
	wantNoToken = `Bearer resource_metadata="` + testMetadata + `", scope="kadu.read"`
	wantInvalid = `Bearer error="invalid_token", resource_metadata="` + testMetadata + `", scope="kadu.read"`
)

// testAuthenticator returns an Authenticator over an in-process verifier, a
// valid token for it, and the log it writes.
func testAuthenticator(t *testing.T) (a *Authenticator, valid string, clock *fakeclock.Clock, logs *bytes.Buffer) {
	t.Helper()
	keys := testKeys()
	clock = newTestClock()
	v, err := NewVerifier(Options{
		Issuer: "https://issuer.example", Resource: testResource, RequireATJWT: true, Now: clock.Now,
		KeySet: &oidc.StaticKeySet{PublicKeys: []crypto.PublicKey{keys.rsa.priv.Public()}},
	})
	if err != nil {
		t.Fatal(err)
	}
	logs = &bytes.Buffer{}
	logger := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	valid = sign(t, keys.rsa, "at+jwt", baseClaims("https://issuer.example", clock.Now()))
	return NewAuthenticator(v, testResource, logger), valid, clock, logs
}

func TestAuthenticate(t *testing.T) {
	t.Parallel()
	keys := testKeys()
	a, valid, clock, logs := testAuthenticator(t)
	expired := func() string {
		c := baseClaims("https://issuer.example", clock.Now())
		c["exp"] = clock.Now().Add(-time.Minute).Unix()
		return sign(t, keys.rsa, "at+jwt", c)
	}()
	idToken := sign(t, keys.rsa, "JWT", baseClaims("https://issuer.example", clock.Now()))
	noOrg := func() string {
		c := baseClaims("https://issuer.example", clock.Now())
		delete(c, "org_id")
		return sign(t, keys.rsa, "at+jwt", c)
	}()

	badOrg := func() string {
		c := baseClaims("https://issuer.example", clock.Now())
		c["org_id"] = "a..b"
		return sign(t, keys.rsa, "at+jwt", c)
	}()
	// RFC 6750 allows no '"' in error_description: the quotes are dropped.
	wantBadOrg := strings.TrimSuffix(wantInvalid, `"`) + `", error_description="organisation claim org_id is not a valid organisation id (want 1 to 64 ASCII letters, digits, _ and -, starting with a letter or digit (e.g. org_dev, acme-1))"`

	tests := []struct {
		name       string
		header     []string // Authorization values
		wantStatus int      // 0: success
		wantHeader string
		wantErr    error
	}{
		{name: "valid", header: []string{"Bearer " + valid}},
		{name: "scheme in lower case", header: []string{"bearer " + valid}},
		{name: "scheme in upper case, several spaces", header: []string{"BEARER   " + valid}},
		{name: "surrounding whitespace", header: []string{" \tBearer " + valid + " "}},
		{name: "no header", wantStatus: 401, wantHeader: wantNoToken, wantErr: ErrNoToken},
		{name: "empty header", header: []string{""}, wantStatus: 401, wantHeader: wantNoToken, wantErr: ErrNoToken},
		{name: "Bearer alone", header: []string{"Bearer"}, wantStatus: 401, wantHeader: wantNoToken, wantErr: ErrMalformedAuthorization},
		{name: "Bearer and spaces", header: []string{"Bearer   "}, wantStatus: 401, wantHeader: wantNoToken, wantErr: ErrMalformedAuthorization},
		{name: "Basic scheme", header: []string{"Basic dXNlcjpwYXNz"}, wantStatus: 401, wantHeader: wantNoToken, wantErr: ErrMalformedAuthorization},
		{name: "token without scheme", header: []string{valid}, wantStatus: 401, wantHeader: wantNoToken, wantErr: ErrMalformedAuthorization},
		{name: "tab after the scheme", header: []string{"Bearer\t" + valid}, wantStatus: 401, wantHeader: wantNoToken, wantErr: ErrMalformedAuthorization},
		{name: "two tokens", header: []string{"Bearer " + valid + " " + valid}, wantStatus: 401, wantHeader: wantNoToken, wantErr: ErrMalformedAuthorization},
		{name: "not token68", header: []string{"Bearer a,b"}, wantStatus: 401, wantHeader: wantNoToken, wantErr: ErrMalformedAuthorization},
		{name: "two Authorization headers", header: []string{"Bearer " + valid, "Bearer " + valid}, wantStatus: 401, wantHeader: wantNoToken, wantErr: ErrMalformedAuthorization},
		{name: "garbage token", header: []string{"Bearer abc.def.ghi"}, wantStatus: 401, wantHeader: wantInvalid, wantErr: ErrInvalidToken},
		{name: "expired token", header: []string{"Bearer " + expired}, wantStatus: 401, wantHeader: wantInvalid, wantErr: ErrInvalidToken},
		{name: "ID token", header: []string{"Bearer " + idToken}, wantStatus: 401, wantHeader: wantInvalid, wantErr: ErrInvalidToken},
		{name: "no organisation", header: []string{"Bearer " + noOrg}, wantStatus: 401, wantHeader: wantInvalid, wantErr: ErrInvalidToken},
		{name: "organisation id with dots", header: []string{"Bearer " + badOrg}, wantStatus: 401, wantHeader: wantBadOrg, wantErr: ErrInvalidOrgID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
			for _, v := range tt.header {
				r.Header.Add("Authorization", v)
			}
			p, ch := a.Authenticate(r)
			if tt.wantStatus == 0 {
				if ch != nil || p == nil || p.OrgID != "org_1" {
					t.Fatalf("Authenticate() = %+v, %v; want the principal", p, ch)
				}
				return
			}
			if p != nil || ch == nil {
				t.Fatalf("Authenticate() = %+v, %v; want a challenge", p, ch)
			}
			if ch.Status != tt.wantStatus || ch.Header != tt.wantHeader {
				t.Fatalf("challenge = %d %q\nwant      %d %q", ch.Status, ch.Header, tt.wantStatus, tt.wantHeader)
			}
			if !errors.Is(ch, tt.wantErr) {
				t.Fatalf("challenge reason = %v, want %v", ch.Reason, tt.wantErr)
			}
			h := http.Header{}
			ch.SetHeaders(h)
			assertChallengeHeaders(t, h, tt.wantHeader)
		})
	}
	// Nothing logged may contain a token or a piece of one.
	sig := valid[strings.LastIndexByte(valid, '.')+1:]
	for _, secret := range []string{valid, sig, expired, idToken, noOrg, "dXNlcjpwYXNz"} {
		if strings.Contains(logs.String(), secret) {
			t.Fatalf("the log contains a token:\n%s", logs)
		}
	}
	if !strings.Contains(logs.String(), "token rejected") || !strings.Contains(logs.String(), "without a usable bearer token") {
		t.Fatalf("the log lacks the rejection reasons:\n%s", logs)
	}
}

func assertChallengeHeaders(t *testing.T, h http.Header, wantWWW string) {
	t.Helper()
	if got := h.Values("WWW-Authenticate"); len(got) != 1 || got[0] != wantWWW {
		t.Errorf("WWW-Authenticate = %q, want %q", got, wantWWW)
	}
	if got := h.Get("Cache-Control"); got != "no-store" {
		t.Errorf("Cache-Control = %q, want no-store", got)
	}
	if got := h.Get("Access-Control-Expose-Headers"); got != "WWW-Authenticate" {
		t.Errorf("Access-Control-Expose-Headers = %q, want WWW-Authenticate", got)
	}
}

// failingVerifier returns err for every token.
type failingVerifier struct{ err error }

func (f failingVerifier) Verify(context.Context, string) (*Principal, error) { return nil, f.err }

func TestAuthenticateVerifierOutcomes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		err        error
		wantStatus int
		wantHeader string
		wantErr    error
	}{
		{name: "keys unavailable", err: fmtErr(ErrKeysUnavailable), wantStatus: 503, wantErr: ErrKeysUnavailable},
		{name: "foreign error counts as invalid", err: errors.New("boom"), wantStatus: 401, wantHeader: wantInvalid, wantErr: ErrInvalidToken},
		{name: "nil principal without error", err: nil, wantStatus: 401, wantHeader: wantInvalid, wantErr: ErrInvalidToken},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := NewAuthenticator(failingVerifier{tt.err}, testResource, nil)
			r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
			r.Header.Set("Authorization", "Bearer abc")
			p, ch := a.Authenticate(r)
			if p != nil || ch == nil || ch.Status != tt.wantStatus || ch.Header != tt.wantHeader || !errors.Is(ch, tt.wantErr) {
				t.Fatalf("Authenticate() = %+v, %+v; want %d %q %v", p, ch, tt.wantStatus, tt.wantHeader, tt.wantErr)
			}
			if tt.wantStatus == 503 {
				h := http.Header{}
				ch.SetHeaders(h)
				if h.Get("Retry-After") != "5" || h.Get("WWW-Authenticate") != "" || h.Get("Cache-Control") != "no-store" {
					t.Fatalf("503 headers = %v", h)
				}
			}
		})
	}
}

func fmtErr(sentinel error) error {
	return errors.Join(sentinel, errors.New("GET https://as.example/jwks: status 500"))
}

func TestInsufficientScope(t *testing.T) {
	t.Parallel()
	a := NewAuthenticator(failingVerifier{}, testResource, nil)
	tests := []struct {
		name     string
		granted  []string
		required string
		want     string
	}{
		{
			name: "read asks for run", granted: []string{"kadu.read"}, required: "kadu.run",
			want: `Bearer error="insufficient_scope", scope="kadu.read kadu.run", resource_metadata="` + testMetadata + `", error_description="this operation requires the kadu.run scope"`,
		},
		{
			name: "write asks for admin: closure", granted: []string{"kadu.write"}, required: "kadu.admin",
			want: `Bearer error="insufficient_scope", scope="kadu.admin kadu.read kadu.run kadu.write", resource_metadata="` + testMetadata + `", error_description="this operation requires the kadu.admin scope"`,
		},
		{
			name: "unknown granted scopes are kept", granted: []string{"kadu.read", "offline_access"}, required: "kadu.write",
			want: `Bearer error="insufficient_scope", scope="kadu.read kadu.write offline_access", resource_metadata="` + testMetadata + `", error_description="this operation requires the kadu.write scope"`,
		},
		{
			name: "no scopes at all", required: "kadu.read",
			want: `Bearer error="insufficient_scope", scope="kadu.read", resource_metadata="` + testMetadata + `", error_description="this operation requires the kadu.read scope"`,
		},
		{
			name: "two required scopes", granted: []string{"kadu.read"}, required: "kadu.write kadu.run",
			want: `Bearer error="insufficient_scope", scope="kadu.read kadu.run kadu.write", resource_metadata="` + testMetadata + `", error_description="this operation requires the kadu.run kadu.write scopes"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ch := a.InsufficientScope(nil, &Principal{Role: RoleMember, Scopes: tt.granted}, tt.required)
			if ch.Status != http.StatusForbidden || ch.Header != tt.want {
				t.Fatalf("InsufficientScope() = %d %q\nwant                 403 %q", ch.Status, ch.Header, tt.want)
			}
			if !errors.Is(ch, ErrInsufficientScope) {
				t.Fatalf("reason = %v, want ErrInsufficientScope", ch.Reason)
			}
			h := http.Header{}
			ch.SetHeaders(h)
			assertChallengeHeaders(t, h, tt.want)
		})
	}
}

func TestMetadataURL(t *testing.T) {
	tests := []struct{ resource, want string }{
		{"https://kadu.example/mcp", "https://kadu.example/.well-known/oauth-protected-resource/mcp"},
		{"https://kadu.example/mcp/", "https://kadu.example/.well-known/oauth-protected-resource/mcp"},
		{"http://127.0.0.1:8080/mcp", "http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp"},
		{"https://kadu.example/", "https://kadu.example/.well-known/oauth-protected-resource"},
		{"https://kadu.example", "https://kadu.example/.well-known/oauth-protected-resource"},
		{"https://kadu.example/tenant/mcp", "https://kadu.example/.well-known/oauth-protected-resource/tenant/mcp"},
	}
	for _, tt := range tests {
		if got := NewAuthenticator(failingVerifier{}, tt.resource, nil).MetadataURL(nil); got != tt.want {
			t.Errorf("MetadataURL(%q) = %q, want %q", tt.resource, got, tt.want)
		}
	}
}

func TestMiddleware(t *testing.T) {
	t.Parallel()
	a, valid, _, _ := testAuthenticator(t)
	e := echo.New()
	g := e.Group("/api/v1", a.Middleware())
	g.GET("/tasks", func(c echo.Context) error {
		p, ok := PrincipalFrom(c.Request().Context())
		if !ok {
			return c.String(http.StatusInternalServerError, "no principal")
		}
		return c.String(http.StatusOK, p.OrgID+" "+string(p.Role))
	})

	tests := []struct {
		name       string
		auth       string
		wantStatus int
		wantWWW    string
		wantBody   string
	}{
		{name: "valid", auth: "Bearer " + valid, wantStatus: 200, wantBody: "org_1 member"},
		{name: "no token", wantStatus: 401, wantWWW: wantNoToken,
			wantBody: `{"status":401,"errors":[{"code":"unauthorized","title":"Unauthorized","detail":"The request has no bearer access token.","param":null,"hint":"Send an access token issued for this server as Authorization: Bearer followed by the token; the resource_metadata URL in WWW-Authenticate says where to sign in."}],"request_id":""}`},
		{name: "invalid token", auth: "Bearer x.y.z", wantStatus: 401, wantWWW: wantInvalid,
			wantBody: `{"status":401,"errors":[{"code":"unauthorized","title":"Unauthorized","detail":"The access token is invalid or expired.","param":null,"hint":"Get a new access token from the authorization server (refresh or sign in again), then retry."}],"request_id":""}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/api/v1/tasks", nil)
			if tt.auth != "" {
				r.Header.Set("Authorization", tt.auth)
			}
			w := httptest.NewRecorder()
			e.ServeHTTP(w, r)
			if w.Code != tt.wantStatus {
				t.Fatalf("status = %d, want %d; body %s", w.Code, tt.wantStatus, w.Body)
			}
			if got := strings.TrimSpace(w.Body.String()); got != tt.wantBody {
				t.Fatalf("body = %s\nwant   %s", got, tt.wantBody)
			}
			if tt.wantStatus == 200 {
				return
			}
			assertChallengeHeaders(t, w.Header(), tt.wantWWW)
			if !json.Valid(w.Body.Bytes()) || !strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") {
				t.Fatalf("body is not JSON: %q %s", w.Header().Get("Content-Type"), w.Body)
			}
		})
	}
}

func TestPrincipalContext(t *testing.T) {
	if p, ok := PrincipalFrom(context.Background()); ok || p != nil {
		t.Fatalf("PrincipalFrom(empty) = %v, %v", p, ok)
	}
	if _, ok := PrincipalFrom(WithPrincipal(context.Background(), nil)); ok {
		t.Fatal("PrincipalFrom(nil principal) ok = true")
	}
	want := &Principal{Subject: "usr_1"}
	if got, ok := PrincipalFrom(WithPrincipal(context.Background(), want)); !ok || got != want {
		t.Fatalf("PrincipalFrom() = %v, %v", got, ok)
	}
}
