package auth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/kobana/kadu/core/internal/fakeclock"
)

const (
	testResource = "https://kadu.example/mcp"
	testMetadata = "https://kadu.example/.well-known/oauth-protected-resource/mcp"
)

// testKey is a signing key the tests mint tokens with.
type testKey struct {
	kid  string
	alg  jose.SignatureAlgorithm
	priv crypto.Signer
}

func (k testKey) jwk() jose.JSONWebKey {
	return jose.JSONWebKey{Key: k.priv.Public(), KeyID: k.kid, Algorithm: string(k.alg), Use: "sig"}
}

// testKeys are generated once per test binary: RSA generation is slow under -race.
var testKeys = sync.OnceValue(func() struct{ rsa, rsa2, ec, ec2 testKey } {
	gen := func(bits int) *rsa.PrivateKey {
		k, err := rsa.GenerateKey(rand.Reader, bits)
		if err != nil {
			panic(err)
		}
		return k
	}
	genEC := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			panic(err)
		}
		return k
	}
	return struct{ rsa, rsa2, ec, ec2 testKey }{
		rsa:  testKey{kid: "rsa-1", alg: jose.RS256, priv: gen(2048)},
		rsa2: testKey{kid: "rsa-2", alg: jose.RS256, priv: gen(2048)},
		ec:   testKey{kid: "ec-1", alg: jose.ES256, priv: genEC()},
		ec2:  testKey{kid: "ec-2", alg: jose.ES256, priv: genEC()},
	}
})

// sign mints a compact JWS of claims with k. typ "" leaves the header
// without "typ".
func sign(t testing.TB, k testKey, typ string, claims map[string]any) string {
	t.Helper()
	opts := &jose.SignerOptions{}
	if typ != "" {
		opts = opts.WithType(jose.ContentType(typ))
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: k.alg, Key: jose.JSONWebKey{Key: k.priv, KeyID: k.kid}}, opts)
	if err != nil {
		t.Fatalf("NewSigner: %v", err)
	}
	return signPayload(t, signer, claims)
}

func signPayload(t testing.TB, signer jose.Signer, claims map[string]any) string {
	t.Helper()
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatalf("marshal claims: %v", err)
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		t.Fatalf("Sign: %v", err)
	}
	s, err := jws.CompactSerialize()
	if err != nil {
		t.Fatalf("CompactSerialize: %v", err)
	}
	return s
}

// unsignedToken builds an "alg": "none" token by hand.
func unsignedToken(t testing.TB, claims map[string]any) string {
	t.Helper()
	h, _ := json.Marshal(map[string]string{"alg": "none", "typ": "at+jwt", "kid": "rsa-1"})
	p, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	enc := base64.RawURLEncoding.EncodeToString
	return enc(h) + "." + enc(p) + "."
}

// hmacWithPublicKey signs with HS256 using the PEM of an RSA public key as
// the secret: the classic algorithm-confusion attack.
func hmacWithPublicKey(t testing.TB, k testKey, claims map[string]any) string {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(k.priv.Public())
	if err != nil {
		t.Fatal(err)
	}
	secret := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: jose.JSONWebKey{Key: secret, KeyID: k.kid}},
		(&jose.SignerOptions{}).WithType("at+jwt"))
	if err != nil {
		t.Fatal(err)
	}
	return signPayload(t, signer, claims)
}

// baseClaims are the claims of a valid access token at now.
func baseClaims(issuer string, now time.Time) map[string]any {
	return map[string]any{
		"iss":       issuer,
		"sub":       "usr_1",
		"aud":       testResource,
		"exp":       now.Add(10 * time.Minute).Unix(),
		"iat":       now.Add(-time.Minute).Unix(),
		"org_id":    "org_1",
		"role":      "member",
		"scope":     "kadu.run kadu.read",
		"client_id": "cli_1",
	}
}

// newTestClock is the tests' clock, moved by hand.
func newTestClock() *fakeclock.Clock { return fakeclock.New(time.Unix(1_800_000_000, 0)) }

// issuerServer is an httptest issuer: metadata, and a JWKS whose keys the
// test can rotate, counting fetches.
type issuerServer struct {
	*httptest.Server
	jwksFetches atomic.Int64
	metaFetches atomic.Int64

	mu         sync.Mutex
	keys       []jose.JSONWebKey
	rawJWKS    []byte        // served instead of keys when set
	status     int           // JWKS status; 0 = 200
	delay      time.Duration // before answering the JWKS
	oidc       bool          // serve /.well-known/openid-configuration
	oauth      bool          // serve /.well-known/oauth-authorization-server
	metaIssuer string        // "issuer" in metadata; "" = the server URL
}

func newIssuerServer(t testing.TB, keys ...testKey) *issuerServer {
	t.Helper()
	s := &issuerServer{oidc: true, oauth: true}
	s.setKeys(keys...)
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *issuerServer) jwksURL() string { return s.URL + "/jwks" }

func (s *issuerServer) setKeys(keys ...testKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys = nil
	for _, k := range keys {
		s.keys = append(s.keys, k.jwk())
	}
}

func (s *issuerServer) set(f func(s *issuerServer)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s)
}

func (s *issuerServer) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	keys, raw, status, delay := s.keys, s.rawJWKS, s.status, s.delay
	oidc, oauth, metaIssuer := s.oidc, s.oauth, s.metaIssuer
	s.mu.Unlock()
	if metaIssuer == "" {
		metaIssuer = s.URL
	}
	switch r.URL.Path {
	case "/jwks":
		s.jwksFetches.Add(1)
		time.Sleep(delay)
		if status != 0 {
			w.WriteHeader(status)
			return
		}
		w.Header().Set("Content-Type", "application/jwk-set+json")
		if raw != nil {
			_, _ = w.Write(raw)
			return
		}
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: keys})
	case "/.well-known/openid-configuration", "/.well-known/oauth-authorization-server":
		s.metaFetches.Add(1)
		if (r.URL.Path == "/.well-known/openid-configuration" && !oidc) ||
			(r.URL.Path == "/.well-known/oauth-authorization-server" && !oauth) {
			http.NotFound(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]string{"issuer": metaIssuer, "jwks_uri": s.jwksURL()})
	default:
		http.NotFound(w, r)
	}
}
