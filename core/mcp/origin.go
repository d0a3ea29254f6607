package mcp

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// OriginPolicy is the DNS-rebinding and cross-origin guard of SPEC §1.
// It is immutable after NewOriginPolicy and safe for concurrent use.
type OriginPolicy struct {
	publicOrigin string // scheme://host[:port], lower-case, default port dropped
	publicHost   string // host[:port] of the public URL, lower-case, default port dropped
	checkHost    bool
}

// NewOriginPolicy builds the policy for a server whose public URL is
// publicURL. When loopback is true (the server listens on a loopback
// address) the Host header is checked as well.
func NewOriginPolicy(publicURL string, loopback bool) (*OriginPolicy, error) {
	p := &OriginPolicy{checkHost: loopback}
	if publicURL != "" {
		u, err := url.Parse(publicURL)
		if err != nil {
			return nil, fmt.Errorf("public URL: %w", err)
		}
		if u.Host == "" {
			return nil, fmt.Errorf("public URL %q has no host", publicURL)
		}
		p.publicOrigin = canonicalOrigin(u.Scheme, u.Host)
		p.publicHost = canonicalHost(u.Scheme, u.Host)
	}
	return p, nil
}

// HostAllowed reports whether the request's Host is acceptable.
func (p *OriginPolicy) HostAllowed(host string) bool {
	if !p.checkHost {
		return true
	}
	if isLoopbackName(hostname(host)) {
		return true
	}
	return p.publicHost != "" && (canonicalHost("http", host) == p.publicHost || canonicalHost("https", host) == p.publicHost)
}

// OriginAllowed reports whether a browser Origin may call the endpoint:
// http or https on localhost, 127.0.0.1 or [::1] on any port, or exactly the
// public origin. "null" and anything unparseable are refused.
func (p *OriginPolicy) OriginAllowed(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || u.Path != "" || u.RawQuery != "" || u.User != nil {
		return false
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return false
	}
	if isLoopbackName(u.Hostname()) {
		return true
	}
	return p.publicOrigin != "" && canonicalOrigin(scheme, u.Host) == p.publicOrigin
}

// Check applies both guards to r. It returns false when r must get 403.
func (p *OriginPolicy) Check(r *http.Request) bool {
	if !p.HostAllowed(r.Host) {
		return false
	}
	if vs := r.Header.Values("Origin"); len(vs) > 0 {
		return len(vs) == 1 && p.OriginAllowed(vs[0])
	}
	return true
}

func isLoopbackName(h string) bool {
	h = strings.ToLower(h)
	return h == "localhost" || h == "127.0.0.1" || h == "::1"
}

func hostname(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]")
}

func canonicalHost(scheme, hostport string) string {
	hostport = strings.ToLower(hostport)
	h, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return hostport
	}
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		if strings.Contains(h, ":") {
			return "[" + h + "]"
		}
		return h
	}
	return hostport
}

func canonicalOrigin(scheme, hostport string) string {
	scheme = strings.ToLower(scheme)
	return scheme + "://" + canonicalHost(scheme, hostport)
}
