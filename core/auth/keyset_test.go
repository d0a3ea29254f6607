package auth

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/kobana/kadu/core/internal/fakeclock"
)

// remoteVerifier returns a Verifier over srv's JWKS on clock.
func remoteVerifier(t testing.TB, srv *issuerServer, clock *fakeclock.Clock, discover bool) *Verifier {
	t.Helper()
	opts := Options{
		Issuer: srv.URL, Resource: testResource, RequireATJWT: true,
		HTTPClient: srv.Client(), Now: clock.Now,
	}
	if !discover {
		opts.JWKSURL = srv.jwksURL()
	}
	v, err := NewVerifier(opts)
	if err != nil {
		t.Fatalf("NewVerifier: %v", err)
	}
	return v
}

func TestRemoteKeySetRotation(t *testing.T) {
	t.Parallel()
	keys := testKeys()
	clock := newTestClock()
	srv := newIssuerServer(t, keys.rsa)
	v := remoteVerifier(t, srv, clock, false)
	ctx := context.Background()
	tokenA := sign(t, keys.rsa, "at+jwt", baseClaims(srv.URL, clock.Now()))
	tokenB := sign(t, keys.ec, "at+jwt", baseClaims(srv.URL, clock.Now()))

	if _, err := v.Verify(ctx, tokenA); err != nil {
		t.Fatalf("Verify(token A) error = %v", err)
	}
	if got := srv.jwksFetches.Load(); got != 1 {
		t.Fatalf("JWKS fetches after the first token = %d, want 1", got)
	}

	srv.setKeys(keys.ec) // the issuer rotates from A to B

	// Within MinRefetchInterval the unknown kid does not cause a fetch.
	clock.Advance(DefaultMinRefetchInterval - time.Second)
	if _, err := v.Verify(ctx, tokenB); !errors.Is(err, ErrInvalidToken) {
		t.Fatalf("Verify(token B) within the interval error = %v, want ErrInvalidToken", err)
	}
	if got := srv.jwksFetches.Load(); got != 1 {
		t.Fatalf("JWKS fetches within the interval = %d, want 1", got)
	}
	// Token A still verifies from the cache meanwhile.
	if _, err := v.Verify(ctx, tokenA); err != nil {
		t.Fatalf("Verify(token A) from cache error = %v", err)
	}

	// After the interval, the unknown kid refetches and B is accepted.
	clock.Advance(time.Second)
	if _, err := v.Verify(ctx, tokenB); err != nil {
		t.Fatalf("Verify(token B) after the interval error = %v", err)
	}
	if got := srv.jwksFetches.Load(); got != 2 {
		t.Fatalf("JWKS fetches after the rotation = %d, want 2", got)
	}
	// A was removed from the JWKS: the new cache no longer knows it.
	if _, err := v.Verify(ctx, tokenA); !errors.Is(err, ErrInvalidToken) {
		t.Fatalf("Verify(token A) after rotation error = %v, want ErrInvalidToken", err)
	}
	if got := srv.jwksFetches.Load(); got != 2 {
		t.Fatalf("JWKS fetches = %d, want 2", got)
	}
}

// TestHammerRemoteKeySetUnknownKid sends bursts of concurrent tokens: a cold
// burst shares one fetch, and a burst of unknown kids refetches once.
func TestHammerRemoteKeySetUnknownKid(t *testing.T) {
	t.Parallel()
	keys := testKeys()
	clock := newTestClock()
	srv := newIssuerServer(t, keys.rsa)
	srv.set(func(s *issuerServer) { s.delay = 50 * time.Millisecond }) // let the burst pile up on one fetch
	v := remoteVerifier(t, srv, clock, false)
	ctx := context.Background()
	valid := sign(t, keys.rsa, "at+jwt", baseClaims(srv.URL, clock.Now()))

	burst := func(raw string) []error {
		errs := make([]error, 50)
		var wg sync.WaitGroup
		for i := range errs {
			wg.Go(func() { _, errs[i] = v.Verify(ctx, raw) })
		}
		wg.Wait()
		return errs
	}

	for i, err := range burst(valid) {
		if err != nil {
			t.Fatalf("cold burst: Verify #%d error = %v", i, err)
		}
	}
	if got := srv.jwksFetches.Load(); got != 1 {
		t.Fatalf("JWKS fetches after a cold burst of 50 = %d, want 1", got)
	}

	clock.Advance(DefaultMinRefetchInterval)
	unknown := make([]string, 50)
	for i := range unknown {
		k := keys.rsa2
		k.kid = "rotated-" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		unknown[i] = sign(t, k, "at+jwt", baseClaims(srv.URL, clock.Now()))
	}
	errs := make([]error, len(unknown))
	var wg sync.WaitGroup
	for i, raw := range unknown {
		wg.Go(func() { _, errs[i] = v.Verify(ctx, raw) })
	}
	wg.Wait()
	for i, err := range errs {
		if !errors.Is(err, ErrInvalidToken) {
			t.Fatalf("unknown-kid burst: Verify #%d error = %v, want ErrInvalidToken", i, err)
		}
	}
	if got := srv.jwksFetches.Load(); got < 2 || got > 2 {
		t.Fatalf("JWKS fetches after a burst of 50 unknown kids = %d, want 2 (1 + one refetch)", got)
	}

	// Known tokens keep verifying without fetching.
	for i, err := range burst(valid) {
		if err != nil {
			t.Fatalf("warm burst: Verify #%d error = %v", i, err)
		}
	}
	if got := srv.jwksFetches.Load(); got != 2 {
		t.Fatalf("JWKS fetches after a warm burst = %d, want 2", got)
	}
}

