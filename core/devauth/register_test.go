package devauth

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
)

func TestRegister(t *testing.T) {
	env := newTestEnv(t, func(o *Options) { o.ClientCredentialsRole = "viewer" })
	tests := []struct {
		name       string
		body       map[string]any
		wantError  string // "" = created
		wantMethod string
		wantGrants []string
		wantSecret bool
	}{
		{
			name: "public client, loopback",
			body: map[string]any{"client_name": "MCP Inspector", "token_endpoint_auth_method": "none",
				"redirect_uris": []string{"http://localhost:6274/oauth/callback", "http://localhost:6274/oauth/callback/debug"}},
			wantMethod: "none", wantGrants: []string{"authorization_code", "refresh_token"},
		},
		{
			name: "VS Code shape: loopback without path and https",
			body: map[string]any{"client_name": "Visual Studio Code", "token_endpoint_auth_method": "none",
				"grant_types": []string{"authorization_code", "refresh_token"}, "response_types": []string{"code"},
				"redirect_uris": []string{"http://127.0.0.1:33418", "https://vscode.dev/redirect"}},
			wantMethod: "none", wantGrants: []string{"authorization_code", "refresh_token"},
		},
		{
			name: "private-use scheme",
			body: map[string]any{"token_endpoint_auth_method": "none",
				"redirect_uris": []string{"cursor://anysphere.cursor-retrieval/oauth/callback"}},
			wantMethod: "none", wantGrants: []string{"authorization_code", "refresh_token"},
		},
		{
			name:       "IPv6 loopback",
			body:       map[string]any{"token_endpoint_auth_method": "none", "redirect_uris": []string{"http://[::1]:8080/cb"}},
			wantMethod: "none", wantGrants: []string{"authorization_code", "refresh_token"},
		},
		{
			name:       "no method defaults to client_secret_basic",
			body:       map[string]any{"redirect_uris": []string{"https://app.example.com/cb"}},
			wantMethod: "client_secret_basic", wantGrants: []string{"authorization_code", "refresh_token"}, wantSecret: true,
		},
		{
			name: "confidential client_credentials only, no redirect",
			body: map[string]any{"token_endpoint_auth_method": "client_secret_post",
				"grant_types": []string{"client_credentials"}},
			wantMethod: "client_secret_post", wantGrants: []string{"client_credentials"}, wantSecret: true,
		},
		{
			name:      "javascript: refused",
			body:      map[string]any{"redirect_uris": []string{"javascript:alert(1)"}},
			wantError: "invalid_redirect_uri",
		},
		{
			name:      "data: refused",
			body:      map[string]any{"redirect_uris": []string{"data:text/html,<script>alert(1)</script>"}},
			wantError: "invalid_redirect_uri",
		},
		{
			name:      "file: refused",
			body:      map[string]any{"redirect_uris": []string{"file:///etc/passwd"}},
			wantError: "invalid_redirect_uri",
		},
		{
			name:      "fragment refused",
			body:      map[string]any{"redirect_uris": []string{"https://app.example.com/cb#frag"}},
			wantError: "invalid_redirect_uri",
		},
		{
			name:      "plain http to a non-loopback host refused",
			body:      map[string]any{"redirect_uris": []string{"http://evil.example.com/cb"}},
			wantError: "invalid_redirect_uri",
		},
		{
			name:      "relative URI refused",
			body:      map[string]any{"redirect_uris": []string{"/cb"}},
			wantError: "invalid_redirect_uri",
		},
		{
			name:      "no redirect_uris for the code grant",
			body:      map[string]any{"client_name": "x"},
			wantError: "invalid_redirect_uri",
		},
		{
			name:      "too many redirect_uris",
			body:      map[string]any{"redirect_uris": slices.Repeat([]string{"http://localhost/cb"}, maxRedirectURIs+1)},
			wantError: "invalid_redirect_uri",
		},
		{
			name:      "overlong redirect_uri",
			body:      map[string]any{"redirect_uris": []string{"https://app.example.com/" + strings.Repeat("a", maxRedirectURILen)}},
			wantError: "invalid_redirect_uri",
		},
		{
			name:      "unknown auth method",
			body:      map[string]any{"token_endpoint_auth_method": "private_key_jwt", "redirect_uris": []string{"http://localhost/cb"}},
			wantError: "invalid_client_metadata",
		},
		{
			name:      "unknown grant type",
			body:      map[string]any{"grant_types": []string{"implicit"}, "redirect_uris": []string{"http://localhost/cb"}},
			wantError: "invalid_client_metadata",
		},
		{
			name:      "public client_credentials",
			body:      map[string]any{"token_endpoint_auth_method": "none", "grant_types": []string{"client_credentials"}},
			wantError: "invalid_client_metadata",
		},
		{
			name:      "token response type",
			body:      map[string]any{"response_types": []string{"token"}, "redirect_uris": []string{"http://localhost/cb"}},
			wantError: "invalid_client_metadata",
		},
		{
			name:      "overlong client_name",
			body:      map[string]any{"client_name": strings.Repeat("n", maxClientNameLen+1), "redirect_uris": []string{"http://localhost/cb"}},
			wantError: "invalid_client_metadata",
		},
		{
			name:      "redirect_uris not an array",
			body:      map[string]any{"redirect_uris": "http://localhost/cb"},
			wantError: "invalid_client_metadata",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			status, raw := env.postJSON(t, pathRegister, tt.body)
			var got map[string]any
			if err := json.Unmarshal(raw, &got); err != nil {
				t.Fatalf("response is not JSON: %s", raw)
			}
			if tt.wantError != "" {
				if status != http.StatusBadRequest || got["error"] != tt.wantError {
					t.Fatalf("got %d %v, want 400 %s", status, got, tt.wantError)
				}
				if d, _ := got["error_description"].(string); d == "" {
					t.Errorf("error_description is empty")
				}
				return
			}
			if status != http.StatusCreated {
				t.Fatalf("status %d, body %s", status, raw)
			}
			if id, _ := got["client_id"].(string); id == "" {
				t.Errorf("no client_id")
			}
			if _, ok := got["client_id_issued_at"].(float64); !ok {
				t.Errorf("no client_id_issued_at")
			}
			if got["token_endpoint_auth_method"] != tt.wantMethod {
				t.Errorf("token_endpoint_auth_method = %v, want %s", got["token_endpoint_auth_method"], tt.wantMethod)
			}
			if g := jsonStrings(got["grant_types"]); !slices.Equal(g, tt.wantGrants) {
				t.Errorf("grant_types = %v, want %v", g, tt.wantGrants)
			}
			if uris, want := jsonStrings(got["redirect_uris"]), tt.body["redirect_uris"]; want != nil && !slices.Equal(uris, want.([]string)) {
				t.Errorf("redirect_uris = %v, want %v", uris, want)
			}
			secret, _ := got["client_secret"].(string)
			if (secret != "") != tt.wantSecret {
				t.Errorf("client_secret = %q, want one: %v", secret, tt.wantSecret)
			}
			if tt.wantSecret && got["client_secret_expires_at"] != float64(0) {
				t.Errorf("client_secret_expires_at = %v, want 0", got["client_secret_expires_at"])
			}
			if name, ok := tt.body["client_name"]; ok && got["client_name"] != name {
				t.Errorf("client_name = %v, want %v", got["client_name"], name)
			}
		})
	}
}

func TestRegisterRejectsHugeBody(t *testing.T) {
	env := newTestEnv(t, nil)
	status, raw := env.postJSON(t, pathRegister, map[string]any{"client_name": strings.Repeat("x", maxRegistrationBody)})
	if status != http.StatusBadRequest || !strings.Contains(string(raw), "invalid_client_metadata") {
		t.Fatalf("got %d %s, want 400 invalid_client_metadata", status, raw)
	}
}

func TestClientSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	env1 := newTestEnv(t, func(o *Options) { o.DataDir = dir })
	cl := env1.publicClient(t, "http://127.0.0.1/cb")

	env2 := newTestEnv(t, func(o *Options) { o.DataDir = dir })
	if _, err := env2.s.openClient(cl.ID); err != nil {
		t.Fatalf("second server does not know the client: %v", err)
	}
	other := newTestEnv(t, nil)
	if _, err := other.s.openClient(cl.ID); err == nil {
		t.Fatalf("a server with other keys accepted the client")
	}
}
