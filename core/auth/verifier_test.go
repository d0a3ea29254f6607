package auth

import (
	"context"
	"crypto"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"

	"github.com/kobana/kadu/core/internal/fakeclock"
)

// keyMode builds a Verifier over the given keys, either in process
// (oidc.StaticKeySet) or through a JWKS served over HTTP.
type keyMode struct {
	name string
	// setup returns the issuer to put in tokens and the options to verify them.
	setup func(t *testing.T, clock *fakeclock.Clock, keys ...testKey) (issuer string, opts Options)
}

var keyModes = []keyMode{
	{
		name: "static",
		setup: func(t *testing.T, clock *fakeclock.Clock, keys ...testKey) (string, Options) {
			var pubs []crypto.PublicKey
			for _, k := range keys {
				pubs = append(pubs, k.priv.Public())
			}
			return "https://issuer.example", Options{
				Issuer: "https://issuer.example", Resource: testResource, RequireATJWT: true,
				KeySet: &oidc.StaticKeySet{PublicKeys: pubs}, Now: clock.Now,
			}
		},
	},
	{
		name: "remote",
		setup: func(t *testing.T, clock *fakeclock.Clock, keys ...testKey) (string, Options) {
			srv := newIssuerServer(t, keys...)
			return srv.URL, Options{
				Issuer: srv.URL, Resource: testResource, RequireATJWT: true,
				JWKSURL: srv.jwksURL(), HTTPClient: srv.Client(), Now: clock.Now,
			}
		},
	},
	{
		name: "discovered",
		setup: func(t *testing.T, clock *fakeclock.Clock, keys ...testKey) (string, Options) {
			srv := newIssuerServer(t, keys...)
			return srv.URL, Options{
				Issuer: srv.URL, Resource: testResource, RequireATJWT: true,
				HTTPClient: srv.Client(), Now: clock.Now,
			}
		},
	},
}

