package webhook

import (
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// MaxURLLength bounds an endpoint URL. Longer ones are refused rather than
// stored and sent on every delivery.
const MaxURLLength = 2048

// URLError reports an endpoint URL that ValidateURL refuses. Problem is a
// sentence for the person who typed the URL, naming the field ("url") and
// saying what to change; it never repeats the URL, which may carry a
// password or a token.
type URLError struct {
	Problem string
}

func (e *URLError) Error() string { return e.Problem }

func urlError(problem string) *URLError { return &URLError{Problem: problem} }

// ValidateURL applies the endpoint URL policy of docs/files-webhooks-limits.md#webhooks when a webhook is
// created or its URL changed: an absolute https URL with a host (a port is
// allowed), no user name or password and no fragment. Plain http is allowed
// only when the host is in allowHosts (see ClientOptions.AllowHosts for the
// matching rules). An IP literal must be a public address unless
// allow-listed; host names are not resolved here, because what a name
// resolves to can change — the Client checks the address at connect time.
//
// The error is a *URLError whose message can be shown as is in a 422.
func ValidateURL(raw string, allowHosts []string) error {
	_, err := checkURL(raw, newAllowList(allowHosts))
	return err
}

// checkURL is ValidateURL with a parsed allow-list; Client.Send runs it
// before every attempt so a URL stored under an older policy is refused too.
// It returns the parsed URL.
func checkURL(raw string, allow allowList) (*url.URL, error) {
	if raw == "" {
		return nil, urlError("url: required; give the https address that should receive the events")
	}
	if len(raw) > MaxURLLength {
		return nil, urlError("url: longer than " + strconv.Itoa(MaxURLLength) + " characters; use a shorter address")
	}
	u, err := url.Parse(raw)
	if err != nil {
		// url.Parse's message quotes the whole URL, password included.
		return nil, urlError("url: not a valid URL; give an absolute address such as https://hooks.example.com/kadu")
	}
	if u.Scheme != "https" && u.Scheme != "http" {
		return nil, urlError("url: must start with https://")
	}
	if u.Opaque != "" || u.Host == "" {
		return nil, urlError("url: host required; give an absolute address such as https://hooks.example.com/kadu")
	}
	if u.User != nil {
		return nil, urlError("url: must not contain a user name or password; receivers authenticate deliveries by the webhook-signature header")
	}
	if strings.Contains(raw, "#") {
		return nil, urlError("url: must not contain a fragment (#…); fragments are never sent to the receiver")
	}
	host := u.Hostname()
	if host == "" {
		return nil, urlError("url: host required; give an absolute address such as https://hooks.example.com/kadu")
	}
	if err := checkPort(u); err != nil {
		return nil, err
	}
	addr, isIP := parseIPHost(host)
	if !isIP && !validHostName(host) {
		return nil, urlError("url: host is not a valid DNS name; use letters, digits and hyphens (xn-- form for international names)")
	}
	if !isIP && numericTLD(host) {
		return nil, urlError("url: host looks like an IPv4 address in a non-standard form; write it as four decimal numbers (a.b.c.d) or use a DNS name")
	}
	allowed := allow.contains(host)
	if u.Scheme == "http" && !allowed {
		return nil, urlError("url: must use https; plain http is accepted only for hosts an operator allow-lists for development")
	}
	if !allowed && isLocalhost(host) {
		return nil, urlError("url: localhost names reach this server, not a receiver; use the receiver's public address")
	}
	if isIP {
		if why := refusal(addr, allowed); why != "" {
			return nil, urlError("url: " + addr.String() + " is not a public address (" + why + "); webhooks are delivered only to public addresses")
		}
	}
	return u, nil
}

func checkPort(u *url.URL) error {
	if strings.HasSuffix(u.Host, ":") {
		return urlError("url: port is empty; remove the ':' or give a port from 1 to 65535")
	}
	p := u.Port()
	if p == "" {
		return nil
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 || n > 65535 {
		return urlError("url: port must be a number from 1 to 65535")
	}
	return nil
}

// parseIPHost reports whether host (as url.URL.Hostname returns it, without
// brackets) is an IP literal.
func parseIPHost(host string) (netip.Addr, bool) {
	a, err := netip.ParseAddr(host)
	return a, err == nil
}

// validHostName accepts an ASCII DNS name: labels of letters, digits, '-' and
// '_' (seen in real service names), 1 to 63 characters, not starting or
// ending with '-', at most 253 characters in all, one optional trailing dot.
// Percent-encoded or Unicode names are refused so that the name checked is
// the name resolved.
func validHostName(h string) bool {
	h = strings.TrimSuffix(h, ".")
	if h == "" || len(h) > 253 {
		return false
	}
	for label := range strings.SplitSeq(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// numericTLD reports whether the last label of a host name is a number
// ("2130706433", "0x7f.1"): URL parsers and C resolvers read such names as
// IPv4 addresses in legacy forms, so they are refused rather than guessed at.
func numericTLD(h string) bool {
	h = strings.ToLower(strings.TrimSuffix(h, "."))
	last := h[strings.LastIndexByte(h, '.')+1:]
	if hex, ok := strings.CutPrefix(last, "0x"); ok {
		return strings.Trim(hex, "0123456789abcdef") == ""
	}
	return last != "" && strings.Trim(last, "0123456789") == ""
}

// isLocalhost reports whether h is "localhost" or a name under it, which
// RFC 6761 reserves for the loopback interface.
func isLocalhost(h string) bool {
	h = strings.ToLower(strings.TrimSuffix(h, "."))
	return h == "localhost" || strings.HasSuffix(h, ".localhost")
}

// allowList is the operator's list of development hosts, normalised once.
type allowList struct {
	names    map[string]bool // lower case, no trailing dot
	suffixes []string        // ".example.test" for "*.example.test"
	addrs    map[netip.Addr]bool
}

func newAllowList(hosts []string) allowList {
	l := allowList{names: map[string]bool{}, addrs: map[netip.Addr]bool{}}
	for _, h := range hosts {
		h = strings.TrimSpace(h)
		h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
		if a, err := netip.ParseAddr(h); err == nil {
			l.addrs[a.Unmap()] = true
			continue
		}
		h = strings.ToLower(strings.TrimSuffix(h, "."))
		if suffix, ok := strings.CutPrefix(h, "*."); ok {
			if suffix != "" {
				l.suffixes = append(l.suffixes, "."+suffix)
			}
			continue
		}
		if h != "" {
			l.names[h] = true
		}
	}
	return l
}

// contains reports whether host (a URL host name or IP literal, no port) is
// allow-listed.
func (l allowList) contains(host string) bool {
	if a, err := netip.ParseAddr(host); err == nil {
		return l.addrs[a.Unmap()]
	}
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	if l.names[h] {
		return true
	}
	for _, s := range l.suffixes {
		if strings.HasSuffix(h, s) {
			return true
		}
	}
	return false
}
