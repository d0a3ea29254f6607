package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kobana/kadu/core/auth"
)

// KeyError is one problem with one configuration key. Load and Validate
// return them joined with errors.Join; errors.As finds the first.
type KeyError struct {
	Key    string // full key, e.g. "auth.algorithms[1]"
	Source string // where the value came from ("config/kadu.yaml", "env KADU_ADDR", "flag --addr"); empty from Validate
	Msg    string // what is wrong and what is allowed
}

func (e *KeyError) Error() string {
	if e.Source != "" {
		return fmt.Sprintf("%s (%s): %s", e.Key, e.Source, e.Msg)
	}
	return e.Key + ": " + e.Msg
}

// Allowed values, in the order they are listed in messages.
var (
	allowedAlgorithms = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
	allowedRoles      = []string{"viewer", "member", "admin", "owner"}
	allowedLogLevels  = []string{"debug", "info", "warn", "error"}
	allowedLogFormats = []string{"json", "text"}
)

// maxDrainDelay bounds http.drain_delay: orchestrators kill a process that
// takes much longer to stop (Kubernetes' default grace period is 30s).
const maxDrainDelay = 10 * time.Minute

// mcpPathRE: one or more "/segment", segments of URL-unreserved characters.
var mcpPathRE = regexp.MustCompile(`^(/[A-Za-z0-9._~-]+)+$`)

// problems collects KeyErrors in the order the rules run.
type problems []error

func (p *problems) add(key, format string, args ...any) {
	*p = append(*p, &KeyError{Key: key, Msg: fmt.Sprintf(format, args...)})
}

// Validate checks every rule and returns all violations joined with
// errors.Join (nil when the configuration is usable). Each is a *KeyError
// naming the full key and what is allowed, e.g.
//
//	auth.algorithms[1]: "HS256" is not allowed (want one of RS256, …, EdDSA)
func (c *Config) Validate() error {
	var p problems
	dev := c.Auth.Issuer == ""

	addrOK := p.hostPort("addr", c.Addr)
	adminOK := p.hostPort("admin_addr", c.AdminAddr)
	if addrOK && dev && !c.Loopback() {
		p.add("addr", "%q is not a loopback address, and the embedded development sign-in (auth.issuer empty) "+
			"only listens on loopback; configure auth.issuer (an external OIDC issuer) to listen on other interfaces", c.Addr)
	}
	if addrOK && adminOK && c.Addr == c.AdminAddr && !strings.HasSuffix(c.Addr, ":0") {
		p.add("admin_addr", "%q is also addr; the admin listener needs its own address", c.AdminAddr)
	}

	switch {
	case c.DataDir == "":
		p.add("data_dir", "is empty and has no default (neither $XDG_STATE_HOME nor a home directory is set); set a directory")
	case !filepath.IsAbs(c.DataDir):
		p.add("data_dir", "%q is not an absolute path", c.DataDir)
	}

	switch {
	case c.PublicURL != "":
		p.publicURL(c.PublicOrigin(), dev)
	case addrOK && !hasSpecificHost(c.Addr) && dev:
		// Reported on addr already: without an issuer it must be loopback.
	case addrOK && !hasSpecificHost(c.Addr):
		p.add("public_url", "is required when addr %q listens on all interfaces (want the https origin clients use, "+
			"e.g. \"https://mcp.example.com\")", c.Addr)
	case addrOK:
		p.publicURL(c.PublicOrigin(), dev)
	}
	p.mcpPath(c.MCPPath)

	c.API.validate(&p, c.Store.Driver)
	p.oneOf("log.level", c.Log.Level, allowedLogLevels)
	p.oneOf("log.format", c.Log.Format, allowedLogFormats)

	p.positive("http.read_header_timeout", c.HTTP.ReadHeaderTimeout)
	p.positive("http.read_timeout", c.HTTP.ReadTimeout)
	p.positive("http.write_timeout", c.HTTP.WriteTimeout)
	p.positive("http.idle_timeout", c.HTTP.IdleTimeout)
	p.positive("http.shutdown_timeout", c.HTTP.ShutdownTimeout)
	if d := c.HTTP.DrainDelay; d < 0 || d > maxDrainDelay {
		p.add("http.drain_delay", "%s is out of range: want 0 (close at once) to %s", d, maxDrainDelay)
	}
	for _, s := range c.HTTP.TrustedProxies {
		if _, err := ParseProxy(s); err != nil {
			p.add("http.trusted_proxies", "%q is neither an IP address nor a CIDR: list the load balancers' addresses, e.g. 10.0.0.0/8 or 127.0.0.1", s)
		}
	}

	p.auth(&c.Auth)
	p.store(&c.Store)
	p.runner(&c.Runner)
	p.orgs(&c.Orgs, c.Plans)
	p.plans(c.Plans)
	p.files(&c.Files)
	p.webhooks(&c.Webhooks)
	p.rateLimits(&c.RateLimits, c.Store.Driver)
	p.plugins(&c.Plugins)
	p.bundleAudiences(&c.Plugins, c.Plans)
	p.confirm(&c.Confirm)
	p.replicas(c)
	p.tracing(&c.Tracing)
	return errors.Join(p...)
}