func TestVerify(t *testing.T) {
	keys := testKeys()
	tests := []struct {
		name    string
		key     testKey                                     // signs the token; default keys.rsa
		typ     string                                      // header typ; default "at+jwt"; "-" for none
		claims  func(c map[string]any)                      // edits baseClaims
		opts    func(o *Options)                            // edits the options
		token   func(t *testing.T, c map[string]any) string // replaces signing altogether
		wantErr error                                       // nil: success
		want    func(p *Principal) bool                     // extra check on success
	}{
		{name: "valid RS256"},
		{name: "valid ES256", key: keys.ec},
		{name: "wrong audience", claims: func(c map[string]any) { c["aud"] = "https://other.example/mcp" }, wantErr: ErrInvalidToken},
		{name: "audience is a client id", claims: func(c map[string]any) { c["aud"] = "cli_1" }, wantErr: ErrInvalidToken},
		{name: "no audience", claims: func(c map[string]any) { delete(c, "aud") }, wantErr: ErrInvalidToken},
		{name: "audience array containing the resource", claims: func(c map[string]any) {
			c["aud"] = []string{"https://api.example", testResource}
		}},
		{name: "audience array without the resource", claims: func(c map[string]any) {
			c["aud"] = []string{"https://api.example", "https://kadu.example/mcp2"}
		}, wantErr: ErrInvalidToken},
		{name: "audience with a trailing slash", claims: func(c map[string]any) { c["aud"] = testResource + "/" }},
		{name: "audience with two trailing slashes", claims: func(c map[string]any) { c["aud"] = testResource + "//" }, wantErr: ErrInvalidToken},
		{name: "resource configured with a trailing slash", opts: func(o *Options) { o.Resource = testResource + "/" }},
		{name: "extra accepted audience", claims: func(c map[string]any) { c["aud"] = "kadu-api" },
			opts: func(o *Options) { o.Audiences = []string{"kadu-api"} }},
		{name: "wrong issuer", claims: func(c map[string]any) { c["iss"] = "https://evil.example" }, wantErr: ErrInvalidToken},
		{name: "issuer with a trailing slash", claims: func(c map[string]any) { c["iss"] = c["iss"].(string) + "/" }, wantErr: ErrInvalidToken},
		{name: "expired beyond the skew", claims: func(c map[string]any) { c["exp"] = now().Add(-31 * time.Second).Unix() }, wantErr: ErrInvalidToken},
		{name: "expired within the skew", claims: func(c map[string]any) { c["exp"] = now().Add(-29 * time.Second).Unix() }},
		{name: "no exp", claims: func(c map[string]any) { delete(c, "exp") }, wantErr: ErrInvalidToken},
		{name: "lifetime at the cap", claims: func(c map[string]any) {
			c["iat"] = now().Add(-time.Hour).Unix()
			c["exp"] = now().Add(23 * time.Hour).Unix()
		}},
		{name: "lifetime above the cap", claims: func(c map[string]any) {
			c["iat"] = now().Add(-time.Hour).Unix()
			c["exp"] = now().Add(23*time.Hour + time.Second).Unix()
		}, wantErr: ErrInvalidToken},
		{name: "lifetime above a custom cap", opts: func(o *Options) { o.MaxTokenLifetime = 5 * time.Minute }, wantErr: ErrInvalidToken},
		{name: "no iat, exp within the cap", claims: func(c map[string]any) {
			delete(c, "iat")
			c["exp"] = now().Add(23 * time.Hour).Unix()
		}},
		{name: "no iat, exp beyond the cap", claims: func(c map[string]any) {
			delete(c, "iat")
			c["exp"] = now().Add(25 * time.Hour).Unix()
		}, wantErr: ErrInvalidToken},
		{name: "iat in the future", claims: func(c map[string]any) { c["iat"] = now().Add(time.Minute).Unix() }, wantErr: ErrInvalidToken},
		{name: "iat within the skew", claims: func(c map[string]any) { c["iat"] = now().Add(20 * time.Second).Unix() }},
		{name: "nbf in the future", claims: func(c map[string]any) { c["nbf"] = now().Add(time.Minute).Unix() }, wantErr: ErrInvalidToken},
		{name: "nbf within the skew", claims: func(c map[string]any) { c["nbf"] = now().Add(20 * time.Second).Unix() }},
		{name: "alg none", token: func(t *testing.T, c map[string]any) string { return unsignedToken(t, c) }, wantErr: ErrInvalidToken},
		{name: "HS256 with the RSA public key as secret", token: func(t *testing.T, c map[string]any) string {
			return hmacWithPublicKey(t, keys.rsa, c)
		}, wantErr: ErrInvalidToken},
		{name: "RS256 when only ES256 is pinned", opts: func(o *Options) { o.Algorithms = []string{"ES256"} }, wantErr: ErrInvalidToken},
		{name: "signed by an unknown key", key: keys.rsa2, wantErr: ErrInvalidToken},
		{name: "forged kid of a known key", token: func(t *testing.T, c map[string]any) string {
			k := keys.rsa2
			k.kid = keys.rsa.kid
			return sign(t, k, "at+jwt", c)
		}, wantErr: ErrInvalidToken},
		{name: "tampered payload", token: func(t *testing.T, c map[string]any) string {
			good := sign(t, keys.rsa, "at+jwt", c)
			c["role"] = "owner"
			evil := sign(t, keys.rsa, "at+jwt", c)
			g, e := strings.Split(good, "."), strings.Split(evil, ".")
			return g[0] + "." + e[1] + "." + g[2]
		}, wantErr: ErrInvalidToken},
		{name: "ID token: typ JWT", typ: "JWT", wantErr: ErrInvalidToken},
		{name: "ID token: no typ", typ: "-", wantErr: ErrInvalidToken},
		{name: "ID token: nonce", claims: func(c map[string]any) { c["nonce"] = "n-0S6_WzA2Mj" }, wantErr: ErrInvalidToken},
		{name: "ID token: at_hash", claims: func(c map[string]any) { c["at_hash"] = "77QmUPtjPfzWtF2AnpK9RQ" }, wantErr: ErrInvalidToken},
		{name: "ID token: Keycloak typ claim", claims: func(c map[string]any) { c["typ"] = "ID" }, wantErr: ErrInvalidToken},
		{name: "ID token without the at+jwt requirement: nonce", typ: "JWT", opts: func(o *Options) { o.RequireATJWT = false },
			claims: func(c map[string]any) { c["nonce"] = "abc" }, wantErr: ErrInvalidToken},
		{name: "typ JWT without the at+jwt requirement", typ: "JWT", opts: func(o *Options) { o.RequireATJWT = false }},
		{name: "no typ without the at+jwt requirement", typ: "-", opts: func(o *Options) { o.RequireATJWT = false }},
		{name: "logout token without the at+jwt requirement", typ: "logout+jwt", opts: func(o *Options) { o.RequireATJWT = false }, wantErr: ErrInvalidToken},
		{name: "typ application/at+jwt", typ: "application/at+jwt"},
		{name: "typ AT+JWT", typ: "AT+JWT"},
		{name: "typ Application/AT+JWT", typ: "Application/AT+JWT"},
		{name: "typ dpop+jwt", typ: "dpop+jwt", wantErr: ErrInvalidToken},
		{name: "missing org claim", claims: func(c map[string]any) { delete(c, "org_id") }, wantErr: ErrInvalidToken},
		{name: "empty org claim", claims: func(c map[string]any) { c["org_id"] = "" }, wantErr: ErrInvalidToken},
		{name: "numeric org claim", claims: func(c map[string]any) { c["org_id"] = 42 }, wantErr: ErrInvalidToken},
		{name: "org claim with dots", claims: func(c map[string]any) { c["org_id"] = "a..b" }, wantErr: ErrInvalidOrgID},
		{name: "org claim with a path", claims: func(c map[string]any) { c["org_id"] = "../org_b" }, wantErr: ErrInvalidOrgID},
		{name: "org claim with a slash", claims: func(c map[string]any) { c["org_id"] = "acme/x" }, wantErr: ErrInvalidToken},
		{name: "org claim too long", claims: func(c map[string]any) { c["org_id"] = strings.Repeat("o", 65) }, wantErr: ErrInvalidToken},
		{name: "org claim of 64 characters", claims: func(c map[string]any) { c["org_id"] = strings.Repeat("o", 64) },
			want: func(p *Principal) bool { return p.OrgID == strings.Repeat("o", 64) }},
		{name: "org claim UUID", claims: func(c map[string]any) { c["org_id"] = "0199a3c2-7e51-7c1d-9c43-3b8e2f1a6d01" },
			want: func(p *Principal) bool { return p.OrgID == "0199a3c2-7e51-7c1d-9c43-3b8e2f1a6d01" }},
		{name: "invalid role", claims: func(c map[string]any) { c["role"] = "superuser" }, wantErr: ErrInvalidToken},
		{name: "role in the wrong case", claims: func(c map[string]any) { c["role"] = "Admin" }, wantErr: ErrInvalidToken},
		{name: "missing role", claims: func(c map[string]any) { delete(c, "role") }, wantErr: ErrInvalidToken},
		{name: "missing sub", claims: func(c map[string]any) { delete(c, "sub") }, wantErr: ErrInvalidToken},
		{name: "scp array", claims: func(c map[string]any) {
			delete(c, "scope")
			c["scp"] = []string{"kadu.write", "kadu.read", "kadu.write"}
		}, want: func(p *Principal) bool { return reflect.DeepEqual(p.Scopes, []string{"kadu.read", "kadu.write"}) }},
		{name: "scp string", claims: func(c map[string]any) {
			delete(c, "scope")
			c["scp"] = "kadu.admin"
		}, want: func(p *Principal) bool { return reflect.DeepEqual(p.Scopes, []string{"kadu.admin"}) }},
		{name: "scope string wins over scp", claims: func(c map[string]any) { c["scp"] = []string{"kadu.admin"} },
			want: func(p *Principal) bool { return reflect.DeepEqual(p.Scopes, []string{"kadu.read", "kadu.run"}) }},
		{name: "scope as an array", claims: func(c map[string]any) { c["scope"] = []string{"kadu.run"} },
			want: func(p *Principal) bool { return reflect.DeepEqual(p.Scopes, []string{"kadu.run"}) }},
		{name: "scope of the wrong type", claims: func(c map[string]any) { c["scope"] = 7 }, wantErr: ErrInvalidToken},
		{name: "no scopes", claims: func(c map[string]any) { delete(c, "scope") },
			want: func(p *Principal) bool { return len(p.Scopes) == 0 }},
		{name: "unknown scopes kept", claims: func(c map[string]any) { c["scope"] = "offline_access kadu.read" },
			want: func(p *Principal) bool { return reflect.DeepEqual(p.Scopes, []string{"kadu.read", "offline_access"}) }},
		{name: "custom claim names", opts: func(o *Options) {
			o.OrgClaim, o.RoleClaim, o.ScopeClaim = "https://kobana.com/org", "kadu_role", "permissions"
		}, claims: func(c map[string]any) {
			delete(c, "org_id")
			delete(c, "role")
			delete(c, "scope")
			c["https://kobana.com/org"] = "org_9"
			c["kadu_role"] = "owner"
			c["permissions"] = []string{"kadu.admin"}
			c["role"] = "viewer" // the default name is not read any more
		}, want: func(p *Principal) bool {
			return p.OrgID == "org_9" && p.Role == RoleOwner && reflect.DeepEqual(p.Scopes, []string{"kadu.admin"})
		}},
		{name: "custom org claim missing", opts: func(o *Options) { o.OrgClaim = "tenant" }, wantErr: ErrInvalidToken},
		{name: "client id from azp", claims: func(c map[string]any) {
			delete(c, "client_id")
			c["azp"] = "cli_azp"
		}, want: func(p *Principal) bool { return p.ClientID == "cli_azp" }},
		{name: "client_id wins over azp", claims: func(c map[string]any) { c["azp"] = "cli_azp" },
			want: func(p *Principal) bool { return p.ClientID == "cli_1" }},
	}
	for _, mode := range keyModes {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					t.Parallel()
					clock := newTestClock()
					issuer, opts := mode.setup(t, clock, keys.rsa, keys.ec)
					if tt.opts != nil {
						tt.opts(&opts)
					}
					v, err := NewVerifier(opts)
					if err != nil {
						t.Fatalf("NewVerifier: %v", err)
					}
					claims := baseClaims(issuer, clock.Now())
					if tt.claims != nil {
						tt.claims(claims)
					}
					var raw string
					switch {
					case tt.token != nil:
						raw = tt.token(t, claims)
					default:
						key := tt.key
						if key.priv == nil {
							key = keys.rsa
						}
						typ := tt.typ
						switch typ {
						case "":
							typ = "at+jwt"
						case "-":
							typ = ""
						}
						raw = sign(t, key, typ, claims)
					}

					p, err := v.Verify(context.Background(), raw)
					if tt.wantErr != nil {
						if !errors.Is(err, tt.wantErr) {
							t.Fatalf("Verify() = %+v, %v; want error %v", p, err, tt.wantErr)
						}
						if p != nil {
							t.Fatalf("Verify() returned a principal with error %v", err)
						}
						if strings.Contains(err.Error(), raw) {
							t.Fatalf("error text contains the token: %v", err)
						}
						return
					}
					if err != nil {
						t.Fatalf("Verify() error = %v", err)
					}
					if tt.want != nil {
						if !tt.want(p) {
							t.Fatalf("Verify() = %+v: check failed", p)
						}
						return
					}
					want := &Principal{
						Issuer:   issuer,
						Subject:  "usr_1",
						OrgID:    "org_1",
						Role:     RoleMember,
						Scopes:   []string{"kadu.read", "kadu.run"},
						ClientID: "cli_1",
						Expiry:   time.Unix(claims["exp"].(int64), 0),
					}
					if !reflect.DeepEqual(p, want) {
						t.Fatalf("Verify() = %+v\nwant %+v", p, want)
					}
				})
			}
		})
	}
}

