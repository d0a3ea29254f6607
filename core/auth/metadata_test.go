package auth

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestMetadataHandler(t *testing.T) {
	const wantBody = `{"resource":"https://kadu.example/mcp","authorization_servers":["https://issuer.example/t?a=1&b=2"],"scopes_supported":["kadu.read","kadu.write","kadu.run","kadu.admin"],"bearer_methods_supported":["header"],"resource_name":"Kadu"}`
	h := MetadataHandler(testResource+"/", "https://issuer.example/t?a=1&b=2")

	tests := []struct {
		name       string
		method     string
		reqHeaders map[string]string
		wantStatus int
		wantBody   string
		wantHeader map[string]string
	}{
		{
			name: "GET", method: http.MethodGet, wantStatus: 200, wantBody: wantBody,
			wantHeader: map[string]string{
				"Content-Type": "application/json", "Access-Control-Allow-Origin": "*",
				"Cache-Control": "public, max-age=300",
			},
		},
		{
			name: "GET with a token is the same", method: http.MethodGet, reqHeaders: map[string]string{"Authorization": "Bearer junk"},
			wantStatus: 200, wantBody: wantBody,
		},
		{
			name: "HEAD", method: http.MethodHead, wantStatus: 200,
			wantHeader: map[string]string{"Access-Control-Allow-Origin": "*"},
		},
		{
			name: "preflight", method: http.MethodOptions,
			reqHeaders: map[string]string{
				"Origin": "http://localhost:6274", "Access-Control-Request-Method": "GET",
				"Access-Control-Request-Headers": "mcp-protocol-version, authorization",
			},
			wantStatus: 204,
			wantHeader: map[string]string{
				"Access-Control-Allow-Origin":  "*",
				"Access-Control-Allow-Methods": "GET, OPTIONS",
				"Access-Control-Allow-Headers": "mcp-protocol-version, authorization",
			},
		},
		{
			name: "preflight without requested headers", method: http.MethodOptions, wantStatus: 204,
			wantHeader: map[string]string{"Access-Control-Allow-Methods": "GET, OPTIONS", "Access-Control-Allow-Headers": ""},
		},
		{
			name: "POST", method: http.MethodPost, wantStatus: 405,
			wantHeader: map[string]string{"Allow": "GET, HEAD, OPTIONS", "Access-Control-Allow-Origin": "*"},
		},
		{name: "DELETE", method: http.MethodDelete, wantStatus: 405},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, "/.well-known/oauth-protected-resource/mcp", nil)
			for k, v := range tt.reqHeaders {
				r.Header.Set(k, v)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tt.wantStatus {
				t.Fatalf("status = %d, want %d", w.Code, tt.wantStatus)
			}
			if tt.wantBody != "" && w.Body.String() != tt.wantBody {
				t.Fatalf("body = %s\nwant   %s", w.Body, tt.wantBody)
			}
			if tt.method == http.MethodHead && w.Body.Len() != 0 {
				t.Fatalf("HEAD body = %q", w.Body)
			}
			for k, want := range tt.wantHeader {
				if got := w.Header().Get(k); got != want {
					t.Errorf("%s = %q, want %q", k, got, want)
				}
			}
		})
	}
}

func TestMetadataPaths(t *testing.T) {
	tests := []struct {
		resource string
		want     []string
	}{
		{"https://kadu.example/mcp", []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"}},
		{"https://kadu.example/mcp/", []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"}},
		{"http://localhost:8080/a/b", []string{"/.well-known/oauth-protected-resource/a/b", "/.well-known/oauth-protected-resource"}},
		{"https://kadu.example/", []string{"/.well-known/oauth-protected-resource"}},
		{"https://kadu.example", []string{"/.well-known/oauth-protected-resource"}},
	}
	for _, tt := range tests {
		if got := MetadataPaths(tt.resource); strings.Join(got, " ") != strings.Join(tt.want, " ") {
			t.Errorf("MetadataPaths(%q) = %q, want %q", tt.resource, got, tt.want)
		}
	}
}

// The URL in every challenge must be where MetadataPaths mounts the handler.
func TestMetadataURLMatchesPaths(t *testing.T) {
	for _, resource := range []string{testResource, "http://127.0.0.1:9000/x/mcp/", "https://kadu.example"} {
		url := NewAuthenticator(failingVerifier{}, resource, nil).MetadataURL()
		if path := MetadataPaths(resource)[0]; !strings.HasSuffix(url, path) {
			t.Errorf("MetadataURL(%q) = %q, not served at %q", resource, url, path)
		}
	}
}
