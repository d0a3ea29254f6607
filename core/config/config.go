package config

import (
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kobana/kadu/core/plans"
)

// Config is the whole configuration of one Kadu process.
//
// Build it with Load (or Defaults for tests) and call Validate before use;
// Load already does. A Config is a plain value: nothing in it is shared or
// guarded, and it must not be modified once core/app has started from it.
type Config struct {
	// Addr is the listen address of the MCP endpoint, the REST API and the
	// embedded sign-in pages, as host:port. Default "127.0.0.1:8080".
	// Without auth.issuer its host must be loopback (an IP or "localhost").
	Addr string `koanf:"addr"`

	// AdminAddr is the listen address of /healthz, /readyz, /metrics and the
	// plugin admin endpoints, as host:port. Default "127.0.0.1:9090".
	AdminAddr string `koanf:"admin_addr"`

	// DataDir holds the SQLite database, local blobs and development signing
	// keys. Default $XDG_STATE_HOME/kadu, else ~/.local/state/kadu. Load makes
	// it absolute (a leading "~/" is the home directory): a relative path set
	// in the configuration file against the file's directory, one from the
	// environment or --data-dir against the working directory.
	DataDir string `koanf:"data_dir"`

	// PublicURL is the origin clients use to reach Addr: scheme://host[:port],
	// no path. Default "http://" + Addr. Load removes one trailing slash. The
	// MCP URL, which is also the audience tokens must carry, is PublicURL +
	// MCPPath. Plain http is allowed only for loopback hosts.
	PublicURL string `koanf:"public_url"`

	// MCPPath is the path of the MCP endpoint. Default "/mcp". It starts with
	// "/", has no trailing slash, query or fragment.
	MCPPath string `koanf:"mcp_path"`

	// SingleNode says this process is the only one on its store: it lifts
	// the checks that refuse, with store.driver postgres, what each replica
	// would keep to itself (local blobs, the embedded development issuer).
	// Default false. core/config/replicas.go lists the checks.
	SingleNode bool `koanf:"single_node"`

	Log    Log    `koanf:"log"`
	HTTP   HTTP   `koanf:"http"`
	Auth   Auth   `koanf:"auth"`
	API    API    `koanf:"api"`
	Store  Store  `koanf:"store"`
	Runner Runner `koanf:"runner"`
	Orgs   Orgs   `koanf:"orgs"`

	Files      Files      `koanf:"files"`
	Webhooks   Webhooks   `koanf:"webhooks"`
	RateLimits RateLimits `koanf:"rate_limits"`
	Plugins    Plugins    `koanf:"plugins"`
	Confirm    Confirm    `koanf:"confirm"`
	Tracing    Tracing    `koanf:"tracing"`

	// Plans are the plans organisations can be on, by name: plans.<name>.<field>
	// in the file, KADU_PLANS__<NAME>__<FIELD> in the environment. Default: the
	// built-in plans developer and team. A plan named in a source starts from
	// the built-in plan of that name, if any, else from zero values, which
	// Validate reports unless every field is set.
	Plans map[string]Plan `koanf:"plans"`
}

// Log configures the process log (structured, on standard error).
type Log struct {
	// Level is the least severe level written: debug, info, warn or error.
	// Default "info".
	Level string `koanf:"level"`

	// Format is json or text. Default "json".
	Format string `koanf:"format"`
}

// HTTP holds the timeouts of the public listener (Addr). All must be
// positive, except DrainDelay, which may be 0.
type HTTP struct {
	// ReadHeaderTimeout bounds reading request headers. Default 5s.
	ReadHeaderTimeout time.Duration `koanf:"read_header_timeout"`

	// ReadTimeout bounds reading a whole request, body included. Default 30s.
	ReadTimeout time.Duration `koanf:"read_timeout"`

	// WriteTimeout bounds handling a request and writing its response:
	// the request's context ends then too (core/app/deadline.go), and an
	// idempotency key held by a request lost with its replica is taken
	// over after WriteTimeout + 30s. Default 60s.
	WriteTimeout time.Duration `koanf:"write_timeout"`

	// IdleTimeout bounds how long an idle keep-alive connection is kept.
	// Default 120s.
	IdleTimeout time.Duration `koanf:"idle_timeout"`

	// ShutdownTimeout bounds graceful shutdown: in-flight requests get this
	// long to finish after SIGINT/SIGTERM. Default 20s.
	ShutdownTimeout time.Duration `koanf:"shutdown_timeout"`

	// DrainDelay is how long, after SIGTERM, the listener keeps accepting
	// and answers every request 503 with Retry-After while /readyz fails,
	// so that a load balancer takes the replica out before it closes (no
	// connection is refused during a rolling restart). Then in-flight
	// requests get ShutdownTimeout. SIGINT (Ctrl-C) and a second signal
	// skip it. 0 closes at once; at most 10m. Default 5s.
	DrainDelay time.Duration `koanf:"drain_delay"`

	// TrustedProxies are the load balancers and reverse proxies, as IPs or
	// CIDRs ("10.0.0.0/8", "127.0.0.1"), whose X-Forwarded-For is believed.
	// A request whose direct peer is in the list has the rightmost
	// address of X-Forwarded-For that is not in the list as its client
	// address (rate limits by address, logs); any other request's
	// X-Forwarded-For is ignored, so a client cannot choose its address.
	// Default empty: the client address is always the direct peer.
	TrustedProxies []string `koanf:"trusted_proxies"`
}