// now is the tests' fixed instant (newTestClock's start).
func now() time.Time { return newTestClock().Now() }

func TestNewVerifierRefusesOptions(t *testing.T) {
	valid := func() Options {
		return Options{Issuer: "https://issuer.example", Resource: testResource, KeySet: &oidc.StaticKeySet{}}
	}
	tests := []struct {
		name    string
		edit    func(o *Options)
		wantSub string // in the error text
	}{
		{name: "alg none", edit: func(o *Options) { o.Algorithms = []string{"RS256", "none"} }, wantSub: `Algorithms[1]: "none" is refused`},
		{name: "HS256", edit: func(o *Options) { o.Algorithms = []string{"HS256"} }, wantSub: `Algorithms[0]: "HS256" is refused`},
		{name: "hs512 lower case", edit: func(o *Options) { o.Algorithms = []string{"hs512"} }, wantSub: `"hs512" is refused`},
		{name: "unknown alg", edit: func(o *Options) { o.Algorithms = []string{"RS1"} }, wantSub: `unsupported algorithm "RS1"`},
		{name: "no issuer", edit: func(o *Options) { o.Issuer = "" }, wantSub: "Issuer is required"},
		{name: "relative issuer", edit: func(o *Options) { o.Issuer = "issuer.example" }, wantSub: "Issuer:"},
		{name: "no resource", edit: func(o *Options) { o.Resource = "" }, wantSub: "Resource is required"},
		{name: "resource with a fragment", edit: func(o *Options) { o.Resource = testResource + "#x" }, wantSub: "Resource:"},
		{name: "empty audience", edit: func(o *Options) { o.Audiences = []string{""} }, wantSub: "Audiences[0] is empty"},
		{name: "negative skew", edit: func(o *Options) { o.ClockSkew = -time.Second }, wantSub: "ClockSkew must not be negative"},
		{name: "negative lifetime", edit: func(o *Options) { o.MaxTokenLifetime = -time.Second }, wantSub: "MaxTokenLifetime"},
		{name: "bad JWKS URL", edit: func(o *Options) { o.KeySet = nil; o.JWKSURL = "ftp://x" }, wantSub: "JWKSURL:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o := valid()
			tt.edit(&o)
			v, err := NewVerifier(o)
			if err == nil || !strings.Contains(err.Error(), tt.wantSub) {
				t.Fatalf("NewVerifier() = %v, %v; want error containing %q", v, err, tt.wantSub)
			}
		})
	}
	if _, err := NewVerifier(valid()); err != nil {
		t.Fatalf("NewVerifier(valid) error = %v", err)
	}
}

