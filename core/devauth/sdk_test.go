package devauth

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/coreos/go-oidc/v3/oidc"
	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/kobana/kadu/core/auth"
)

// fakeResource is a minimal MCP resource server: it serves Protected
// Resource Metadata naming the devauth issuer and answers /mcp with 401 and
// a Bearer challenge until it gets a token that verifies.
type fakeResource struct {
	srv      *httptest.Server
	verifier *oidc.IDTokenVerifier // set once devauth is up
	issuer   string
}

func (f *fakeResource) resource() string { return f.srv.URL + "/mcp" }
func (f *fakeResource) prmURL() string {
	return f.srv.URL + "/.well-known/oauth-protected-resource/mcp"
}

func (f *fakeResource) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/.well-known/oauth-protected-resource/mcp":
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"resource":              f.resource(),
			"authorization_servers": []string{f.issuer},
			"scopes_supported":      auth.SupportedScopes(),
		})
	case "/mcp":
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if ok {
			if _, err := f.verifier.Verify(r.Context(), tok); err == nil {
				fmt.Fprint(w, "ok")
				return
			}
		}
		w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer resource_metadata=%q, scope="kadu.read"`, f.prmURL()))
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	default:
		http.NotFound(w, r)
	}
}

// TestGoSDKAuthorizationCodeHandler signs the official Go SDK client in,
// from a 401 to a token that the resource accepts, with dynamic client
// registration, PKCE, resource indicators and RFC 9207 iss checks.
func TestGoSDKAuthorizationCodeHandler(t *testing.T) {
	for _, method := range []string{"none", "", "client_secret_post"} {
		t.Run("token_endpoint_auth_method="+method, func(t *testing.T) {
			fr := &fakeResource{}
			fr.srv = httptest.NewServer(fr)
			t.Cleanup(fr.srv.Close)
			env := newTestEnv(t, func(o *Options) {
				o.Resource = fr.resource()
				o.AutoApprove = true
			})
			fr.issuer = env.issuer
			fr.verifier = oidc.NewVerifier(env.issuer, env.s.KeySet(),
				&oidc.Config{ClientID: fr.resource(), SupportedSigningAlgs: env.s.Algorithms()})

			// The fetcher plays the browser: it follows the authorization
			// URL and reads the redirect to the client's loopback listener.
			noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			fetch := func(ctx context.Context, args *sdkauth.AuthorizationArgs) (*sdkauth.AuthorizationResult, error) {
				req, err := http.NewRequestWithContext(ctx, http.MethodGet, args.URL, nil)
				if err != nil {
					return nil, err
				}
				resp, err := noFollow.Do(req)
				if err != nil {
					return nil, err
				}
				resp.Body.Close()
				loc, err := url.Parse(resp.Header.Get("Location"))
				if err != nil {
					return nil, err
				}
				q := loc.Query()
				if e := q.Get("error"); e != "" {
					return nil, fmt.Errorf("authorization failed: %s: %s", e, q.Get("error_description"))
				}
				return &sdkauth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
			}
			h, err := sdkauth.NewAuthorizationCodeHandler(&sdkauth.AuthorizationCodeHandlerConfig{
				DynamicClientRegistrationConfig: &sdkauth.DynamicClientRegistrationConfig{
					Metadata: &oauthex.ClientRegistrationMetadata{
						ClientName:              "go-sdk test",
						RedirectURIs:            []string{"http://127.0.0.1:49152/callback"},
						TokenEndpointAuthMethod: method,
						GrantTypes:              []string{"authorization_code", "refresh_token"},
						ResponseTypes:           []string{"code"},
					},
				},
				AuthorizationCodeFetcher: fetch,
				Client:                   &http.Client{},
			})
			if err != nil {
				t.Fatal(err)
			}

			ctx := context.Background()
			call := func() (*http.Request, *http.Response) {
				req, err := http.NewRequestWithContext(ctx, http.MethodPost, fr.resource(), strings.NewReader("{}"))
				if err != nil {
					t.Fatal(err)
				}
				if ts, _ := h.TokenSource(ctx); ts != nil {
					tok, err := ts.Token()
					if err != nil {
						t.Fatal(err)
					}
					tok.SetAuthHeader(req)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				return req, resp
			}

			// As the streamable client transport does: a 401 triggers
			// Authorize, then the request is retried.
			req, resp := call()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("first call: status %d, want 401", resp.StatusCode)
			}
			if err := h.Authorize(ctx, req, resp); err != nil {
				t.Fatalf("Authorize: %v", err)
			}
			_, resp = call()
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("call after Authorize: status %d, want 200", resp.StatusCode)
			}

			ts, _ := h.TokenSource(ctx)
			tok, err := ts.Token()
			if err != nil {
				t.Fatal(err)
			}
			if tok.RefreshToken == "" {
				t.Errorf("no refresh token")
			}
			_, claims := verify(t, env.s, env.issuer, fr.resource(), tok.AccessToken)
			if claims.Scope != "kadu.read" || claims.OrgID != "org_dev" || claims.Role != "owner" {
				t.Errorf("claims %+v, want kadu.read for org_dev as owner", claims)
			}
		})
	}
}
