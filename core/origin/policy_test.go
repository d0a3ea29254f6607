package origin

import (
	"errors"
	"net/http/httptest"
	"testing"
)

func TestHostAndOriginAllowed(t *testing.T) {
	p, err := NewPolicy("https://MCP.example.com:443", true)
	if err != nil {
		t.Fatal(err)
	}
	origins := []struct {
		origin string
		want   bool
	}{
		{"http://localhost:6274", true},
		{"https://127.0.0.1", true},
		{"http://[::1]:3000", true},
		{"http://LOCALHOST:1", true},
		{"https://mcp.example.com", true},
		{"https://mcp.example.com:443", true},
		{"https://mcp.example.com:8443", false},
		{"http://mcp.example.com", false},
		{"null", false},
		{"", false},
		{"file://localhost", false},
		{"chrome-extension://abc", false},
		{"http://localhost.evil.example", false},
		{"http://127.0.0.1.evil.example", false},
		{"http://localhost:6274/path", false},
		{"http://user@localhost", false},
	}
	for _, tt := range origins {
		if got := p.OriginAllowed(tt.origin); got != tt.want {
			t.Errorf("OriginAllowed(%q) = %v, want %v", tt.origin, got, tt.want)
		}
	}
	hosts := []struct {
		host string
		want bool
	}{
		{"localhost:8080", true},
		{"127.0.0.1", true},
		{"[::1]:8080", true},
		{"mcp.example.com", true},
		{"mcp.example.com:443", true},
		{"MCP.EXAMPLE.COM", true},
		{"mcp.example.com:8443", false},
		{"attacker.example:8080", false},
		{"127.0.0.1.nip.io:8080", false},
		{"", false},
	}
	for _, tt := range hosts {
		if got := p.HostAllowed(tt.host); got != tt.want {
			t.Errorf("HostAllowed(%q) = %v, want %v", tt.host, got, tt.want)
		}
	}
	// Behind a load balancer (not on loopback) the Host is not checked.
	open, _ := NewPolicy("https://mcp.example.com", false)
	if !open.HostAllowed("10.0.0.7:8080") {
		t.Error("a non-loopback listener must not check Host")
	}
	if _, err := NewPolicy("not a url", true); err == nil {
		t.Error("a public URL without a host must be refused")
	}
}