func (p *problems) auth(a *Auth) {
	if a.Issuer != "" {
		p.endpointURL("auth.issuer", a.Issuer)
	}
	if a.JWKSURL != "" {
		p.endpointURL("auth.jwks_url", a.JWKSURL)
	}
	for i, aud := range a.Audiences {
		if strings.TrimSpace(aud) == "" {
			p.add(fmt.Sprintf("auth.audiences[%d]", i), "must not be empty")
		}
	}
	if len(a.Algorithms) == 0 {
		p.add("auth.algorithms", "must list at least one algorithm (allowed: %s)", strings.Join(allowedAlgorithms, ", "))
	}
	for i, alg := range a.Algorithms {
		key := fmt.Sprintf("auth.algorithms[%d]", i)
		switch {
		case !slices.Contains(allowedAlgorithms, alg):
			p.add(key, "%q is not allowed (want one of %s)", alg, strings.Join(allowedAlgorithms, ", "))
		case slices.Index(a.Algorithms, alg) < i:
			p.add(key, "%q is listed twice", alg)
		}
	}
	p.claimName("auth.org_claim", a.OrgClaim)
	p.claimName("auth.role_claim", a.RoleClaim)
	p.claimName("auth.scope_claim", a.ScopeClaim)
	p.positive("auth.max_token_lifetime", a.MaxTokenLifetime)

	d := &a.Dev
	p.nonEmpty("auth.dev.default_org", d.DefaultOrg)
	if d.DefaultOrg != "" && auth.CheckOrgID(d.DefaultOrg) != nil {
		// The same rule the verifier applies to every token's organisation.
		p.add("auth.dev.default_org", "%q is not an organisation id (want %s)", d.DefaultOrg, auth.OrgIDRule)
	}
	p.oneOf("auth.dev.default_role", d.DefaultRole, allowedRoles)
	p.nonEmpty("auth.dev.default_subject", d.DefaultSubject)
	// The cap matters only when the embedded server issues tokens.
	if p.positive("auth.dev.access_token_ttl", d.AccessTokenTTL) && a.Issuer == "" &&
		a.MaxTokenLifetime > 0 && d.AccessTokenTTL > a.MaxTokenLifetime {
		p.add("auth.dev.access_token_ttl", "%s is longer than auth.max_token_lifetime (%s), so its tokens would be rejected",
			d.AccessTokenTTL, a.MaxTokenLifetime)
	}
	p.positive("auth.dev.refresh_token_ttl", d.RefreshTokenTTL)
	if d.ClientCredentialsRole != "" {
		p.oneOf("auth.dev.client_credentials_role", d.ClientCredentialsRole, allowedRoles)
	}
}

// hostPort checks a listen address "host:port" (host may be empty for all
// interfaces; port 0 picks a free port) and reports whether it is usable.
func (p *problems) hostPort(key, addr string) bool {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		p.add(key, "%q is not host:port (want e.g. \"127.0.0.1:8080\")", addr)
		return false
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || (n == 0 && port != "0") {
		p.add(key, "port %q in %q is not a number from 0 to 65535", port, addr)
		return false
	}
	return true
}