// Auth configures how access tokens are verified (docs/reference/auth.md).
type Auth struct {
	// Issuer is the OAuth/OIDC issuer whose tokens are accepted. Empty
	// (default) mounts the embedded development authorization server on the
	// public origin and requires a loopback Addr. Otherwise an https URL
	// (http only for loopback hosts), compared exactly with the "iss" claim.
	Issuer string `koanf:"issuer"`

	// JWKSURL overrides the key set URL found in the issuer's discovery
	// document. Default empty (use discovery). Same scheme rules as Issuer.
	JWKSURL string `koanf:"jwks_url"`

	// Audiences are accepted audiences in addition to the public MCP URL,
	// which is always accepted. Default none.
	Audiences []string `koanf:"audiences"`

	// Algorithms are the accepted JWS signing algorithms. Default
	// [RS256, ES256]; allowed RS256 RS384 RS512 PS256 PS384 PS512 ES256 ES384
	// ES512 EdDSA (never "none" or HMAC).
	Algorithms []string `koanf:"algorithms"`

	// OrgClaim is the claim holding the organisation id. Default "org_id".
	OrgClaim string `koanf:"org_claim"`

	// RoleClaim is the claim holding the person's role. Default "role".
	RoleClaim string `koanf:"role_claim"`

	// ScopeClaim is the claim holding the granted scopes (a space-separated
	// string or an array; "scp" is also read). Default "scope".
	ScopeClaim string `koanf:"scope_claim"`

	// RequireATJWT requires the JWT header "typ" to be at+jwt (RFC 9068), which
	// is what keeps ID tokens out. Default true.
	RequireATJWT bool `koanf:"require_at_jwt"`

	// MaxTokenLifetime is the longest lifetime an accepted access token may
	// have; longer-lived tokens are rejected. Default 24h.
	MaxTokenLifetime time.Duration `koanf:"max_token_lifetime"`

	// Dev configures the embedded development authorization server, used only
	// when Issuer is empty.
	Dev DevAuth `koanf:"dev"`
}

// DevAuth configures the embedded development authorization server.
type DevAuth struct {
	// DefaultOrg is the organisation the consent page and `kadu token` use.
	// Default "org_dev".
	DefaultOrg string `koanf:"default_org"`

	// DefaultRole is the role they grant: viewer, member, admin or owner.
	// Default "owner".
	DefaultRole string `koanf:"default_role"`

	// DefaultSubject is the signed-in user's subject. Default "dev-user".
	DefaultSubject string `koanf:"default_subject"`

	// AccessTokenTTL is the lifetime of issued access tokens; at most
	// auth.max_token_lifetime. Default 1h.
	AccessTokenTTL time.Duration `koanf:"access_token_ttl"`

	// RefreshTokenTTL is the lifetime of issued refresh tokens. Default 720h
	// (30 days).
	RefreshTokenTTL time.Duration `koanf:"refresh_token_ttl"`

	// ClientCredentialsRole turns the client_credentials grant on: any
	// confidential client that registers gets tokens for DefaultOrg with
	// this role (viewer, member, admin or owner), without a person's
	// consent. Empty (default): the grant is refused, so registering a
	// client alone never yields a token.
	ClientCredentialsRole string `koanf:"client_credentials_role"`
}

