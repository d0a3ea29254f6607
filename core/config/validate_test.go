package config

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// validBase is Defaults() with a fixed data directory, so that the tests do
// not depend on $HOME.
func validBase() Config {
	c := Defaults()
	c.DataDir = "/var/lib/kadu"
	c.API.SigningKey = "0123456789abcdef0123456789abcdef" // as replicas on PostgreSQL must
	return c
}

// goodBundle is a valid enabled bundle.
func goodBundle() Bundle {
	return Bundle{Enabled: true, Path: "/opt/kadu/tasks.wasm", SHA256: strings.Repeat("ab", 32),
		Routes: []string{"GET /api/v1/tasks", "GET /api/v1/tasks/{id}"}, Settings: []string{"region=br"}}
}

// minisignKey and otherMinisignKey are minisign public keys (the first is
// the example key of minisign's documentation, ID E7620F1842B4E81F).
const (
	minisignKey      = "RWQf6LRCGA9i53mlYecO4IzT51TGPpvWucNSCh1CBM0QTaLn73Y7GFO3"
	otherMinisignKey = "RWQBAgMEBQYHCAECAwQFBgcIAQIDBAUGBwgBAgMEBQYHCAECAwQFBgcI"
)

// production is a valid configuration with an external issuer.
func production(c *Config) {
	c.Addr = "0.0.0.0:8080"
	c.PublicURL = "https://mcp.example.com"
	c.Auth.Issuer = "https://id.example.com"
}