func TestRemoteKeySetUnavailable(t *testing.T) {
	t.Parallel()
	keys := testKeys()
	clock := newTestClock()
	srv := newIssuerServer(t, keys.rsa)
	srv.set(func(s *issuerServer) { s.status = http.StatusInternalServerError })
	v := remoteVerifier(t, srv, clock, false)
	ctx := context.Background()
	raw := sign(t, keys.rsa, "at+jwt", baseClaims(srv.URL, clock.Now()))

	_, err := v.Verify(ctx, raw)
	if !errors.Is(err, ErrKeysUnavailable) || errors.Is(err, ErrInvalidToken) {
		t.Fatalf("Verify() with the JWKS down error = %v, want ErrKeysUnavailable only", err)
	}
	// Failures are rate-limited too: no new fetch within the interval.
	if _, err := v.Verify(ctx, raw); !errors.Is(err, ErrKeysUnavailable) {
		t.Fatalf("second Verify() error = %v, want ErrKeysUnavailable", err)
	}
	if got := srv.jwksFetches.Load(); got != 1 {
		t.Fatalf("JWKS fetches = %d, want 1", got)
	}

	srv.set(func(s *issuerServer) { s.status = 0 })
	clock.Advance(DefaultMinRefetchInterval)
	if _, err := v.Verify(ctx, raw); err != nil {
		t.Fatalf("Verify() after recovery error = %v", err)
	}

	// A later outage keeps the cached keys serving.
	srv.set(func(s *issuerServer) { s.status = http.StatusBadGateway })
	clock.Advance(keyMaxAge) // stale: a background refresh starts and fails
	raw = sign(t, keys.rsa, "at+jwt", baseClaims(srv.URL, clock.Now()))
	if _, err := v.Verify(ctx, raw); err != nil {
		t.Fatalf("Verify() with stale keys during an outage error = %v", err)
	}
	waitFor(t, func() bool { return srv.jwksFetches.Load() == 3 })
	waitFor(t, func() bool {
		v.remote.mu.Lock()
		defer v.remote.mu.Unlock()
		return v.remote.inflight == nil
	})
	if _, err := v.Verify(ctx, raw); err != nil {
		t.Fatalf("Verify() after a failed refresh error = %v", err)
	}
}

func TestRemoteKeySetRefreshesStaleKeys(t *testing.T) {
	t.Parallel()
	keys := testKeys()
	clock := newTestClock()
	srv := newIssuerServer(t, keys.rsa, keys.ec)
	v := remoteVerifier(t, srv, clock, false)
	ctx := context.Background()
	if _, err := v.Verify(ctx, sign(t, keys.rsa, "at+jwt", baseClaims(srv.URL, clock.Now()))); err != nil {
		t.Fatal(err)
	}
	srv.setKeys(keys.rsa) // the issuer revokes the EC key
	clock.Advance(keyMaxAge)
	ec := sign(t, keys.ec, "at+jwt", baseClaims(srv.URL, clock.Now()))
	// The stale cache still answers at once and starts a background refresh…
	if _, err := v.Verify(ctx, ec); err != nil {
		t.Fatalf("Verify() with stale keys error = %v", err)
	}
	waitFor(t, func() bool { return srv.jwksFetches.Load() == 2 })
	waitFor(t, func() bool {
		v.remote.mu.Lock()
		defer v.remote.mu.Unlock()
		return v.remote.inflight == nil
	})
	// …after which the revoked key is gone.
	if _, err := v.Verify(ctx, ec); !errors.Is(err, ErrInvalidToken) {
		t.Fatalf("Verify() with a revoked key error = %v, want ErrInvalidToken", err)
	}
}

