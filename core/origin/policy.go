package origin

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// Why a request is refused. Allow wraps one of them; the message is for
// logs, never for the client.
var (
	// ErrHost: the server listens on loopback and the Host is neither a
	// loopback name nor the public host: a page whose name was rebound
	// to 127.0.0.1.
	ErrHost = errors.New("Host not allowed")
	// ErrOrigin: the browser says the request comes from a page that is
	// neither on loopback nor the public origin.
	ErrOrigin = errors.New("Origin not allowed")
	// ErrCrossSite: a state-changing request without Origin that the
	// browser marks Sec-Fetch-Site: cross-site.
	ErrCrossSite = errors.New("cross-site request without an allowed Origin")
)

// Policy is the Host and Origin guard of every public route (docs/security.md).
//
// A Policy is immutable after NewPolicy and safe for concurrent use.
type Policy struct {
	publicOrigin string // scheme://host[:port], lower-case, default port dropped
	publicHost   string // host[:port] of the public URL, lower-case, default port dropped
	checkHost    bool
}

// NewPolicy builds the policy for a server whose public URL is publicURL.
// When loopback is true (the server listens on a loopback address) the Host
// header is checked as well: behind a load balancer the Host is whatever
// the balancer sends, and the listener is not reachable by a rebound name.
func NewPolicy(publicURL string, loopback bool) (*Policy, error) {
	p := &Policy{checkHost: loopback}
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
func (p *Policy) HostAllowed(host string) bool {
	if !p.checkHost {
		return true
	}
	if isLoopbackName(hostname(host)) {
		return true
	}
	return p.publicHost != "" && (canonicalHost("http", host) == p.publicHost || canonicalHost("https", host) == p.publicHost)
}

// OriginAllowed reports whether a browser Origin may call the server:
// http or https on localhost, 127.0.0.1 or [::1] on any port, or exactly the
// public origin. "null" and anything unparseable are refused.
func (p *Policy) OriginAllowed(origin string) bool {
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

// Allow applies the rule every public route gets; nil lets r through,
// else the error wraps ErrHost, ErrOrigin or ErrCrossSite:
//
//   - the Host must pass HostAllowed;
//   - a state-changing request (any method but GET, HEAD and OPTIONS, and
//     the CORS preflight of one) must carry no Origin or exactly one that
//     passes OriginAllowed (or "null" with Sec-Fetch-Site: same-origin);
//     without an Origin, Sec-Fetch-Site must not be cross-site.
//
// Reads (GET, HEAD) from any origin pass: the metadata documents are
// CORS-open by design, and a browser cannot read the other answers without
// CORS headers. Clients that are not browsers (curl, SDKs, a presigned PUT)
// send neither Origin nor Sec-Fetch-Site and pass.
func (p *Policy) Allow(r *http.Request) error {
	if !p.HostAllowed(r.Host) {
		return fmt.Errorf("%w: %q", ErrHost, clip(r.Host))
	}
	if !stateChanging(r) {
		return nil
	}
	return p.originRule(r, true)
}

// Check is the stricter rule of the MCP endpoint and the approval page:
// Allow, and an Origin on any method, reads included, must be allowed. It
// returns false when r must get 403. A read without Origin passes whatever
// its Sec-Fetch-Site: following a link to the approval page from a chat in
// another site is a cross-site navigation.
func (p *Policy) Check(r *http.Request) bool {
	return p.Allow(r) == nil && p.originRule(r, false) == nil
}

// originRule: no Origin (and, if fetchMeta, not marked cross-site), or one
// allowed Origin.
func (p *Policy) originRule(r *http.Request, fetchMeta bool) error {
	vs := r.Header.Values("Origin")
	switch {
	case len(vs) == 0:
		if fetchMeta && strings.EqualFold(r.Header.Get("Sec-Fetch-Site"), "cross-site") {
			return ErrCrossSite
		}
		return nil
	case len(vs) == 1 && p.OriginAllowed(vs[0]):
		return nil
	case len(vs) == 1 && vs[0] == "null" && strings.EqualFold(r.Header.Get("Sec-Fetch-Site"), "same-origin"):
		// A browser sends Origin: null for a form posted from a page with
		// Referrer-Policy: no-referrer (the dev issuer's consent page), and
		// vouches for it with Sec-Fetch-Site. A sandboxed frame of another
		// site also sends null, but is marked cross-site; a rebound name
		// is same-origin to the browser but fails the Host check first.
		return nil
	}
	return fmt.Errorf("%w: %q", ErrOrigin, clip(strings.Join(vs, ", ")))
}

// stateChanging reports whether r may change state: any method but the
// safe ones, or a CORS preflight asking for such a method (refusing the
// preflight keeps the browser from sending the request at all).
func stateChanging(r *http.Request) bool {
	m := r.Method
	if m == http.MethodOptions {
		m = r.Header.Get("Access-Control-Request-Method")
		if m == "" {
			return false
		}
	}
	switch strings.ToUpper(m) {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	return true
}

// clip bounds what a refusal repeats from the request, for logs.
func clip(s string) string {
	const max = 200
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
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
