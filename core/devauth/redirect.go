package devauth

import (
	"fmt"
	"net/url"
	"strings"
)

// Bounds on registered redirect URIs.
const (
	maxRedirectURIs   = 10
	maxRedirectURILen = 1024
)

// blockedScheme reports whether a browser following a URI with scheme
// (lower case) could run code or read local files.
func blockedScheme(scheme string) bool {
	switch scheme {
	case "javascript", "data", "file", "vbscript", "blob", "about", "filesystem":
		return true
	}
	return false
}

// checkRedirectURI reports why uri may not be registered, or nil. Allowed:
// http on a loopback host (localhost, 127.0.0.1, [::1]), https, and
// private-use schemes such as cursor:// or vscode:// (RFC 8252 §7.1).
// Refused: fragments, user info, dangerous schemes, plain http elsewhere.
func checkRedirectURI(uri string) error {
	if uri == "" {
		return fmt.Errorf("empty redirect URI")
	}
	if len(uri) > maxRedirectURILen {
		return fmt.Errorf("redirect URI longer than %d bytes", maxRedirectURILen)
	}
	for _, r := range uri {
		if r <= 0x20 || r == 0x7f {
			return fmt.Errorf("redirect URI %q contains a space or control character", uri)
		}
	}
	if strings.Contains(uri, "#") {
		return fmt.Errorf("redirect URI %q must not contain a fragment", uri)
	}
	u, err := url.Parse(uri)
	if err != nil {
		return fmt.Errorf("redirect URI %q does not parse: %w", uri, err)
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme == "" {
		return fmt.Errorf("redirect URI %q must be absolute", uri)
	}
	if blockedScheme(scheme) {
		return fmt.Errorf("redirect URI %q uses the forbidden scheme %q", uri, scheme)
	}
	if u.User != nil {
		return fmt.Errorf("redirect URI %q must not contain user info", uri)
	}
	switch scheme {
	case "http":
		if !isLoopbackHost(u.Hostname()) {
			return fmt.Errorf("redirect URI %q: plain http is allowed only to localhost, 127.0.0.1 or [::1]; use https", uri)
		}
	case "https":
		if u.Host == "" {
			return fmt.Errorf("redirect URI %q has no host", uri)
		}
	default:
		if u.Host == "" && u.Path == "" && u.Opaque == "" {
			return fmt.Errorf("redirect URI %q has nothing after the scheme", uri)
		}
	}
	return nil
}

// isLoopbackHost reports whether host (from url.URL.Hostname) is one of the
// loopback names RFC 8252 §7.3 lets a native client listen on.
func isLoopbackHost(host string) bool {
	return host == "localhost" || host == "127.0.0.1" || host == "::1"
}

// matchRedirectURI reports whether requested may be used as the redirect
// URI of a client that registered registered. The match is exact, except
// that for http loopback URIs the port is ignored (RFC 8252 §7.3: native
// apps listen on an ephemeral port) and an empty path equals "/".
func matchRedirectURI(registered, requested string) bool {
	if registered == requested {
		return true
	}
	reg, err := url.Parse(registered)
	if err != nil || reg.Scheme != "http" || !isLoopbackHost(reg.Hostname()) {
		return false
	}
	req, err := url.Parse(requested)
	if err != nil || req.Scheme != "http" || req.User != nil || req.Fragment != "" || strings.Contains(requested, "#") {
		return false
	}
	path := func(u *url.URL) string {
		if u.EscapedPath() == "" {
			return "/"
		}
		return u.EscapedPath()
	}
	return req.Hostname() == reg.Hostname() &&
		path(req) == path(reg) &&
		req.RawQuery == reg.RawQuery &&
		req.ForceQuery == reg.ForceQuery
}

// redirectWith returns uri with params added to its query, keeping the
// query it already has (RFC 6749 §3.1.2).
func redirectWith(uri string, params url.Values) string {
	u, err := url.Parse(uri)
	if err != nil {
		// Unreachable: uri was validated at registration and matched since.
		return uri
	}
	q := u.Query()
	for k, vs := range params {
		for _, v := range vs {
			if v != "" {
				q.Set(k, v)
			}
		}
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// cspFormTarget returns a CSP source that allows a form to redirect to uri
// (Chrome applies form-action to the redirect after the POST), or "" if
// uri's origin cannot be written safely as a source.
func cspFormTarget(uri string) string {
	u, err := url.Parse(uri)
	if err != nil {
		return ""
	}
	var src string
	switch u.Scheme {
	case "http", "https":
		src = u.Scheme + "://" + u.Host
		if u.Scheme == "http" && isLoopbackHost(u.Hostname()) {
			src = "http://" + hostForCSP(u.Hostname()) + ":*"
		}
	default:
		src = u.Scheme + ":"
	}
	for _, r := range src {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
			strings.ContainsRune(".-+:/[]*", r)
		if !ok {
			return ""
		}
	}
	return src
}

func hostForCSP(host string) string {
	if strings.Contains(host, ":") {
		return "[" + host + "]"
	}
	return host
}