func TestRemoteKeySetDiscovery(t *testing.T) {
	keys := testKeys()
	tests := []struct {
		name      string
		edit      func(s *issuerServer)
		wantErr   error
		wantMetas int64
	}{
		{name: "openid-configuration", wantMetas: 1},
		{name: "oauth-authorization-server fallback", edit: func(s *issuerServer) { s.oidc = false }, wantMetas: 2},
		{name: "no metadata", edit: func(s *issuerServer) { s.oidc, s.oauth = false, false }, wantErr: ErrKeysUnavailable, wantMetas: 2},
		{name: "metadata for another issuer", edit: func(s *issuerServer) { s.metaIssuer = "https://evil.example" }, wantErr: ErrKeysUnavailable, wantMetas: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			clock := newTestClock()
			srv := newIssuerServer(t, keys.ec)
			if tt.edit != nil {
				srv.set(tt.edit)
			}
			v := remoteVerifier(t, srv, clock, true)
			raw := sign(t, keys.ec, "at+jwt", baseClaims(srv.URL, clock.Now()))
			_, err := v.Verify(context.Background(), raw)
			if tt.wantErr == nil && err != nil || tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Fatalf("Verify() error = %v, want %v", err, tt.wantErr)
			}
			if got := srv.metaFetches.Load(); got != tt.wantMetas {
				t.Fatalf("metadata fetches = %d, want %d", got, tt.wantMetas)
			}
			if tt.wantErr != nil {
				return
			}
			// Discovery happens once; the JWKS URL is remembered.
			clock.Advance(DefaultMinRefetchInterval)
			other := sign(t, keys.ec2, "at+jwt", baseClaims(srv.URL, clock.Now()))
			if _, err := v.Verify(context.Background(), other); !errors.Is(err, ErrInvalidToken) {
				t.Fatalf("Verify(unknown key) error = %v, want ErrInvalidToken", err)
			}
			if got := srv.metaFetches.Load(); got != tt.wantMetas {
				t.Fatalf("metadata fetches after a refetch = %d, want %d", got, tt.wantMetas)
			}
			if got := srv.jwksFetches.Load(); got != 2 {
				t.Fatalf("JWKS fetches = %d, want 2", got)
			}
		})
	}
}

func TestDiscoveryURLs(t *testing.T) {
	tests := []struct {
		issuer string
		want   []string
	}{
		{"https://as.example", []string{
			"https://as.example/.well-known/openid-configuration",
			"https://as.example/.well-known/oauth-authorization-server",
		}},
		{"https://as.example/", []string{
			"https://as.example/.well-known/openid-configuration",
			"https://as.example/.well-known/oauth-authorization-server",
		}},
		{"https://as.example/realms/kobana", []string{
			"https://as.example/realms/kobana/.well-known/openid-configuration",
			"https://as.example/.well-known/oauth-authorization-server/realms/kobana",
			"https://as.example/.well-known/openid-configuration/realms/kobana",
		}},
	}
	for _, tt := range tests {
		if got := discoveryURLs(tt.issuer); strings.Join(got, " ") != strings.Join(tt.want, " ") {
			t.Errorf("discoveryURLs(%q) = %q, want %q", tt.issuer, got, tt.want)
		}
	}
}

func TestParseJWKSKeepsOnlyPublicSigningKeys(t *testing.T) {
	keys := testKeys()
	small, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	good, _ := json.Marshal(keys.ec.jwk())
	private, _ := json.Marshal(jose.JSONWebKey{Key: keys.rsa.priv, KeyID: "private"})
	tooSmall, _ := json.Marshal(jose.JSONWebKey{Key: &small.PublicKey, KeyID: "small"})
	enc, _ := json.Marshal(jose.JSONWebKey{Key: keys.rsa2.priv.Public(), KeyID: "enc", Use: "enc"})
	body := `{"keys":[` + strings.Join([]string{
		string(good),
		string(private),
		string(tooSmall),
		string(enc),
		`{"kty":"oct","kid":"hmac","k":"c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0"}`,
		`{"kty":"XYZ","kid":"future"}`,
	}, ",") + `]}`
	got, err := parseJWKS([]byte(body), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("parseJWKS() error = %v", err)
	}
	if len(got) != 1 || got[0].KeyID != keys.ec.kid {
		t.Fatalf("parseJWKS() kept %d keys (%v), want only %q", len(got), got, keys.ec.kid)
	}
	for _, bad := range []string{`{"keys":[]}`, `{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}`, `[]`, `nope`} {
		if _, err := parseJWKS([]byte(bad), slog.New(slog.DiscardHandler)); err == nil {
			t.Errorf("parseJWKS(%s) succeeded, want an error", bad)
		}
	}
}

func TestRemoteKeySetRefusesOversizedJWKS(t *testing.T) {
	t.Parallel()
	keys := testKeys()
	clock := newTestClock()
	srv := newIssuerServer(t, keys.rsa)
	srv.set(func(s *issuerServer) {
		s.rawJWKS = []byte(`{"keys":[],"pad":"` + strings.Repeat("x", maxJWKSBytes) + `"}`)
	})
	v := remoteVerifier(t, srv, clock, false)
	_, err := v.Verify(context.Background(), sign(t, keys.rsa, "at+jwt", baseClaims(srv.URL, clock.Now())))
	if !errors.Is(err, ErrKeysUnavailable) || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("Verify() error = %v, want ErrKeysUnavailable for an oversized body", err)
	}
}

func TestSameHostRedirects(t *testing.T) {
	req := func(u string) *http.Request {
		r, err := http.NewRequest(http.MethodGet, u, nil)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	via := []*http.Request{req("https://as.example/jwks")}
	if err := sameHostRedirects(req("https://as.example/keys"), via); err != nil {
		t.Errorf("same host redirect refused: %v", err)
	}
	if err := sameHostRedirects(req("https://evil.example/keys"), via); err == nil {
		t.Error("redirect to another host allowed")
	}
	if err := sameHostRedirects(req("http://as.example/keys"), via); err == nil {
		t.Error("redirect to http allowed")
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
