package origin

import (
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// FuzzOriginAllowed: whatever the header holds, an allowed Origin parses to
// http or https on a loopback name or the public host, and Allow never
// panics.
func FuzzOriginAllowed(f *testing.F) {
	for _, s := range []string{"http://localhost:6274", "https://mcp.example.com", "null", "http://127.0.0.1.evil.example",
		"http://[::1]:1", "HTTP://LOCALHOST", "http://localhost%2eevil.example", "http://user@localhost", "//localhost", "http://localhost:6274/x"} {
		f.Add(s, "localhost:8080")
	}
	p, err := NewPolicy("https://mcp.example.com", true)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, origin, host string) {
		if p.OriginAllowed(origin) {
			u, err := url.Parse(origin)
			if err != nil {
				t.Fatalf("allowed %q, which does not parse: %v", origin, err)
			}
			h := strings.ToLower(u.Hostname())
			if h != "localhost" && h != "127.0.0.1" && h != "::1" && h != "mcp.example.com" {
				t.Fatalf("allowed %q: host %q is neither loopback nor public", origin, h)
			}
		}
		if p.HostAllowed(host) {
			h := strings.ToLower(hostname(host))
			if h != "localhost" && h != "127.0.0.1" && h != "::1" && h != "mcp.example.com" {
				t.Fatalf("allowed Host %q: %q is neither loopback nor public", host, h)
			}
		}
		r := httptest.NewRequest("POST", "/", nil)
		r.Host = host
		r.Header.Set("Origin", origin)
		_ = p.Allow(r)
		_ = p.Check(r)
	})
}
