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
	return c
}

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
		{name: "production with external issuer", mutate: production},
		{name: "localhost addr without issuer", mutate: func(c *Config) { c.Addr = "localhost:8080" }},
		{name: "IPv6 loopback addr", mutate: func(c *Config) { c.Addr = "[::1]:8080" }},
		{name: "port 0 picks a free port", mutate: func(c *Config) { c.Addr = "127.0.0.1:0"; c.AdminAddr = "127.0.0.1:0" }},
		{name: "http issuer on loopback", mutate: func(c *Config) { c.Auth.Issuer = "http://127.0.0.1:5556/dex" }},
		{name: "public_url with one trailing slash", mutate: func(c *Config) { c.PublicURL = "http://localhost:8080/" }},
		{name: "dev access ttl above cap is ignored with an issuer", mutate: func(c *Config) {
			production(c)
			c.Auth.MaxTokenLifetime = 10 * time.Minute
		}},

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
		{name: "dev role unknown", mutate: func(c *Config) { c.Auth.Dev.DefaultRole = "root" }, wantKey: "auth.dev.default_role", wantMsg: "viewer, member, admin, owner"},
		{name: "dev subject empty", mutate: func(c *Config) { c.Auth.Dev.DefaultSubject = "" }, wantKey: "auth.dev.default_subject", wantMsg: "empty"},
		{name: "dev access ttl zero", mutate: func(c *Config) { c.Auth.Dev.AccessTokenTTL = 0 }, wantKey: "auth.dev.access_token_ttl", wantMsg: "positive"},
		{name: "dev access ttl above cap", mutate: func(c *Config) { c.Auth.Dev.AccessTokenTTL = 48 * time.Hour }, wantKey: "auth.dev.access_token_ttl", wantMsg: "auth.max_token_lifetime"},
		{name: "dev refresh ttl zero", mutate: func(c *Config) { c.Auth.Dev.RefreshTokenTTL = 0 }, wantKey: "auth.dev.refresh_token_ttl", wantMsg: "positive"},
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
