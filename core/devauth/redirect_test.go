package devauth

import (
	"net/url"
	"testing"
)

func TestMatchRedirectURI(t *testing.T) {
	tests := []struct {
		name       string
		registered string
		requested  string
		want       bool
	}{
		{"exact https", "https://vscode.dev/redirect", "https://vscode.dev/redirect", true},
		{"https port differs", "https://app.example.com/cb", "https://app.example.com:8443/cb", false},
		{"https path differs", "https://app.example.com/cb", "https://app.example.com/cb2", false},
		{"loopback any port", "http://127.0.0.1:33418/cb", "http://127.0.0.1:54321/cb", true},
		{"loopback registered without port", "http://127.0.0.1/cb", "http://127.0.0.1:54321/cb", true},
		{"loopback localhost any port", "http://localhost:6274/oauth/callback", "http://localhost:1234/oauth/callback", true},
		{"loopback IPv6 any port", "http://[::1]:80/cb", "http://[::1]:9999/cb", true},
		{"loopback empty path equals slash", "http://127.0.0.1:33418", "http://127.0.0.1:50000/", true},
		{"loopback path differs", "http://127.0.0.1:33418/cb", "http://127.0.0.1:33418/other", false},
		{"loopback host differs", "http://localhost:33418/cb", "http://127.0.0.1:33418/cb", false},
		{"loopback query differs", "http://127.0.0.1/cb?a=1", "http://127.0.0.1:1/cb?a=2", false},
		{"loopback to https", "http://127.0.0.1/cb", "https://127.0.0.1:1/cb", false},
		{"loopback with fragment", "http://127.0.0.1/cb", "http://127.0.0.1:1/cb#x", false},
		{"loopback with user info", "http://127.0.0.1/cb", "http://evil@127.0.0.1:1/cb", false},
		{"private-use exact", "cursor://anysphere.cursor-retrieval/oauth/callback", "cursor://anysphere.cursor-retrieval/oauth/callback", true},
		{"private-use differs", "cursor://anysphere.cursor-retrieval/oauth/callback", "cursor://anysphere.cursor-retrieval/other", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := matchRedirectURI(tt.registered, tt.requested); got != tt.want {
				t.Fatalf("matchRedirectURI(%q, %q) = %v, want %v", tt.registered, tt.requested, got, tt.want)
			}
		})
	}
}

func TestCheckRedirectURI(t *testing.T) {
	tests := []struct {
		uri    string
		wantOK bool
	}{
		{"http://localhost:6274/oauth/callback", true},
		{"http://127.0.0.1:33418", true},
		{"http://[::1]/cb", true},
		{"https://vscode.dev/redirect", true},
		{"cursor://anysphere.cursor-retrieval/oauth/callback", true},
		{"vscode://vscode.github-authentication/did-authenticate", true},
		{"com.example.app:/oauth2redirect", true},
		{"JavaScript:alert(1)", false},
		{"data:text/html,x", false},
		{"file:///etc/passwd", false},
		{"vbscript:x", false},
		{"https://app.example.com/cb#", false},
		{"http://example.com/cb", false},
		{"http://127.0.0.2/cb", false},
		{"https://user:pass@app.example.com/cb", false},
		{"https:///nohost", false},
		{"https://app.example.com/a b", false},
		{"cb", false},
		{"", false},
	}
	for _, tt := range tests {
		t.Run(tt.uri, func(t *testing.T) {
			t.Parallel()
			err := checkRedirectURI(tt.uri)
			if (err == nil) != tt.wantOK {
				t.Fatalf("checkRedirectURI(%q) = %v, want ok %v", tt.uri, err, tt.wantOK)
			}
		})
	}
}

func TestRedirectWithKeepsQuery(t *testing.T) {
	got := redirectWith("http://127.0.0.1:5000/cb?app=1", url.Values{"code": {"c"}, "state": {""}, "iss": {"http://x"}})
	u, err := url.Parse(got)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	if q.Get("app") != "1" || q.Get("code") != "c" || q.Get("iss") != "http://x" || q.Has("state") {
		t.Fatalf("redirectWith = %s", got)
	}
}

func TestCSPFormTarget(t *testing.T) {
	tests := []struct{ uri, want string }{
		{"http://127.0.0.1:5000/cb", "http://127.0.0.1:*"},
		{"http://[::1]:5000/cb", "http://[::1]:*"},
		{"https://vscode.dev/redirect", "https://vscode.dev"},
		{"cursor://anysphere.cursor-retrieval/cb", "cursor:"},
	}
	for _, tt := range tests {
		if got := cspFormTarget(tt.uri); got != tt.want {
			t.Errorf("cspFormTarget(%q) = %q, want %q", tt.uri, got, tt.want)
		}
	}
}
