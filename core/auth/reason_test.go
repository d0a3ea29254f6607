package auth

import (
	"context"
	"crypto"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
)

// TestFailureReason: each way a real token is refused gets the reason an
// operator's dashboard shows, and a reason is never the error's text.
func TestFailureReason(t *testing.T) {
	keys := testKeys()
	tests := []struct {
		name   string
		key    *testKey
		typ    string
		claims func(c map[string]any)
		raw    string
		want   string
	}{
		{name: "expired", claims: func(c map[string]any) { c["exp"] = now().Add(-time.Hour).Unix() }, want: "expired"},
		{name: "audience", claims: func(c map[string]any) { c["aud"] = "https://other.example/mcp" }, want: "audience"},
		{name: "issuer", claims: func(c map[string]any) { c["iss"] = "https://evil.example" }, want: "issuer"},
		{name: "unknown key", key: &keys.rsa2, want: "signature"},
		{name: "garbage", raw: "not-a-token", want: "malformed"},
		{name: "empty", raw: "", want: "malformed"},
		{name: "nbf in the future", claims: func(c map[string]any) { c["nbf"] = now().Add(time.Hour).Unix() }, want: "not_yet_valid"},
		{name: "lifetime", claims: func(c map[string]any) {
			c["iat"] = now().Add(-time.Hour).Unix()
			c["exp"] = now().Add(48 * time.Hour).Unix()
		}, want: "lifetime"},
		{name: "ID token typ", typ: "JWT", want: "token_type"},
		{name: "ID token nonce", claims: func(c map[string]any) { c["nonce"] = "n" }, want: "token_type"},
		{name: "missing role", claims: func(c map[string]any) { delete(c, "role") }, want: "claims"},
		{name: "missing org", claims: func(c map[string]any) { delete(c, "org_id") }, want: "claims"},
		{name: "missing sub", claims: func(c map[string]any) { delete(c, "sub") }, want: "claims"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := newTestClock()
			v, err := NewVerifier(Options{
				Issuer: "https://issuer.example", Resource: testResource, RequireATJWT: true,
				KeySet: &oidc.StaticKeySet{PublicKeys: []crypto.PublicKey{keys.rsa.priv.Public()}}, Now: clock.Now,
			})
			if err != nil {
				t.Fatal(err)
			}
			raw := tt.raw
			if raw == "" && tt.name != "empty" {
				c := baseClaims("https://issuer.example", clock.Now())
				if tt.claims != nil {
					tt.claims(c)
				}
				k, typ := keys.rsa, "at+jwt"
				if tt.key != nil {
					k = *tt.key
				}
				if tt.typ != "" {
					typ = tt.typ
				}
				raw = sign(t, k, typ, c)
			}
			_, err = v.Verify(context.Background(), raw)
			if err == nil {
				t.Fatal("Verify accepted the token")
			}
			if got := FailureReason(err); got != tt.want {
				t.Errorf("FailureReason(%v) = %q, want %q", err, got, tt.want)
			}
		})
	}
	if got := FailureReason(fmt.Errorf("fetching: %w", ErrKeysUnavailable)); got != "issuer_unavailable" {
		t.Errorf("keys unavailable: %q", got)
	}
	if got := FailureReason(errors.New("something new")); got != "invalid" {
		t.Errorf("unknown error: %q", got)
	}
}
