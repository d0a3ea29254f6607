package mcp

import "testing"

func TestOriginPolicy(t *testing.T) {
	p, err := NewOriginPolicy("https://MCP.example.com:443", true)
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
	open, _ := NewOriginPolicy("https://mcp.example.com", false)
	if !open.HostAllowed("10.0.0.7:8080") {
		t.Error("a non-loopback listener must not check Host")
	}
	if _, err := NewOriginPolicy("not a url", true); err == nil {
		t.Error("a public URL without a host must be refused")
	}
}