// TestAllow replays the requests a rebinding page, a cross-site form and
// the legitimate clients send, against a loopback server with a public URL.
func TestAllow(t *testing.T) {
	p, err := NewPolicy("http://127.0.0.1:8080", true)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		method  string
		host    string
		headers map[string]string
		wantErr error // nil: allowed
	}{
		// The review's attack chain: a page whose name resolves to 127.0.0.1.
		{name: "rebound register", method: "POST", host: "evil.example:8080",
			headers: map[string]string{"Origin": "http://evil.example:8080", "Sec-Fetch-Site": "same-origin"}, wantErr: ErrHost},
		{name: "rebound read", method: "GET", host: "evil.example:8080",
			headers: map[string]string{"Sec-Fetch-Site": "same-origin"}, wantErr: ErrHost},
		{name: "rebound without Origin", method: "POST", host: "evil.example:8080", wantErr: ErrHost},
		{name: "rebound preflight", method: "OPTIONS", host: "evil.example:8080",
			headers: map[string]string{"Origin": "http://evil.example:8080", "Access-Control-Request-Method": "POST"}, wantErr: ErrHost},
		// A page on another site posting to the real loopback name.
		{name: "cross-site post", method: "POST", host: "127.0.0.1:8080",
			headers: map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}, wantErr: ErrOrigin},
		{name: "cross-site put", method: "PUT", host: "127.0.0.1:8080",
			headers: map[string]string{"Origin": "https://evil.example"}, wantErr: ErrOrigin},
		{name: "cross-site delete", method: "DELETE", host: "127.0.0.1:8080",
			headers: map[string]string{"Origin": "https://evil.example"}, wantErr: ErrOrigin},
		{name: "Origin null post", method: "POST", host: "127.0.0.1:8080",
			headers: map[string]string{"Origin": "null"}, wantErr: ErrOrigin},
		{name: "Origin null post from a sandboxed cross-site frame", method: "POST", host: "127.0.0.1:8080",
			headers: map[string]string{"Origin": "null", "Sec-Fetch-Site": "cross-site"}, wantErr: ErrOrigin},
		{name: "Origin null post from a no-referrer page of this origin", method: "POST", host: "127.0.0.1:8080",
			headers: map[string]string{"Origin": "null", "Sec-Fetch-Site": "same-origin"}},
		{name: "Origin null same-origin post to a rebound name", method: "POST", host: "evil.example:8080",
			headers: map[string]string{"Origin": "null", "Sec-Fetch-Site": "same-origin"}, wantErr: ErrHost},
		{name: "cross-site post without Origin", method: "POST", host: "127.0.0.1:8080",
			headers: map[string]string{"Sec-Fetch-Site": "cross-site"}, wantErr: ErrCrossSite},
		{name: "cross-site preflight for POST", method: "OPTIONS", host: "127.0.0.1:8080",
			headers: map[string]string{"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"}, wantErr: ErrOrigin},
		{name: "lowercase preflight method", method: "OPTIONS", host: "127.0.0.1:8080",
			headers: map[string]string{"Origin": "https://evil.example", "Access-Control-Request-Method": "post"}, wantErr: ErrOrigin},
		// Reads stay open: the metadata documents are CORS-open.
		{name: "cross-site metadata read", method: "GET", host: "127.0.0.1:8080",
			headers: map[string]string{"Origin": "https://client.example", "Sec-Fetch-Site": "cross-site"}},
		{name: "cross-site preflight for GET", method: "OPTIONS", host: "127.0.0.1:8080",
			headers: map[string]string{"Origin": "https://client.example", "Access-Control-Request-Method": "GET"}},
		{name: "link followed from another site", method: "GET", host: "127.0.0.1:8080",
			headers: map[string]string{"Sec-Fetch-Site": "cross-site"}},
		// Legitimate clients.
		{name: "MCP Inspector registers", method: "POST", host: "127.0.0.1:8080",
			headers: map[string]string{"Origin": "http://localhost:6274", "Sec-Fetch-Site": "cross-site"}},
		{name: "Inspector preflight", method: "OPTIONS", host: "localhost:8080",
			headers: map[string]string{"Origin": "http://localhost:6274", "Access-Control-Request-Method": "POST"}},
		{name: "page on the public origin", method: "POST", host: "127.0.0.1:8080",
			headers: map[string]string{"Origin": "http://127.0.0.1:8080", "Sec-Fetch-Site": "same-origin"}},
		{name: "same-site page without Origin", method: "POST", host: "127.0.0.1:8080",
			headers: map[string]string{"Sec-Fetch-Site": "same-site"}},
		{name: "curl", method: "POST", host: "127.0.0.1:8080"},
		{name: "presigned PUT without Origin", method: "PUT", host: "127.0.0.1:8080"},
		{name: "[::1] Host", method: "POST", host: "[::1]:8080"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := httptest.NewRequest(tt.method, "http://127.0.0.1:8080/api/v1/tasks", nil)
			r.Host = tt.host
			for k, v := range tt.headers {
				r.Header.Set(k, v)
			}
			err := p.Allow(r)
			if tt.wantErr == nil && err != nil || tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Fatalf("Allow() = %v, want %v", err, tt.wantErr)
			}
		})
	}
}

func TestAllowTwoOriginsRefused(t *testing.T) {
	p, _ := NewPolicy("", true)
	r := httptest.NewRequest("POST", "/", nil)
	r.Host = "localhost"
	r.Header.Add("Origin", "http://localhost")
	r.Header.Add("Origin", "https://evil.example")
	if err := p.Allow(r); !errors.Is(err, ErrOrigin) {
		t.Fatalf("two Origin headers: Allow() = %v, want ErrOrigin", err)
	}
}

// TestCheck is the rule of /mcp and /approve: an Origin must be allowed on
// reads too, and a navigation without Origin passes.
func TestCheck(t *testing.T) {
	p, _ := NewPolicy("https://mcp.example.com", false)
	tests := []struct {
		name    string
		method  string
		headers map[string]string
		want    bool
	}{
		{name: "foreign Origin on a read", method: "GET", headers: map[string]string{"Origin": "https://evil.example"}, want: false},
		{name: "Origin null on a read", method: "GET", headers: map[string]string{"Origin": "null"}, want: false},
		{name: "foreign preflight", method: "OPTIONS", headers: map[string]string{"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"}, want: false},
		{name: "cross-site navigation", method: "GET", headers: map[string]string{"Sec-Fetch-Site": "cross-site"}, want: true},
		{name: "cross-site post without Origin", method: "POST", headers: map[string]string{"Sec-Fetch-Site": "cross-site"}, want: false},
		{name: "public origin", method: "POST", headers: map[string]string{"Origin": "https://mcp.example.com"}, want: true},
		{name: "loopback origin", method: "POST", headers: map[string]string{"Origin": "http://localhost:6274"}, want: true},
		{name: "no headers", method: "POST", want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := httptest.NewRequest(tt.method, "https://mcp.example.com/mcp", nil)
			for k, v := range tt.headers {
				r.Header.Set(k, v)
			}
			if got := p.Check(r); got != tt.want {
				t.Fatalf("Check() = %v, want %v", got, tt.want)
			}
		})
	}
}
