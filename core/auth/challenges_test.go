package auth

import (
	"net/http/httptest"
	"slices"
	"testing"
	"time"
)

// TestTokenDefectsChallenges runs each token defect the foundation issue
// names through Authenticate with the real verifier, and asserts the exact
// challenge a client sees (verifier_test.go covers the rules one by one).
func TestTokenDefectsChallenges(t *testing.T) {
	t.Parallel()
	keys := testKeys()
	a, _, clock, _ := testAuthenticator(t)
	now := clock.Now()
	with := func(mutate func(map[string]any)) map[string]any {
		c := baseClaims("https://issuer.example", now)
		mutate(c)
		return c
	}
	tests := []struct {
		name       string
		token      string
		wantHeader string   // "" for success
		wantScopes []string // on success
	}{
		{name: "wrong audience", token: sign(t, keys.rsa, "at+jwt", with(func(c map[string]any) { c["aud"] = "https://other.example/mcp" })), wantHeader: wantInvalid},
		{name: "wrong issuer", token: sign(t, keys.rsa, "at+jwt", with(func(c map[string]any) { c["iss"] = "https://evil.example" })),
			// Both issuers are public: the client learns which one to ask.
			wantHeader: wantInvalid + `, error_description="issued by https://evil.example, not by this server's issuer https://issuer.example"`},
		{name: "expired", token: sign(t, keys.rsa, "at+jwt", with(func(c map[string]any) { c["exp"] = now.Add(-time.Minute).Unix() })), wantHeader: wantInvalid},
		{name: "alg none", token: unsignedToken(t, baseClaims("https://issuer.example", now)), wantHeader: wantInvalid},
		{name: "HS256 with the public key as secret", token: hmacWithPublicKey(t, keys.rsa, baseClaims("https://issuer.example", now)), wantHeader: wantInvalid},
		{name: "unknown kid", token: sign(t, keys.rsa2, "at+jwt", baseClaims("https://issuer.example", now)), wantHeader: wantInvalid},
		{name: "ID token", token: sign(t, keys.rsa, "JWT", with(func(c map[string]any) { c["nonce"] = "n-0S6" })), wantHeader: wantInvalid},
		{name: "missing org claim", token: sign(t, keys.rsa, "at+jwt", with(func(c map[string]any) { delete(c, "org_id") })), wantHeader: wantInvalid},
		{name: "scope as a string", token: sign(t, keys.rsa, "at+jwt", with(func(c map[string]any) { c["scope"] = "kadu.write kadu.read" })),
			wantScopes: []string{"kadu.read", "kadu.write"}},
		{name: "scp as an array", token: sign(t, keys.rsa, "at+jwt", with(func(c map[string]any) { delete(c, "scope"); c["scp"] = []string{"kadu.run", "kadu.read"} })),
			wantScopes: []string{"kadu.read", "kadu.run"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := httptest.NewRequest("POST", testResource, nil)
			r.Header.Set("Authorization", "Bearer "+tt.token)
			p, ch := a.Authenticate(r)
			if tt.wantHeader == "" {
				if ch != nil || !slices.Equal(p.Scopes, tt.wantScopes) {
					t.Fatalf("Authenticate() = %+v, %v; want scopes %q", p, ch, tt.wantScopes)
				}
				return
			}
			if ch == nil || ch.Status != 401 || ch.Header != tt.wantHeader {
				t.Fatalf("Authenticate() challenge = %+v\nwant 401 %q", ch, tt.wantHeader)
			}
			w := httptest.NewRecorder()
			ch.SetHeaders(w.Header())
			assertChallengeHeaders(t, w.Header(), tt.wantHeader)
		})
	}
}