// Defaults returns the embedded defaults. config/kadu.yaml spells out the
// same values (a test keeps them in sync).
//
// PublicURL is empty: Load derives it from the final Addr. DataDir is empty
// only when neither $XDG_STATE_HOME nor the home directory is known, which
// Validate reports.
func Defaults() Config {
	return Config{
		Addr:      "127.0.0.1:8080",
		AdminAddr: "127.0.0.1:9090",
		DataDir:   defaultDataDir(),
		MCPPath:   "/mcp",
		Log:       Log{Level: "info", Format: "json"},
		HTTP: HTTP{
			ReadHeaderTimeout: 5 * time.Second,
			ReadTimeout:       30 * time.Second,
			WriteTimeout:      60 * time.Second,
			IdleTimeout:       120 * time.Second,
			ShutdownTimeout:   20 * time.Second,
			DrainDelay:        5 * time.Second,
			TrustedProxies:    []string{},
		},
		Auth: Auth{
			Audiences:        []string{},
			Algorithms:       []string{"RS256", "ES256"},
			OrgClaim:         "org_id",
			RoleClaim:        "role",
			ScopeClaim:       "scope",
			RequireATJWT:     true,
			MaxTokenLifetime: 24 * time.Hour,
			Dev: DevAuth{
				DefaultOrg:      "org_dev",
				DefaultRole:     "owner",
				DefaultSubject:  "dev-user",
				AccessTokenTTL:  time.Hour,
				RefreshTokenTTL: 720 * time.Hour,
			},
		},
		Store: Store{Driver: DriverSQLite},
		Runner: Runner{
			Kind:        RunnerBuiltin,
			RescueAfter: time.Minute,
			HTTP:        HTTPRunner{Timeout: 30 * time.Second, PollInterval: time.Second},
		},
		Orgs:       Orgs{AutoProvision: toggleAuto, DefaultPlan: "developer", ExampleTasks: toggleAuto},
		Webhooks:   Webhooks{AllowHosts: []string{}, Timeout: 15 * time.Second},
		RateLimits: RateLimits{Enabled: true, IPPerMinute: 60, Backend: RateLimitAuto},
		Plugins:    defaultPlugins(),
		Confirm:    Confirm{StateTTL: 5 * time.Minute, ApprovalTTL: 15 * time.Minute},
		Tracing:    Tracing{SampleRatio: 1, ServiceName: "kadu"},
		Plans:      plans.Builtin(),
	}
}

// defaultDataDir is $XDG_STATE_HOME/kadu when that is absolute (the XDG spec
// says to ignore relative values), else ~/.local/state/kadu, else "".
func defaultDataDir() string {
	if s := os.Getenv("XDG_STATE_HOME"); s != "" && filepath.IsAbs(s) {
		return filepath.Join(s, "kadu")
	}
	if home, err := os.UserHomeDir(); err == nil && home != "" {
		return filepath.Join(home, ".local", "state", "kadu")
	}
	return ""
}

// PublicOrigin is the public origin, scheme://host[:port] with no trailing
// slash: PublicURL, or "http://" + Addr when PublicURL is empty (a Config
// built by hand; Load always fills PublicURL).
func (c *Config) PublicOrigin() string {
	if c.PublicURL == "" {
		return "http://" + c.Addr
	}
	return strings.TrimSuffix(c.PublicURL, "/")
}

// MCPURL is the exact public URL of the MCP endpoint: PublicOrigin() +
// MCPPath, e.g. "http://127.0.0.1:8080/mcp". It is the Protected Resource
// Metadata "resource" and the audience access tokens must carry.
func (c *Config) MCPURL() string { return c.PublicOrigin() + c.MCPPath }

// MCPURLAliases are the other URLs of the MCP endpoint a client on this
// machine may type when the embedded development issuer is in use and the
// public URL is on loopback: the same scheme, port and path on localhost,
// 127.0.0.1 and [::1]. Clients check that the metadata's resource is the URL
// they were given, so each alias gets its own metadata and tokens. Empty
// otherwise: a production resource has exactly one URL.
func (c *Config) MCPURLAliases() []string {
	if c.Auth.Issuer != "" {
		return nil
	}
	u, err := url.Parse(c.PublicOrigin())
	if err != nil || !isLoopbackHost(u.Hostname()) {
		return nil
	}
	var out []string
	for _, h := range []string{"localhost", "127.0.0.1", "[::1]"} {
		host := h
		if p := u.Port(); p != "" {
			host += ":" + p
		}
		if !strings.EqualFold(host, u.Host) {
			out = append(out, u.Scheme+"://"+host+c.MCPPath)
		}
	}
	return out
}

// IssuerURL is the issuer tokens must come from: auth.issuer, or the public
// origin when auth.issuer is empty and the embedded development
// authorization server is mounted there.
func (c *Config) IssuerURL() string {
	if c.Auth.Issuer == "" {
		return c.PublicOrigin()
	}
	return c.Auth.Issuer
}

// Loopback reports whether Addr's host is a loopback IP or "localhost". An
// empty host (all interfaces) or an unparseable Addr is not loopback.
func (c *Config) Loopback() bool {
	host, _, err := net.SplitHostPort(c.Addr)
	return err == nil && isLoopbackHost(host)
}

// SlogLevel returns Level as a slog.Level (info for an unknown level, which
// Validate rejects anyway).
func (l Log) SlogLevel() slog.Level {
	switch l.Level {
	case "debug":
		return slog.LevelDebug
	case "warn":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	default:
		return slog.LevelInfo
	}
}

// isLoopbackHost reports whether host (no port, no brackets) is "localhost"
// or a loopback IP literal.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