// publicURL checks the public origin. dev: the embedded sign-in is mounted,
// so the origin must be loopback too.
func (p *problems) publicURL(origin string, dev bool) {
	const key = "public_url"
	u, ok := p.absURL(key, origin)
	if !ok {
		return
	}
	if u.Path != "" && u.Path != "/" || u.RawQuery != "" || u.Fragment != "" {
		p.add(key, "%q must be an origin, scheme://host[:port], with no path, query or fragment (the endpoint path is mcp_path)", origin)
		return
	}
	loopback := isLoopbackHost(u.Hostname())
	switch {
	case u.Scheme == "http" && !loopback:
		p.add(key, "%q uses http with a non-loopback host; set public_url to the https origin clients use "+
			"(the default is \"http://\" + addr)", origin)
	case dev && !loopback:
		p.add(key, "host %q is not loopback, and the embedded development sign-in (auth.issuer empty) must not be "+
			"exposed; configure auth.issuer (an external OIDC issuer) to serve a public URL", u.Hostname())
	}
}

// endpointURL checks an issuer, key-set or agent-service URL: https, or http
// for loopback.
func (p *problems) endpointURL(key, s string) {
	u, ok := p.absURL(key, s)
	if !ok {
		return
	}
	if u.RawQuery != "" || u.Fragment != "" {
		p.add(key, "%q must not have a query or fragment", RedactDSN(s))
	}
	if u.Scheme == "http" && !isLoopbackHost(u.Hostname()) {
		p.add(key, "%q uses http with a non-loopback host (want https://…; http is allowed only for localhost, 127.0.0.1, [::1])", RedactDSN(s))
	}
}

// absURL parses an absolute http(s) URL with a host and no user information.
// Messages show the URL with RedactDSN applied: it may carry a password.
func (p *problems) absURL(key, s string) (*url.URL, bool) {
	u, err := url.Parse(s)
	shown := RedactDSN(s)
	switch {
	case err != nil:
		p.add(key, "%q is not a URL (want scheme://host[:port])", shown)
	case u.Scheme != "http" && u.Scheme != "https":
		p.add(key, "%q: scheme must be https (or http for loopback hosts)", shown)
	case u.Host == "" || u.Hostname() == "":
		p.add(key, "%q has no host (want scheme://host[:port])", shown)
	case u.User != nil:
		p.add(key, "%q must not contain user information", shown)
	default:
		return u, true
	}
	return nil, false
}

func (p *problems) mcpPath(s string) {
	const key = "mcp_path"
	switch {
	case !strings.HasPrefix(s, "/"):
		p.add(key, "%q must start with \"/\" (e.g. \"/mcp\")", s)
	case strings.HasSuffix(s, "/"):
		p.add(key, "%q must not end with \"/\" (and cannot be \"/\" alone)", s)
	case strings.ContainsAny(s, "?#"):
		p.add(key, "%q must not contain a query or fragment", s)
	case !mcpPathRE.MatchString(s) || slices.ContainsFunc(strings.Split(s, "/"), isDotSegment):
		p.add(key, "%q is not a plain path (want segments of letters, digits, '-', '_', '.', '~', e.g. \"/mcp\")", s)
	}
}

// hasSpecificHost reports whether addr names a host, rather than all
// interfaces ("", "0.0.0.0", "::").
func hasSpecificHost(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return false
	}
	ip := net.ParseIP(host)
	return ip == nil || !ip.IsUnspecified()
}

func isDotSegment(s string) bool { return s == "." || s == ".." }

func (p *problems) oneOf(key, v string, allowed []string) {
	if !slices.Contains(allowed, v) {
		p.add(key, "%q is not allowed (want one of %s)", v, strings.Join(allowed, ", "))
	}
}

func (p *problems) nonEmpty(key, v string) {
	if strings.TrimSpace(v) == "" {
		p.add(key, "must not be empty")
	}
}

func (p *problems) claimName(key, v string) {
	switch {
	case v == "":
		p.add(key, "must not be empty (name of a JWT claim)")
	case strings.ContainsFunc(v, isSpace):
		p.add(key, "%q must not contain spaces (name of a JWT claim)", v)
	}
}

func isSpace(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' }

// positive reports whether d > 0, adding a problem if not.
func (p *problems) positive(key string, d time.Duration) bool {
	if d <= 0 {
		p.add(key, "must be a positive duration such as \"30s\" (got %s)", d)
		return false
	}
	return true
}
