package devauth

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/kobana/kadu/core/auth"
)

func TestMetadataDocuments(t *testing.T) {
	env := newTestEnv(t, nil)
	for _, path := range []string{pathASMetadata, pathOIDCMetadata} {
		t.Run(path, func(t *testing.T) {
			resp, body := get(t, http.DefaultClient, env.issuer+path)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d", resp.StatusCode)
			}
			if got := resp.Header.Get("Access-Control-Allow-Origin"); got != "*" {
				t.Errorf("Access-Control-Allow-Origin = %q, want *", got)
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(body), &m); err != nil {
				t.Fatal(err)
			}
			wantStrings := map[string]string{
				"issuer":                 env.issuer,
				"authorization_endpoint": env.issuer + "/oauth/authorize",
				"token_endpoint":         env.issuer + "/oauth/token",
				"registration_endpoint":  env.issuer + "/oauth/register",
				"jwks_uri":               env.issuer + "/oauth/jwks",
			}
			for k, want := range wantStrings {
				if m[k] != want {
					t.Errorf("%s = %v, want %q", k, m[k], want)
				}
			}
			wantLists := map[string][]string{
				"response_types_supported":              {"code"},
				"grant_types_supported":                 {"authorization_code", "refresh_token"}, // client_credentials is off by default
				"code_challenge_methods_supported":      {"S256"},
				"token_endpoint_auth_methods_supported": {"none", "client_secret_basic", "client_secret_post"},
				"scopes_supported":                      auth.SupportedScopes(),
				"subject_types_supported":               {"public"},
				"id_token_signing_alg_values_supported": {"ES256"},
			}
			for k, want := range wantLists {
				if got := jsonStrings(m[k]); !slices.Equal(got, want) {
					t.Errorf("%s = %v, want %v", k, got, want)
				}
			}
			if m["authorization_response_iss_parameter_supported"] != true {
				t.Errorf("authorization_response_iss_parameter_supported = %v, want true", m["authorization_response_iss_parameter_supported"])
			}
		})
	}
}

// jsonStrings converts a decoded JSON array to []string.
func jsonStrings(v any) []string {
	arr, _ := v.([]any)
	out := make([]string, 0, len(arr))
	for _, x := range arr {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

func TestJWKS(t *testing.T) {
	env := newTestEnv(t, nil)
	resp, body := get(t, http.DefaultClient, env.issuer+pathJWKS)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	var set jose.JSONWebKeySet
	if err := json.Unmarshal([]byte(body), &set); err != nil {
		t.Fatal(err)
	}
	if len(set.Keys) != 1 {
		t.Fatalf("got %d keys, want 1", len(set.Keys))
	}
	k := set.Keys[0]
	if !k.IsPublic() || k.KeyID == "" || k.Algorithm != "ES256" || k.Use != "sig" {
		t.Errorf("key = public %v, kid %q, alg %q, use %q; want public ES256 sig with a kid", k.IsPublic(), k.KeyID, k.Algorithm, k.Use)
	}
	if k.KeyID != env.s.pubKey.KeyID {
		t.Errorf("kid = %q, want %q", k.KeyID, env.s.pubKey.KeyID)
	}
}

func TestCORSPreflight(t *testing.T) {
	env := newTestEnv(t, nil)
	tests := []struct {
		path       string
		wantMethod string
	}{
		{pathRegister, "POST"},
		{pathToken, "POST"},
		{pathASMetadata, "GET"},
		{pathOIDCMetadata, "GET"},
		{pathJWKS, "GET"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodOptions, env.issuer+tt.path, nil)
			req.Header.Set("Origin", "http://localhost:6274")
			req.Header.Set("Access-Control-Request-Method", tt.wantMethod)
			req.Header.Set("Access-Control-Request-Headers", "content-type, mcp-protocol-version")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusNoContent {
				t.Fatalf("status %d, want 204", resp.StatusCode)
			}
			h := resp.Header
			if got := h.Get("Access-Control-Allow-Origin"); got != "*" {
				t.Errorf("Allow-Origin = %q, want *", got)
			}
			if got := h.Get("Access-Control-Allow-Methods"); got != tt.wantMethod+", OPTIONS" {
				t.Errorf("Allow-Methods = %q, want %q", got, tt.wantMethod+", OPTIONS")
			}
			if got := h.Get("Access-Control-Allow-Headers"); got != "content-type, mcp-protocol-version" {
				t.Errorf("Allow-Headers = %q, want the requested headers", got)
			}
		})
	}

	t.Run("unsafe requested headers are not reflected", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodOptions, env.issuer+pathToken, nil)
		req.Header.Set("Access-Control-Request-Headers", "x\"y")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("Access-Control-Allow-Headers"); got != "" {
			t.Errorf("Allow-Headers = %q, want none", got)
		}
	})

	t.Run("actual responses carry Allow-Origin", func(t *testing.T) {
		status, _ := env.postJSON(t, pathRegister, map[string]any{"redirect_uris": []string{"http://localhost:6274/oauth/callback"}})
		if status != http.StatusCreated {
			t.Fatalf("register status %d", status)
		}
		req, _ := http.NewRequest(http.MethodPost, env.issuer+pathToken, nil)
		req.Header.Set("Origin", "http://localhost:6274")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("Access-Control-Allow-Origin"); got != "*" {
			t.Errorf("token error response Allow-Origin = %q, want *", got)
		}
	})
}
