package auth

import (
	"encoding/json"
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
		url := NewAuthenticator(failingVerifier{}, resource, nil).MetadataURL(nil)
		if path := MetadataPaths(resource)[0]; !strings.HasSuffix(url, path) {
			t.Errorf("MetadataURL(%q) = %q, not served at %q", resource, url, path)
		}
	}
}

// TestMetadataAliases checks that a request reaching the server under an
// alias host gets that alias as resource, in the document and in the
// challenge, and any other host the canonical one.
func TestMetadataAliases(t *testing.T) {
	const canonical, alias = "http://127.0.0.1:8080/mcp", "http://localhost:8080/mcp"
	h := MetadataHandler(canonical, "http://127.0.0.1:8080", alias)
	a := NewAuthenticator(failingVerifier{}, canonical, nil, alias)
	for host, want := range map[string]string{"localhost:8080": alias, "LOCALHOST:8080": alias, "127.0.0.1:8080": canonical, "[::1]:8080": canonical} {
		r := httptest.NewRequest(http.MethodGet, "http://"+host+"/.well-known/oauth-protected-resource/mcp", nil)
		r.Host = host
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		var doc struct{ Resource string }
		if err := json.Unmarshal(w.Body.Bytes(), &doc); err != nil || doc.Resource != want {
			t.Errorf("Host %s: resource %q, want %q (%v)", host, doc.Resource, want, err)
		}
		_, ch := a.Authenticate(r)
		wantPRM := strings.Replace(want, "/mcp", "/.well-known/oauth-protected-resource/mcp", 1)
		if !strings.Contains(ch.Header, `resource_metadata="`+wantPRM+`"`) {
			t.Errorf("Host %s: challenge %q, want metadata %s", host, ch.Header, wantPRM)
		}
	}
}