// keyErrors returns the *KeyErrors joined in err.
func keyErrors(t *testing.T, err error) []*KeyError {
	t.Helper()
	var out []*KeyError
	var walk func(error)
	walk = func(err error) {
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e)
			}
			return
		}
		var ke *KeyError
		if !errors.As(err, &ke) {
			t.Fatalf("error %q is not a *KeyError", err)
		}
		out = append(out, ke)
	}
	if err != nil {
		walk(err)
	}
	return out
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(c *Config)
		wantKey string // "" = valid
		wantMsg string // substring of the message, optional
	}{
		{name: "defaults", mutate: func(c *Config) {}},
		{name: "s3 bucket", mutate: func(c *Config) { c.Files.URL = "s3://kadu-files?region=sa-east-1" }},
		{name: "file bucket", mutate: func(c *Config) { c.Files.URL = "file:///srv/kadu/blobs" }},
		{name: "relative file bucket", mutate: func(c *Config) { c.Files.URL = "file://blobs" }, wantKey: "files.url", wantMsg: "absolute directory"},
		{name: "gs bucket", mutate: func(c *Config) { c.Files.URL = "gs://bucket" }, wantKey: "files.url", wantMsg: `scheme "gs"`},
		{name: "s3 without bucket", mutate: func(c *Config) { c.Files.URL = "s3://?region=x" }, wantKey: "files.url", wantMsg: "no bucket"},
		{name: "webhook allow hosts", mutate: func(c *Config) { c.Webhooks.AllowHosts = []string{"localhost", "127.0.0.1", "::1", "*.internal.test"} }},
		{name: "webhook allow host with port", mutate: func(c *Config) { c.Webhooks.AllowHosts = []string{"localhost:8080"} }, wantKey: "webhooks.allow_hosts", wantMsg: "entry 0"},
		{name: "webhook allow host URL", mutate: func(c *Config) { c.Webhooks.AllowHosts = []string{"https://example.com"} }, wantKey: "webhooks.allow_hosts"},
		{name: "webhook timeout", mutate: func(c *Config) { c.Webhooks.Timeout = 0 }, wantKey: "webhooks.timeout"},
		{name: "rate limit backend", mutate: func(c *Config) { c.RateLimits.Backend = "redis" }, wantKey: "rate_limits.backend", wantMsg: "auto, memory, postgres"},
		{name: "postgres limits on sqlite", mutate: func(c *Config) { c.RateLimits.Backend = "postgres" }, wantKey: "rate_limits.backend", wantMsg: "store.driver is sqlite"},
		{name: "bundle", mutate: func(c *Config) { c.Plugins.Bundles["tasks"] = goodBundle() }},
		{name: "disabled bundle needs nothing", mutate: func(c *Config) { c.Plugins.Bundles["tasks"] = Bundle{} }},
		{name: "bundle name", mutate: func(c *Config) { c.Plugins.Bundles["Tasks"] = goodBundle() }, wantKey: "plugins.bundles.Tasks", wantMsg: "not a valid bundle name"},
		{name: "bundle without path", mutate: func(c *Config) { b := goodBundle(); b.Path = ""; c.Plugins.Bundles["partner"] = b }, wantKey: "plugins.bundles.partner.path"},
		{name: "first-party bundle without path (the copy in the binary)", mutate: func(c *Config) { b := goodBundle(); b.Path = ""; c.Plugins.Bundles["tasks"] = b }},
		{name: "bundle pin", mutate: func(c *Config) { b := goodBundle(); b.SHA256 = "abc"; c.Plugins.Bundles["tasks"] = b }, wantKey: "plugins.bundles.tasks.sha256", wantMsg: "64 hex digits"},
		{name: "bundle route", mutate: func(c *Config) { b := goodBundle(); b.Routes = []string{"GET /tasks"}; c.Plugins.Bundles["tasks"] = b }, wantKey: "plugins.bundles.tasks.routes", wantMsg: "entry 0"},
		{name: "bundle isolation", mutate: func(c *Config) { b := goodBundle(); b.Isolation = "shared"; c.Plugins.Bundles["tasks"] = b }, wantKey: "plugins.bundles.tasks.isolation"},
		{name: "bundle memory", mutate: func(c *Config) { b := goodBundle(); b.MemoryMiB = 5000; c.Plugins.Bundles["tasks"] = b }, wantKey: "plugins.bundles.tasks.memory_mib"},
		{name: "memory budget", mutate: func(c *Config) { c.Plugins.MemoryBudgetMiB = 0 }, wantKey: "plugins.memory_budget_mib"},
		{name: "org share over 100", mutate: func(c *Config) { c.Plugins.OrgSharePercent = 101 }, wantKey: "plugins.org_share_percent", wantMsg: "1 to 100"},
		{name: "org share below one instance", mutate: func(c *Config) { c.Plugins.MemoryBudgetMiB = 128 },
			wantKey: "plugins.org_share_percent", wantMsg: "less than one instance of bundle"},
		{name: "max instances", mutate: func(c *Config) { c.Plugins.MaxInstances = -1 }, wantKey: "plugins.max_instances"},
		{name: "memory wait", mutate: func(c *Config) { c.Plugins.MemoryWait = 0 }, wantKey: "plugins.memory_wait"},
		{name: "idle ttl", mutate: func(c *Config) { c.Plugins.IdleTTL = -time.Second }, wantKey: "plugins.idle_ttl"},
		{name: "drain timeout", mutate: func(c *Config) { c.Plugins.DrainTimeout = 0 }, wantKey: "plugins.drain_timeout"},
		{name: "quarantine faults", mutate: func(c *Config) { c.Plugins.Quarantine.Faults = 0 }, wantKey: "plugins.quarantine.faults"},
		{name: "quarantine window", mutate: func(c *Config) { c.Plugins.Quarantine.Window = 0 }, wantKey: "plugins.quarantine.window"},
		{name: "quarantine cooldown", mutate: func(c *Config) { c.Plugins.Quarantine.Cooldown = 0 }, wantKey: "plugins.quarantine.cooldown"},
		{name: "bundle settings", mutate: func(c *Config) { b := goodBundle(); b.Settings = []string{"novalue"}; c.Plugins.Bundles["tasks"] = b }, wantKey: "plugins.bundles.tasks.settings"},
		{name: "trusted keys", mutate: func(c *Config) {
			c.Plugins.TrustedKeys = map[string]TrustedKey{"acme-2025": {PublicKey: minisignKey}, "acme-2026": {PublicKey: otherMinisignKey}}
			c.Plugins.RequireSignature = true
		}},
		{name: "trusted key, whole .pub file", mutate: func(c *Config) {
			c.Plugins.TrustedKeys = map[string]TrustedKey{"acme": {PublicKey: "untrusted comment: minisign public key E7620F1842B4E81F\n" + minisignKey + "\n"}}
		}},
		{name: "trusted key empty", mutate: func(c *Config) { c.Plugins.TrustedKeys = map[string]TrustedKey{"acme": {}} },
			wantKey: "plugins.trusted_keys.acme.public_key", wantMsg: "is required"},
		{name: "trusted key not a key", mutate: func(c *Config) { c.Plugins.TrustedKeys = map[string]TrustedKey{"acme": {PublicKey: "RWQnotakey"}} },
			wantKey: "plugins.trusted_keys.acme.public_key", wantMsg: "minisign public key"},
		{name: "trusted key twice", mutate: func(c *Config) {
			c.Plugins.TrustedKeys = map[string]TrustedKey{"a": {PublicKey: minisignKey}, "b": {PublicKey: minisignKey}}
		}, wantKey: "plugins.trusted_keys.b.public_key", wantMsg: "same key (ID E7620F1842B4E81F) as plugins.trusted_keys.a"},
		{name: "sealing keys", mutate: func(c *Config) {
			c.Confirm.SealingKeys = Secret(strings.Repeat("k", 32) + "," + strings.Repeat("j", 40))
		}},
		{name: "short sealing key", mutate: func(c *Config) { c.Confirm.SealingKeys = Secret(strings.Repeat("k", 32) + ",short") }, wantKey: "confirm.sealing_keys", wantMsg: "entry 1"},
		{name: "state ttl", mutate: func(c *Config) { c.Confirm.StateTTL = 0 }, wantKey: "confirm.state_ttl"},
		{name: "ip limit", mutate: func(c *Config) { c.RateLimits.IPPerMinute = 0 }, wantKey: "rate_limits.ip_per_minute"},
		{name: "production with external issuer", mutate: production},
		{name: "localhost addr without issuer", mutate: func(c *Config) { c.Addr = "localhost:8080" }},
		{name: "IPv6 loopback addr", mutate: func(c *Config) { c.Addr = "[::1]:8080" }},
		{name: "port 0 picks a free port", mutate: func(c *Config) { c.Addr = "127.0.0.1:0"; c.AdminAddr = "127.0.0.1:0" }},
		{name: "http issuer on loopback", mutate: func(c *Config) { c.Auth.Issuer = "http://127.0.0.1:5556/dex" }},
		{name: "dev client_credentials as viewer", mutate: func(c *Config) { c.Auth.Dev.ClientCredentialsRole = "viewer" }},
		{name: "drain_delay 0 closes at once", mutate: func(c *Config) { c.HTTP.DrainDelay = 0 }},
		{name: "trusted proxies by IP and CIDR", mutate: func(c *Config) { c.HTTP.TrustedProxies = []string{"127.0.0.1", "10.0.0.0/8", "::1", "fd00::/8"} }},
		{name: "public_url with one trailing slash", mutate: func(c *Config) { c.PublicURL = "http://localhost:8080/" }},
		{name: "dev access ttl above cap is ignored with an issuer", mutate: func(c *Config) {
			production(c)
			c.Auth.MaxTokenLifetime = 10 * time.Minute
		}},

		{name: "postgres needs a shared signing key", mutate: func(c *Config) {
			c.Store = Store{Driver: DriverPostgres, DSN: "postgres://db/kadu"}
			c.SingleNode = true
			c.API.SigningKey = ""
		}, wantKey: "api.signing_key", wantMsg: "every replica"},
		{name: "postgres with a signing key", mutate: func(c *Config) {
			c.Store = Store{Driver: DriverPostgres, DSN: "postgres://db/kadu"}
			c.SingleNode = true
			c.API.SigningKey = "0123456789abcdef0123456789abcdef"
		}},
		{name: "short signing key", mutate: func(c *Config) { c.API.SigningKey = "short" }, wantKey: "api.signing_key", wantMsg: "too short"},
		{name: "short previous signing key", mutate: func(c *Config) {
			c.API.PreviousSigningKeys = "0123456789abcdef0123456789abcdef-old, short"
		}, wantKey: "api.previous_signing_keys", wantMsg: "entry 1 is too short"},
		{name: "addr without port", mutate: func(c *Config) { c.Addr = "localhost" }, wantKey: "addr", wantMsg: "host:port"},
		{name: "addr port out of range", mutate: func(c *Config) { c.Addr = "127.0.0.1:99999" }, wantKey: "addr", wantMsg: "0 to 65535"},
		{name: "addr port not a number", mutate: func(c *Config) { c.Addr = "127.0.0.1:http" }, wantKey: "addr", wantMsg: "0 to 65535"},
		{name: "non-loopback addr without issuer", mutate: func(c *Config) {
			c.Addr = "10.0.0.5:8080"
			c.PublicURL = "http://127.0.0.1:8080"
		}, wantKey: "addr", wantMsg: "configure auth.issuer"},
		{name: "all interfaces without issuer", mutate: func(c *Config) {
			c.Addr = ":8080"
			c.PublicURL = "http://127.0.0.1:8080"
		}, wantKey: "addr", wantMsg: "loopback"},
		{name: "admin_addr not host:port", mutate: func(c *Config) { c.AdminAddr = "9090" }, wantKey: "admin_addr", wantMsg: "host:port"},
		{name: "admin_addr same as addr", mutate: func(c *Config) { c.AdminAddr = c.Addr }, wantKey: "admin_addr", wantMsg: "own address"},
		{name: "data_dir empty", mutate: func(c *Config) { c.DataDir = "" }, wantKey: "data_dir", wantMsg: "empty"},
		{name: "data_dir relative", mutate: func(c *Config) { c.DataDir = "data" }, wantKey: "data_dir", wantMsg: "absolute"},

		{name: "public_url not a URL", mutate: func(c *Config) { c.PublicURL = "http://[::1" }, wantKey: "public_url", wantMsg: "not a URL"},
		{name: "public_url bad scheme", mutate: func(c *Config) { c.PublicURL = "ftp://127.0.0.1" }, wantKey: "public_url", wantMsg: "scheme"},
		{name: "public_url without host", mutate: func(c *Config) { c.PublicURL = "https:///mcp" }, wantKey: "public_url", wantMsg: "no host"},
		{name: "public_url with user info", mutate: func(c *Config) { c.PublicURL = "http://me@127.0.0.1:8080" }, wantKey: "public_url", wantMsg: "user information"},
		{name: "public_url with path", mutate: func(c *Config) { c.PublicURL = "http://127.0.0.1:8080/mcp" }, wantKey: "public_url", wantMsg: "no path"},
		{name: "public_url with query", mutate: func(c *Config) { c.PublicURL = "http://127.0.0.1:8080?a=1" }, wantKey: "public_url", wantMsg: "query"},
		{name: "public_url http on a public host", mutate: func(c *Config) {
			production(c)
			c.PublicURL = "http://mcp.example.com"
		}, wantKey: "public_url", wantMsg: "https"},
		{name: "public_url derived from all-interfaces addr", mutate: func(c *Config) {
			production(c)
			c.PublicURL = ""
		}, wantKey: "public_url", wantMsg: "required"},
		{name: "public_url public without issuer", mutate: func(c *Config) { c.PublicURL = "https://mcp.example.com" }, wantKey: "public_url", wantMsg: "configure auth.issuer"},

		{name: "mcp_path without leading slash", mutate: func(c *Config) { c.MCPPath = "mcp" }, wantKey: "mcp_path", wantMsg: "start with"},
		{name: "mcp_path trailing slash", mutate: func(c *Config) { c.MCPPath = "/mcp/" }, wantKey: "mcp_path", wantMsg: "end with"},
		{name: "mcp_path root", mutate: func(c *Config) { c.MCPPath = "/" }, wantKey: "mcp_path", wantMsg: "end with"},
		{name: "mcp_path with query", mutate: func(c *Config) { c.MCPPath = "/mcp?x=1" }, wantKey: "mcp_path", wantMsg: "query"},
		{name: "mcp_path with space", mutate: func(c *Config) { c.MCPPath = "/m cp" }, wantKey: "mcp_path", wantMsg: "plain path"},
		{name: "mcp_path dot segment", mutate: func(c *Config) { c.MCPPath = "/a/../mcp" }, wantKey: "mcp_path", wantMsg: "plain path"},
		{name: "mcp_path double slash", mutate: func(c *Config) { c.MCPPath = "//mcp" }, wantKey: "mcp_path", wantMsg: "plain path"},

		{name: "log level", mutate: func(c *Config) { c.Log.Level = "verbose" }, wantKey: "log.level", wantMsg: "debug, info, warn, error"},
		{name: "log format", mutate: func(c *Config) { c.Log.Format = "xml" }, wantKey: "log.format", wantMsg: "json, text"},

		{name: "read_header_timeout", mutate: func(c *Config) { c.HTTP.ReadHeaderTimeout = 0 }, wantKey: "http.read_header_timeout", wantMsg: "positive"},
		{name: "read_timeout", mutate: func(c *Config) { c.HTTP.ReadTimeout = -time.Second }, wantKey: "http.read_timeout", wantMsg: "positive"},
		{name: "write_timeout", mutate: func(c *Config) { c.HTTP.WriteTimeout = 0 }, wantKey: "http.write_timeout", wantMsg: "positive"},
		{name: "idle_timeout", mutate: func(c *Config) { c.HTTP.IdleTimeout = 0 }, wantKey: "http.idle_timeout", wantMsg: "positive"},
		{name: "shutdown_timeout", mutate: func(c *Config) { c.HTTP.ShutdownTimeout = 0 }, wantKey: "http.shutdown_timeout", wantMsg: "positive"},
		{name: "trusted proxy hostname", mutate: func(c *Config) { c.HTTP.TrustedProxies = []string{"lb.internal"} }, wantKey: "http.trusted_proxies", wantMsg: "neither an IP address nor a CIDR"},
		{name: "trusted proxy bad CIDR", mutate: func(c *Config) { c.HTTP.TrustedProxies = []string{"10.0.0.0/33"} }, wantKey: "http.trusted_proxies", wantMsg: "neither an IP address nor a CIDR"},
		{name: "drain_delay negative", mutate: func(c *Config) { c.HTTP.DrainDelay = -time.Second }, wantKey: "http.drain_delay", wantMsg: "want 0 (close at once) to 10m0s"},
		{name: "drain_delay too long", mutate: func(c *Config) { c.HTTP.DrainDelay = time.Hour }, wantKey: "http.drain_delay", wantMsg: "out of range"},

		{name: "issuer http on a public host", mutate: func(c *Config) {
			production(c)
			c.Auth.Issuer = "http://id.example.com"
		}, wantKey: "auth.issuer", wantMsg: "https"},
		{name: "issuer not a URL", mutate: func(c *Config) {
			production(c)
			c.Auth.Issuer = "id.example.com"
		}, wantKey: "auth.issuer", wantMsg: "scheme"},
		{name: "issuer with query", mutate: func(c *Config) {
			production(c)
			c.Auth.Issuer = "https://id.example.com/?tenant=1"
		}, wantKey: "auth.issuer", wantMsg: "query"},
		{name: "jwks_url http on a public host", mutate: func(c *Config) {
			production(c)
			c.Auth.JWKSURL = "http://id.example.com/keys"
		}, wantKey: "auth.jwks_url", wantMsg: "https"},
		{name: "empty audience", mutate: func(c *Config) { c.Auth.Audiences = []string{"kadu", " "} }, wantKey: "auth.audiences[1]", wantMsg: "empty"},
		{name: "no algorithms", mutate: func(c *Config) { c.Auth.Algorithms = nil }, wantKey: "auth.algorithms", wantMsg: "at least one"},
		{name: "HMAC algorithm", mutate: func(c *Config) { c.Auth.Algorithms = []string{"RS256", "HS256"} }, wantKey: "auth.algorithms[1]", wantMsg: `"HS256" is not allowed (want one of RS256`},
		{name: "none algorithm", mutate: func(c *Config) { c.Auth.Algorithms = []string{"none"} }, wantKey: "auth.algorithms[0]", wantMsg: "EdDSA"},
		{name: "duplicate algorithm", mutate: func(c *Config) { c.Auth.Algorithms = []string{"ES256", "ES256"} }, wantKey: "auth.algorithms[1]", wantMsg: "twice"},
		{name: "org_claim empty", mutate: func(c *Config) { c.Auth.OrgClaim = "" }, wantKey: "auth.org_claim", wantMsg: "empty"},
		{name: "role_claim with space", mutate: func(c *Config) { c.Auth.RoleClaim = "my role" }, wantKey: "auth.role_claim", wantMsg: "spaces"},
		{name: "scope_claim empty", mutate: func(c *Config) { c.Auth.ScopeClaim = "" }, wantKey: "auth.scope_claim", wantMsg: "empty"},
		{name: "max_token_lifetime zero", mutate: func(c *Config) { c.Auth.MaxTokenLifetime = 0 }, wantKey: "auth.max_token_lifetime", wantMsg: "positive"},

		{name: "dev org empty", mutate: func(c *Config) { c.Auth.Dev.DefaultOrg = "" }, wantKey: "auth.dev.default_org", wantMsg: "empty"},
		{name: "dev org with dots", mutate: func(c *Config) { c.Auth.Dev.DefaultOrg = "a..b" }, wantKey: "auth.dev.default_org", wantMsg: `"a..b" is not an organisation id`},
		{name: "dev org with slash", mutate: func(c *Config) { c.Auth.Dev.DefaultOrg = "acme/x" }, wantKey: "auth.dev.default_org", wantMsg: "letters, digits"},
		{name: "dev org too long", mutate: func(c *Config) { c.Auth.Dev.DefaultOrg = strings.Repeat("a", 65) }, wantKey: "auth.dev.default_org", wantMsg: "1 to 64"},
		{name: "dev org with dash", mutate: func(c *Config) { c.Auth.Dev.DefaultOrg = "acme-1" }},
		{name: "dev role unknown", mutate: func(c *Config) { c.Auth.Dev.DefaultRole = "root" }, wantKey: "auth.dev.default_role", wantMsg: "viewer, member, admin, owner"},
		{name: "dev client_credentials role unknown", mutate: func(c *Config) { c.Auth.Dev.ClientCredentialsRole = "root" }, wantKey: "auth.dev.client_credentials_role", wantMsg: "viewer, member, admin, owner"},
		{name: "dev subject empty", mutate: func(c *Config) { c.Auth.Dev.DefaultSubject = "" }, wantKey: "auth.dev.default_subject", wantMsg: "empty"},
		{name: "dev access ttl zero", mutate: func(c *Config) { c.Auth.Dev.AccessTokenTTL = 0 }, wantKey: "auth.dev.access_token_ttl", wantMsg: "positive"},
		{name: "dev access ttl above cap", mutate: func(c *Config) { c.Auth.Dev.AccessTokenTTL = 48 * time.Hour }, wantKey: "auth.dev.access_token_ttl", wantMsg: "auth.max_token_lifetime"},
		{name: "dev refresh ttl zero", mutate: func(c *Config) { c.Auth.Dev.RefreshTokenTTL = 0 }, wantKey: "auth.dev.refresh_token_ttl", wantMsg: "positive"},

		{name: "sqlite file", mutate: func(c *Config) { c.Store.DSN = "/srv/kadu.db?_pragma=busy_timeout(5000)" }},
		{name: "sqlite URI", mutate: func(c *Config) { c.Store.DSN = "file:/srv/kadu.db?mode=rwc" }},
		{name: "postgres URL", mutate: func(c *Config) {
			c.Store = Store{Driver: DriverPostgres, DSN: "postgres://kadu:pw@db.example.com:5432/kadu?sslmode=verify-full"}
			c.SingleNode = true
		}},
		{name: "postgresql scheme", mutate: func(c *Config) {
			c.Store = Store{Driver: DriverPostgres, DSN: "postgresql://db/kadu"}
			c.SingleNode = true
		}},
		{name: "postgres socket directory", mutate: func(c *Config) {
			c.Store = Store{Driver: DriverPostgres, DSN: "postgres:///kadu?host=/run/postgresql"}
			c.SingleNode = true
		}},
		{name: "store driver", mutate: func(c *Config) { c.Store.Driver = "mysql" }, wantKey: "store.driver", wantMsg: `"mysql" is not allowed (want one of sqlite, postgres)`},
		{name: "store driver empty", mutate: func(c *Config) { c.Store.Driver = "" }, wantKey: "store.driver", wantMsg: "want one of sqlite, postgres"},
		{name: "postgres without dsn", mutate: func(c *Config) { c.Store.Driver = DriverPostgres; c.SingleNode = true }, wantKey: "store.dsn", wantMsg: "required when store.driver is postgres"},
		{name: "postgres key=value dsn", mutate: func(c *Config) {
			c.Store = Store{Driver: DriverPostgres, DSN: "host=db user=kadu dbname=kadu"}
			c.SingleNode = true
		}, wantKey: "store.dsn", wantMsg: "not a postgres:// URL"},
		{name: "postgres dsn without host", mutate: func(c *Config) {
			c.Store = Store{Driver: DriverPostgres, DSN: "postgres:///kadu?sslmode=disable"}
			c.SingleNode = true
		}, wantKey: "store.dsn", wantMsg: "no host and no socket directory"},
		{name: "postgres dsn bad port", mutate: func(c *Config) {
			c.Store = Store{Driver: DriverPostgres, DSN: "postgres://db:port/kadu"}
			c.SingleNode = true
		}, wantKey: "store.dsn", wantMsg: "does not parse"},
		{name: "sqlite given a postgres URL", mutate: func(c *Config) { c.Store.DSN = "postgres://db/kadu" }, wantKey: "store.dsn", wantMsg: "set store.driver: postgres"},
		{name: "sqlite in memory", mutate: func(c *Config) { c.Store.DSN = ":memory:" }, wantKey: "store.dsn", wantMsg: "in-memory"},

		{name: "http runner", mutate: func(c *Config) {
			c.Runner.Kind = RunnerHTTP
			c.Runner.HTTP.URL = "https://agent.example.com/v1"
			c.Runner.HTTP.Token = "tok_abc.DEF-123"
		}},
		{name: "http runner on loopback", mutate: func(c *Config) { c.Runner.Kind = RunnerHTTP; c.Runner.HTTP.URL = "http://127.0.0.1:7070" }},
		{name: "rescue_after short", mutate: func(c *Config) { c.Runner.RescueAfter = 2 * time.Second }},
		{name: "rescue_after zero", mutate: func(c *Config) { c.Runner.RescueAfter = 0 }, wantKey: "runner.rescue_after", wantMsg: "positive duration"},
		{name: "rescue_after too short", mutate: func(c *Config) { c.Runner.RescueAfter = 100 * time.Millisecond }, wantKey: "runner.rescue_after", wantMsg: "want from 1s to 1h0m0s"},
		{name: "rescue_after too long", mutate: func(c *Config) { c.Runner.RescueAfter = 2 * time.Hour }, wantKey: "runner.rescue_after", wantMsg: "out of range"},
		{name: "runner kind", mutate: func(c *Config) { c.Runner.Kind = "remote" }, wantKey: "runner.kind", wantMsg: "want one of builtin, http"},
		{name: "http runner without url", mutate: func(c *Config) { c.Runner.Kind = RunnerHTTP }, wantKey: "runner.http.url", wantMsg: "required"},
		{name: "runner url checked even when builtin", mutate: func(c *Config) { c.Runner.HTTP.URL = "agent:7070" }, wantKey: "runner.http.url", wantMsg: "scheme"},
		{name: "runner url http on a public host", mutate: func(c *Config) {
			c.Runner.Kind = RunnerHTTP
			c.Runner.HTTP.URL = "http://agent.example.com"
		}, wantKey: "runner.http.url", wantMsg: "https"},
		{name: "runner url with user info", mutate: func(c *Config) { c.Runner.HTTP.URL = "https://u:pw@agent.example.com" }, wantKey: "runner.http.url", wantMsg: "user information"},
		{name: "runner url with query", mutate: func(c *Config) { c.Runner.HTTP.URL = "https://agent.example.com/?x=1" }, wantKey: "runner.http.url", wantMsg: "query"},
		{name: "runner token with newline", mutate: func(c *Config) { c.Runner.HTTP.Token = "abc\n" }, wantKey: "runner.http.token", wantMsg: "trailing newline"},
		{name: "runner token with space", mutate: func(c *Config) { c.Runner.HTTP.Token = "Bearer abc" }, wantKey: "runner.http.token", wantMsg: "spaces"},
		{name: "runner timeout", mutate: func(c *Config) { c.Runner.HTTP.Timeout = 0 }, wantKey: "runner.http.timeout", wantMsg: "positive"},
		{name: "runner poll interval", mutate: func(c *Config) { c.Runner.HTTP.PollInterval = -time.Second }, wantKey: "runner.http.poll_interval", wantMsg: "positive"},

		{name: "orgs on and off", mutate: func(c *Config) { c.Orgs.AutoProvision = "on"; c.Orgs.ExampleTasks = "off" }},
		{name: "orgs true and false", mutate: func(c *Config) { c.Orgs.AutoProvision = "true"; c.Orgs.ExampleTasks = "false" }},
		{name: "auto_provision", mutate: func(c *Config) { c.Orgs.AutoProvision = "maybe" }, wantKey: "orgs.auto_provision", wantMsg: `"maybe" is not allowed (want one of auto, on, off)`},
		{name: "example_tasks", mutate: func(c *Config) { c.Orgs.ExampleTasks = "" }, wantKey: "orgs.example_tasks", wantMsg: "auto, on, off"},
		{name: "default plan undefined", mutate: func(c *Config) { c.Orgs.DefaultPlan = "gold" }, wantKey: "orgs.default_plan", wantMsg: `"gold" is not a defined plan (want one of developer, team`},
		{name: "default plan empty", mutate: func(c *Config) { c.Orgs.DefaultPlan = "" }, wantKey: "orgs.default_plan", wantMsg: "not a defined plan"},
		{name: "no plans", mutate: func(c *Config) { c.Plans = nil }, wantKey: "orgs.default_plan", wantMsg: "none is defined"},

		{name: "custom plan", mutate: func(c *Config) {
			c.Plans["gold"] = Plan{ConcurrentExecutions: 1, ExecutionsPerMonth: 1, MaxFileSizeBytes: 1, Retention: time.Second,
				RequestsPerMinute: 1, CostCapCents: 1, MaxCostPerExecutionCents: 1}
			c.Orgs.DefaultPlan = "gold"
		}},
		{name: "per-execution cost equal to the cap", mutate: func(c *Config) { setPlan(c, "team", func(p *Plan) { p.MaxCostPerExecutionCents = p.CostCapCents }) }},
		{name: "plan without webhooks", mutate: func(c *Config) { setPlan(c, "team", func(p *Plan) { p.Webhooks = 0 }) }},
		{name: "plan name", mutate: func(c *Config) { c.Plans["Gold"] = c.Plans["team"] }, wantKey: "plans.Gold", wantMsg: "not a valid plan name"},
		{name: "plan name with a dot", mutate: func(c *Config) { c.Plans["a.b"] = c.Plans["team"] }, wantKey: "plans.a.b", wantMsg: "not a valid plan name"},
		{name: "concurrent_executions", mutate: func(c *Config) { setPlan(c, "developer", func(p *Plan) { p.ConcurrentExecutions = 0 }) },
			wantKey: "plans.developer.concurrent_executions", wantMsg: "0 or not set"},
		{name: "executions_per_month", mutate: func(c *Config) { setPlan(c, "developer", func(p *Plan) { p.ExecutionsPerMonth = -1 }) },
			wantKey: "plans.developer.executions_per_month", wantMsg: "-1 is negative"},
		{name: "max_file_size_bytes", mutate: func(c *Config) { setPlan(c, "team", func(p *Plan) { p.MaxFileSizeBytes = 0 }) },
			wantKey: "plans.team.max_file_size_bytes", wantMsg: "greater than 0"},
		{name: "retention zero", mutate: func(c *Config) { setPlan(c, "team", func(p *Plan) { p.Retention = 0 }) },
			wantKey: "plans.team.retention", wantMsg: "0 or not set"},
		{name: "retention negative", mutate: func(c *Config) { setPlan(c, "team", func(p *Plan) { p.Retention = -time.Hour }) },
			wantKey: "plans.team.retention", wantMsg: "positive duration"},
		{name: "webhooks negative", mutate: func(c *Config) { setPlan(c, "team", func(p *Plan) { p.Webhooks = -1 }) },
			wantKey: "plans.team.webhooks", wantMsg: "want 0 (no webhooks) or more"},
		{name: "requests_per_minute", mutate: func(c *Config) { setPlan(c, "team", func(p *Plan) { p.RequestsPerMinute = 0 }) },
			wantKey: "plans.team.requests_per_minute", wantMsg: "greater than 0"},
		{name: "cost_cap_cents", mutate: func(c *Config) { setPlan(c, "team", func(p *Plan) { p.CostCapCents = 0 }) },
			wantKey: "plans.team.cost_cap_cents", wantMsg: "greater than 0"},
		{name: "max_cost_per_execution_cents", mutate: func(c *Config) { setPlan(c, "team", func(p *Plan) { p.MaxCostPerExecutionCents = 0 }) },
			wantKey: "plans.team.max_cost_per_execution_cents", wantMsg: "greater than 0"},
		{name: "per-execution cost above the cap", mutate: func(c *Config) { setPlan(c, "team", func(p *Plan) { p.MaxCostPerExecutionCents = p.CostCapCents + 1 }) },
			wantKey: "plans.team.max_cost_per_execution_cents", wantMsg: "500001 is more than plans.team.cost_cap_cents (500000)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := validBase()
			tt.mutate(&c)
			err := c.Validate()
			got := keyErrors(t, err)
			if tt.wantKey == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if len(got) != 1 || got[0].Key != tt.wantKey {
				t.Fatalf("Validate() = %v, want exactly one error for key %q", err, tt.wantKey)
			}
			if !strings.HasPrefix(err.Error(), tt.wantKey+": ") || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Fatalf("Validate() = %q, want %q: …%s…", err, tt.wantKey, tt.wantMsg)
			}
		})
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	t.Parallel()
	c := validBase()
	c.Addr = "nope"
	c.Log.Level = "loud"
	c.Auth.Algorithms = []string{"HS256"}
	var keys []string
	for _, e := range keyErrors(t, c.Validate()) {
		keys = append(keys, e.Key)
	}
	want := []string{"addr", "log.level", "auth.algorithms[0]"}
	if !slices.Equal(keys, want) {
		t.Fatalf("Validate() keys = %v, want %v", keys, want)
	}
}