func TestVerifyRefusesOversizedAndGarbage(t *testing.T) {
	t.Parallel()
	v, err := NewVerifier(Options{Issuer: "https://issuer.example", Resource: testResource, KeySet: &oidc.StaticKeySet{}})
	if err != nil {
		t.Fatal(err)
	}
	for _, raw := range []string{"", "abc", "a.b.c", strings.Repeat("a", maxTokenBytes+1), `{"payload":"x","signatures":[]}`} {
		if _, err := v.Verify(context.Background(), raw); !errors.Is(err, ErrInvalidToken) {
			t.Errorf("Verify(%.20q) error = %v, want ErrInvalidToken", raw, err)
		}
	}
}

func BenchmarkVerify(b *testing.B) {
	keys := testKeys()
	for _, k := range []testKey{keys.rsa, keys.ec} {
		for _, mode := range []string{"static", "remote"} {
			b.Run(mode+"/"+string(k.alg), func(b *testing.B) {
				clock := newTestClock()
				opts := Options{Resource: testResource, RequireATJWT: true, Now: clock.Now}
				if mode == "static" {
					opts.Issuer = "https://issuer.example"
					opts.KeySet = &oidc.StaticKeySet{PublicKeys: []crypto.PublicKey{k.priv.Public()}}
				} else {
					srv := newIssuerServer(b, k)
					opts.Issuer, opts.JWKSURL, opts.HTTPClient = srv.URL, srv.jwksURL(), srv.Client()
				}
				v, err := NewVerifier(opts)
				if err != nil {
					b.Fatal(err)
				}
				raw := sign(b, k, "at+jwt", baseClaims(opts.Issuer, clock.Now()))
				ctx := context.Background()
				if _, err := v.Verify(ctx, raw); err != nil { // warm the key cache
					b.Fatal(err)
				}
				b.ReportAllocs()
				for b.Loop() {
					if _, err := v.Verify(ctx, raw); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