// setPlan changes one field of a plan of c.
func setPlan(c *Config, name string, f func(*Plan)) {
	p := c.Plans[name]
	f(&p)
	c.Plans[name] = p
}

// No message shows a password or the runner token.
func TestValidateNeverShowsSecrets(t *testing.T) {
	t.Parallel()
	const secret = "s3cr3t"
	base := validBase
	tests := []struct {
		name    string
		mutate  func(c *Config)
		wantKey string
	}{
		{"postgres without host", func(c *Config) { c.Store = Store{Driver: DriverPostgres, DSN: "postgres://u:" + secret + "@/kadu"} }, "store.dsn"},
		{"postgres bad port", func(c *Config) { c.Store = Store{Driver: DriverPostgres, DSN: "postgres://u:" + secret + "@db:x/kadu"} }, "store.dsn"},
		{"postgres bad escape", func(c *Config) {
			c.Store = Store{Driver: DriverPostgres, DSN: "postgres://u:" + secret + "%zz@db/kadu"}
		}, "store.dsn"},
		{"postgres password parameter", func(c *Config) {
			c.Store = Store{Driver: DriverPostgres, DSN: "postgres:///kadu?password=" + secret}
		}, "store.dsn"},
		{"postgres key=value", func(c *Config) { c.Store = Store{Driver: DriverPostgres, DSN: "host=db password=" + secret} }, "store.dsn"},
		{"postgres URL for sqlite", func(c *Config) { c.Store.DSN = DSN("postgres://u:" + secret + "@db/kadu") }, "store.dsn"},
		{"runner URL with user info", func(c *Config) { c.Runner.HTTP.URL = "https://u:" + secret + "@agent.example.com" }, "runner.http.url"},
		{"runner URL http with user info", func(c *Config) {
			c.Runner.Kind = RunnerHTTP
			c.Runner.HTTP.URL = "http://u:" + secret + "@agent.example.com"
		}, "runner.http.url"},
		{"runner URL with a token parameter", func(c *Config) { c.Runner.HTTP.URL = "https://agent.example.com/?token=" + secret }, "runner.http.url"},
		{"runner URL unparseable", func(c *Config) { c.Runner.HTTP.URL = "https://u:" + secret + "@agent:port" }, "runner.http.url"},
		{"runner token", func(c *Config) { c.Runner.HTTP.Token = Secret(secret + " \n") }, "runner.http.token"},
	}
	for _, tt := range tests {
		c := base()
		tt.mutate(&c)
		err := c.Validate()
		if err == nil {
			t.Errorf("%s: Validate() = nil, want an error", tt.name)
			continue
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("%s: Validate() shows the secret: %v", tt.name, err)
		}
		if ke := keyErrors(t, err); ke[0].Key != tt.wantKey {
			t.Errorf("%s: Validate() = %v, want an error for %s", tt.name, err, tt.wantKey)
		}
	}
}
