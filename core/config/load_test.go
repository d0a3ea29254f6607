package config

import (
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/providers/file"
	"github.com/knadh/koanf/v2"
	"github.com/spf13/pflag"

	"github.com/kobana/kadu/core/plans"
)

// environ returns a fixed environment for load, so tests ignore the real one.
func environ(kv ...string) func() []string { return func() []string { return kv } }

// writeYAML writes a config file in a temporary directory and returns its path.
func writeYAML(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kadu.yaml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// missing is a path that does not exist.
func missing(t *testing.T) string { return filepath.Join(t.TempDir(), "absent.yaml") }

// wantDefaults is what Load returns with no file, environment or flags.
func wantDefaults() Config {
	c := Defaults()
	c.PublicURL = "http://127.0.0.1:8080"
	c.Plugins.normalize(paths{})
	return c
}

// serveFlags is a flag set like `kadu serve` binds.
func serveFlags(t *testing.T) *pflag.FlagSet {
	t.Helper()
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	fs.String("addr", "127.0.0.1:8080", "")
	fs.String("data-dir", "", "")
	fs.String("log-level", "info", "")
	fs.String("unbound", "", "") // not a configuration flag
	for name, key := range map[string]string{"addr": "addr", "data-dir": "data_dir", "log-level": "log.level"} {
		if err := BindFlag(fs, name, key); err != nil {
			t.Fatal(err)
		}
	}
	return fs
}

func TestLoadDefaults(t *testing.T) {
	t.Parallel()
	got, err := load(missing(t), false, nil, environ())
	if err != nil {
		t.Fatal(err)
	}
	if want := wantDefaults(); !reflect.DeepEqual(*got, want) {
		t.Fatalf("load() = %+v, want %+v", *got, want)
	}
}

// config/kadu.yaml documents the embedded defaults; it must not drift.
func TestDefaultFileMatchesDefaults(t *testing.T) {
	t.Parallel()
	path := filepath.Join("..", "..", DefaultPath)
	got, err := load(path, true, nil, environ())
	if err != nil {
		t.Fatal(err)
	}
	if want := wantDefaults(); !reflect.DeepEqual(*got, want) {
		t.Fatalf("%s gives %+v,\nwant Defaults() %+v", path, *got, want)
	}

	// Every key is listed, set or (for top-level derived defaults) commented;
	// the keys of map sections are listed for every built-in entry.
	body, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ko := koanf.New(".")
	if err := ko.Load(file.Provider(path), yaml.Parser()); err != nil {
		t.Fatal(err)
	}
	for _, key := range expandKeys(wantDefaults()) {
		if !ko.Exists(key) && !strings.Contains(string(body), "\n# "+key+":") {
			t.Errorf("%s does not list key %s", path, key)
		}
	}
}

// expandKeys is every leaf key of c: the schema's keys, with those of map
// sections spelled out for each entry c has.
func expandKeys(c Config) []string {
	var out []string
	for _, key := range configSchema.keys {
		before, after, isEntry := strings.Cut(key, namePlaceholder)
		if !isEntry {
			out = append(out, key)
			continue
		}
		var names []string
		switch before {
		case "plans.":
			names = slices.Sorted(maps.Keys(c.Plans))
		case "plugins.bundles.":
			names = slices.Sorted(maps.Keys(c.Plugins.Bundles))
		case "plugins.trusted_keys.":
			names = slices.Sorted(maps.Keys(c.Plugins.TrustedKeys))
		default:
			panic("expandKeys knows only the map sections plans, plugins.bundles and plugins.trusted_keys, not " + key)
		}
		for _, name := range names {
			out = append(out, before+name+after)
		}
	}
	return out
}

func TestProductionExampleLoads(t *testing.T) {
	t.Parallel()
	// Replicas share the cursor signing key through the environment.
	got, err := load(filepath.Join("..", "..", "config", "production.example.yaml"), true, nil,
		environ("KADU_API__SIGNING_KEY=0123456789abcdef0123456789abcdef-test"))
	if err != nil {
		t.Fatal(err)
	}
	if got.MCPURL() != "https://mcp.example.com/mcp" || got.Auth.Issuer == "" {
		t.Fatalf("production example: MCP URL %q, issuer %q", got.MCPURL(), got.Auth.Issuer)
	}
	// Several replicas: a shared bucket, an external issuer, limits in the
	// shared store, and no single_node escape.
	if got.SingleNode || got.filesLocal() || got.RateLimitBackend() != RateLimitPostgres {
		t.Errorf("production example: single_node %v, files.url %q, rate limits %q; want false, an s3:// bucket, postgres",
			got.SingleNode, got.Files.URL, got.RateLimitBackend())
	}
	if got.Store.Driver != DriverPostgres || got.Runner.Kind != RunnerHTTP || got.AutoProvision() || got.ExampleTasks() {
		t.Errorf("production example: store %v, runner %q, auto-provision %v, example tasks %v",
			got.Store, got.Runner.Kind, got.AutoProvision(), got.ExampleTasks())
	}
	team := plans.Builtin()["team"]
	team.RequestsPerMinute = 6000
	if got.Plans["team"] != team || got.Plans["enterprise"].CostCapCents != 5000000 || got.Orgs.DefaultPlan != "team" {
		t.Errorf("production example: plans %+v", got.Plans)
	}
}

// File < environment < flags, with t.Setenv and the real Load.
func TestLoadPrecedence(t *testing.T) {
	path := writeYAML(t, `
addr: 127.0.0.1:1001
admin_addr: 127.0.0.1:2001
mcp_path: /from-file
log:
  level: debug
  format: text
auth:
  algorithms: [ES384]
`)
	t.Setenv("KADU_ADDR", "127.0.0.1:1002")
	t.Setenv("KADU_LOG__LEVEL", "warn")
	t.Setenv("KADU_DATA_DIR", "/from/env")
	t.Setenv("KADU_AUTH__ALGORITHMS", "RS256, PS256")
	fs := serveFlags(t)
	if err := fs.Parse([]string{"--addr", "127.0.0.1:1003", "--unbound", "x"}); err != nil {
		t.Fatal(err)
	}

	got, err := Load(path, true, fs)
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		key       string
		got, want any
	}{
		{"addr (flag over env over file)", got.Addr, "127.0.0.1:1003"},
		{"public_url (derived from the final addr)", got.PublicURL, "http://127.0.0.1:1003"},
		{"log.level (env over file; flag left at its default)", got.Log.Level, "warn"},
		{"data_dir (env; flag left at its default)", got.DataDir, "/from/env"},
		{"auth.algorithms (env list)", got.Auth.Algorithms, []string{"RS256", "PS256"}},
		{"admin_addr (file)", got.AdminAddr, "127.0.0.1:2001"},
		{"mcp_path (file)", got.MCPPath, "/from-file"},
		{"log.format (file)", got.Log.Format, "text"},
		{"auth.org_claim (default)", got.Auth.OrgClaim, "org_id"},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %#v, want %#v", c.key, c.got, c.want)
		}
	}
}

func TestLoadEnvMapping(t *testing.T) {
	tests := []struct {
		env  string // one or more NAME=value, separated by " | "
		get  func(*Config) any
		want any
	}{
		{"KADU_ADDR=localhost:7000", func(c *Config) any { return c.Addr }, "localhost:7000"},
		{"KADU_PUBLIC_URL=http://localhost:7000/", func(c *Config) any { return c.PublicURL }, "http://localhost:7000"},
		{"KADU_MCP_PATH=/v1/mcp", func(c *Config) any { return c.MCPURL() }, "http://127.0.0.1:8080/v1/mcp"},
		{"KADU_LOG__FORMAT=text", func(c *Config) any { return c.Log.Format }, "text"},
		{"KADU_HTTP__READ_TIMEOUT=45s", func(c *Config) any { return c.HTTP.ReadTimeout }, 45 * time.Second},
		{"KADU_AUTH__ISSUER=https://id.example.com", func(c *Config) any { return c.Auth.Issuer }, "https://id.example.com"},
		{"KADU_AUTH__REQUIRE_AT_JWT=false", func(c *Config) any { return c.Auth.RequireATJWT }, false},
		{"KADU_AUTH__ALGORITHMS=RS256,ES256,EdDSA", func(c *Config) any { return c.Auth.Algorithms }, []string{"RS256", "ES256", "EdDSA"}},
		{"KADU_AUTH__AUDIENCES=", func(c *Config) any { return c.Auth.Audiences }, []string{}},
		{"KADU_AUTH__AUDIENCES=a, b", func(c *Config) any { return c.Auth.Audiences }, []string{"a", "b"}},
		{"KADU_AUTH__DEV__DEFAULT_ROLE=viewer", func(c *Config) any { return c.Auth.Dev.DefaultRole }, "viewer"},
		{"KADU_AUTH__DEV__REFRESH_TOKEN_TTL=1h", func(c *Config) any { return c.Auth.Dev.RefreshTokenTTL }, time.Hour},
		{"OTHER_ADDR=ignored", func(c *Config) any { return c.Addr }, "127.0.0.1:8080"},

		{"KADU_STORE__DSN=/srv/kadu/k.db?_pragma=busy_timeout(5000)", func(c *Config) any { return c.StoreDSN() }, "/srv/kadu/k.db?_pragma=busy_timeout(5000)"},
		{"KADU_STORE__DRIVER=postgres | KADU_STORE__DSN=postgres://kadu:pw@db:5432/kadu | KADU_API__SIGNING_KEY=0123456789abcdef0123456789abcdef | KADU_SINGLE_NODE=true",
			func(c *Config) any { return []string{c.Store.Driver, c.StoreDSN()} }, []string{"postgres", "postgres://kadu:pw@db:5432/kadu"}},
		{"KADU_RUNNER__KIND=http | KADU_RUNNER__HTTP__URL=https://agent.example.com | KADU_RUNNER__HTTP__TOKEN=tok",
			func(c *Config) any { return []string{c.Runner.Kind, c.Runner.HTTP.URL, c.Runner.HTTP.Token.Reveal()} },
			[]string{"http", "https://agent.example.com", "tok"}},
		{"KADU_RUNNER__HTTP__TIMEOUT=5s", func(c *Config) any { return c.Runner.HTTP.Timeout }, 5 * time.Second},
		{"KADU_RUNNER__HTTP__POLL_INTERVAL=250ms", func(c *Config) any { return c.Runner.HTTP.PollInterval }, 250 * time.Millisecond},
		{"KADU_ORGS__AUTO_PROVISION=off", func(c *Config) any { return c.AutoProvision() }, false},
		{"KADU_ORGS__AUTO_PROVISION=false", func(c *Config) any { return c.Orgs.AutoProvision }, "off"},
		{"KADU_ORGS__EXAMPLE_TASKS=off", func(c *Config) any { return c.ExampleTasks() }, false},
		{"KADU_ORGS__DEFAULT_PLAN=team", func(c *Config) any { return c.Orgs.DefaultPlan }, "team"},
		{"KADU_PLANS__DEVELOPER__COST_CAP_CENTS=20000",
			func(c *Config) any { return c.Plans["developer"].CostCapCents }, int64(20000)},
		{"KADU_PLANS__TEAM__RETENTION=24h", func(c *Config) any {
			return []any{c.Plans["team"].Retention, c.Plans["team"].Webhooks} // the rest stays built in
		}, []any{24 * time.Hour, 20}},
		{"KADU_PLANS__DEVELOPER__WEBHOOKS=0", func(c *Config) any { return c.Plans["developer"].Webhooks }, 0},
		{strings.Join([]string{"KADU_ORGS__DEFAULT_PLAN=gold-2",
			"KADU_PLANS__GOLD-2__CONCURRENT_EXECUTIONS=3", "KADU_PLANS__GOLD-2__EXECUTIONS_PER_MONTH=30",
			"KADU_PLANS__GOLD-2__MAX_FILE_SIZE_BYTES=1024", "KADU_PLANS__GOLD-2__RETENTION=1h", "KADU_PLANS__GOLD-2__REQUESTS_PER_MINUTE=60",
			"KADU_PLANS__GOLD-2__COST_CAP_CENTS=100", "KADU_PLANS__GOLD-2__MAX_COST_PER_EXECUTION_CENTS=10"}, " | "),
			func(c *Config) any { return c.Plans["gold-2"] },
			Plan{ConcurrentExecutions: 3, ExecutionsPerMonth: 30, MaxFileSizeBytes: 1024, Retention: time.Hour,
				RequestsPerMinute: 60, CostCapCents: 100, MaxCostPerExecutionCents: 10, AuditRetention: 8760 * time.Hour}},
	}
	for _, tt := range tests {
		t.Run(tt.env, func(t *testing.T) {
			t.Parallel()
			c, err := load(missing(t), false, nil, environ(strings.Split(tt.env, " | ")...))
			if err != nil {
				t.Fatal(err)
			}
			if got := tt.get(c); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("%s: got %#v, want %#v", tt.env, got, tt.want)
			}
		})
	}
}

func TestEnvVar(t *testing.T) {
	t.Parallel()
	for key, want := range map[string]string{
		"addr":                  "KADU_ADDR",
		"public_url":            "KADU_PUBLIC_URL",
		"auth.issuer":           "KADU_AUTH__ISSUER",
		"auth.require_at_jwt":   "KADU_AUTH__REQUIRE_AT_JWT",
		"auth.dev.default_role": "KADU_AUTH__DEV__DEFAULT_ROLE",
		"runner.http.token":     "KADU_RUNNER__HTTP__TOKEN",
		"plans.team.retention":  "KADU_PLANS__TEAM__RETENTION",
	} {
		if got := EnvVar(key); got != want {
			t.Errorf("EnvVar(%q) = %q, want %q", key, got, want)
		}
		if got, _ := envKey(want, ""); got != key {
			t.Errorf("envKey(%q) = %q, want %q", want, got, key)
		}
	}
}

// Errors from Load: each names the key (and where the value came from).
func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name  string
		yaml  string // "" = no file
		env   []string
		flags []string // for serveFlags
		want  []string // substrings of the error
	}{
		{name: "unknown top-level key", yaml: "adress: 127.0.0.1:8080\n",
			want: []string{"adress (", "unknown key", `did you mean "addr"`}},
		{name: "unknown nested key", yaml: "auth:\n  isuer: https://id.example.com\n",
			want: []string{"auth.isuer (", `did you mean "auth.issuer"`}},
		{name: "unknown key, nothing close", yaml: "zzzzzzzz: 1\n",
			want: []string{"zzzzzzzz (", "unknown key"}},
		{name: "section given a scalar", yaml: "auth: yes\n",
			want: []string{"auth (", "is a section"}},
		{name: "leaf given a mapping", yaml: "addr:\n  host: x\n",
			want: []string{"addr.host (", "unknown key"}},
		{name: "bad boolean in file", yaml: "auth:\n  require_at_jwt: maybe\n",
			want: []string{"auth.require_at_jwt (", `"maybe" is not a boolean (want true or false)`}},
		{name: "duration without unit", yaml: "http:\n  read_timeout: 30\n",
			want: []string{"http.read_timeout (", "30 is not a duration", `"30s"`}},
		{name: "list item not a string", yaml: "auth:\n  algorithms: [RS256, {a: b}]\n",
			want: []string{"auth.algorithms[1] (", "want a string, got a mapping"}},
		{name: "string given a list", yaml: "addr: [a, b]\n",
			want: []string{"addr (", "want a string, got a list"}},
		{name: "bad boolean in env", env: []string{"KADU_AUTH__REQUIRE_AT_JWT=nah"},
			want: []string{"auth.require_at_jwt (env KADU_AUTH__REQUIRE_AT_JWT)", "not a boolean"}},
		{name: "bad duration in env", env: []string{"KADU_AUTH__MAX_TOKEN_LIFETIME=1 day"},
			want: []string{"auth.max_token_lifetime (env KADU_AUTH__MAX_TOKEN_LIFETIME)", "not a duration"}},
		{name: "env with single underscore for nesting", env: []string{"KADU_AUTH_ISSUER=https://id.example.com"},
			want: []string{"auth_issuer (env KADU_AUTH_ISSUER)", "did you mean KADU_AUTH__ISSUER for auth.issuer"}},
		{name: "unknown env key", env: []string{"KADU_ADRESS=x"},
			want: []string{"adress (env KADU_ADRESS)", "did you mean KADU_ADDR"}},
		{name: "invalid value from file", yaml: "addr: 127.0.0.1\n",
			want: []string{"invalid configuration", "addr (", `.yaml:1): "127.0.0.1" is not host:port`}},
		{name: "invalid value from flag", flags: []string{"--addr", "0.0.0.0:8080"},
			want: []string{"addr (flag --addr):", "configure auth.issuer"}},
		{name: "invalid role from env", env: []string{"KADU_AUTH__DEV__DEFAULT_ROLE=boss"},
			want: []string{`auth.dev.default_role (env KADU_AUTH__DEV__DEFAULT_ROLE): "boss" is not allowed (want one of viewer, member, admin, owner)`}},
		{name: "bad URL from env", env: []string{"KADU_AUTH__ISSUER=ldap://id"},
			want: []string{"auth.issuer (env KADU_AUTH__ISSUER):", "scheme"}},
		{name: "all problems at once", yaml: "adress: x\nlog:\n  levl: debug\n",
			want: []string{"adress (", "log.levl ("}},
		{name: "malformed YAML", yaml: "addr: [\n", want: []string{"config file", "yaml"}},
		{name: "duplicate YAML key", yaml: "addr: a\naddr: b\n", want: []string{"config file", "already defined"}},

		{name: "unknown store key", yaml: "store:\n  dns: x.db\n", want: []string{"store.dns (", `did you mean "store.dsn"`}},
		{name: "unknown runner key in env", env: []string{"KADU_RUNNER__HTTP__TIMEOUTS=5s"},
			want: []string{"runner.http.timeouts (env KADU_RUNNER__HTTP__TIMEOUTS)", "did you mean KADU_RUNNER__HTTP__TIMEOUT for runner.http.timeout"}},
		{name: "bad runner timeout", env: []string{"KADU_RUNNER__HTTP__TIMEOUT=30"},
			want: []string{"runner.http.timeout (env KADU_RUNNER__HTTP__TIMEOUT)", "not a duration"}},
		{name: "invalid value: toggle", yaml: "orgs:\n  auto_provision: yes\n",
			want: []string{"orgs.auto_provision (", `.yaml:2): "yes" is not allowed (want one of auto, on, off)`}},
		{name: "undefined default plan", env: []string{"KADU_ORGS__DEFAULT_PLAN=gold"},
			want: []string{`orgs.default_plan (env KADU_ORGS__DEFAULT_PLAN): "gold" is not a defined plan (want one of developer, team;`}},
		{name: "unknown plan field", yaml: "plans:\n  developer:\n    cost_cap: 5\n",
			want: []string{"plans.developer.cost_cap (", "unknown key", `did you mean "plans.developer.cost_cap_cents"`}},
		{name: "unknown plan field in a new plan", yaml: "plans:\n  gold:\n    retension: 1h\n",
			want: []string{"plans.gold.retension (", `did you mean "plans.gold.retention"`}},
		{name: "misspelt plans section", yaml: "plan:\n  team:\n    webhooks: 1\n",
			want: []string{"plan.team.webhooks (", `did you mean "plans.team.webhooks"`}},
		{name: "unknown plan field in env", env: []string{"KADU_PLANS__TEAM__WEBHOOK=1"},
			want: []string{"plans.team.webhook (env KADU_PLANS__TEAM__WEBHOOK)", "did you mean KADU_PLANS__TEAM__WEBHOOKS for plans.team.webhooks"}},
		{name: "plan env with single underscores", env: []string{"KADU_PLANS_TEAM_COST_CAP_CENTS=1"},
			want: []string{"plans_team_cost_cap_cents (env KADU_PLANS_TEAM_COST_CAP_CENTS)",
				"did you mean KADU_PLANS__TEAM__COST_CAP_CENTS for plans.team.cost_cap_cents? nesting levels"}},
		{name: "plan env with one single underscore", env: []string{"KADU_PLANS__BIG_TEAM_WEBHOOKS=1"},
			want: []string{"did you mean KADU_PLANS__BIG_TEAM__WEBHOOKS for plans.big_team.webhooks?"}},
		{name: "plan field of the wrong type", yaml: "plans:\n  team:\n    retention: 30\n",
			want: []string{"plans.team.retention (", "30 is not a duration"}},
		{name: "plan count not a number", env: []string{"KADU_PLANS__TEAM__WEBHOOKS=many"},
			want: []string{"plans.team.webhooks (env KADU_PLANS__TEAM__WEBHOOKS)", "not a whole number"}},
		{name: "plans given a scalar", yaml: "plans: 3\n", want: []string{"plans (", "is a section"}},
		{name: "plan given a scalar", yaml: "plans:\n  team: 3\n", want: []string{"plans.team (", "is a section"}},
		{name: "plan name with capitals", yaml: "plans:\n  Gold:\n    webhooks: 1\n    retention: 1h\n",
			want: []string{"plans.Gold (", `"Gold" is not a valid name for an entry of plans (want a lower-case letter`}},
		{name: "plan name too long", yaml: "plans:\n  " + strings.Repeat("a", 33) + ":\n    webhooks: 1\n",
			want: []string{"plans." + strings.Repeat("a", 33) + " (", "not a valid name"}},
		{name: "invalid value: new plan set in part", yaml: "plans:\n  gold:\n    webhooks: 3\n    cost_cap_cents: 100\n",
			want: []string{"plans.gold.concurrent_executions (", ".yaml:2): is 0 or not set", "plans.gold.executions_per_month (",
				"plans.gold.max_file_size_bytes (", "plans.gold.retention (", "plans.gold.requests_per_minute (",
				"plans.gold.max_cost_per_execution_cents ("}},
		{name: "invalid value: per-execution cost above the cap", yaml: "plans:\n  developer:\n    max_cost_per_execution_cents: 10001\n",
			want: []string{".yaml:3): 10001 is more than plans.developer.cost_cap_cents (10000)"}},
		{name: "postgres without a DSN", env: []string{"KADU_STORE__DRIVER=postgres"},
			want: []string{"store.dsn: is required when store.driver is postgres"}},
		{name: "invalid value: store driver", yaml: "store:\n  driver: mysql\n",
			want: []string{"store.driver (", `.yaml:2): "mysql" is not allowed (want one of sqlite, postgres)`}},
		{name: "http runner without a URL", env: []string{"KADU_RUNNER__KIND=http"},
			want: []string{"runner.http.url: is required when runner.kind is http"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := missing(t)
			if tt.yaml != "" {
				path = writeYAML(t, tt.yaml)
			}
			fs := serveFlags(t)
			if err := fs.Parse(tt.flags); err != nil {
				t.Fatal(err)
			}
			c, err := load(path, tt.yaml != "", fs, environ(tt.env...))
			if err == nil {
				t.Fatalf("load() = %+v, want an error containing %q", c, tt.want)
			}
			t.Logf("error:\n%v", err)
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("load() error = %q\nwant it to contain %q", err, w)
				}
			}
			if strings.Contains(path, "kadu.yaml") && !strings.Contains(tt.name, "YAML") {
				if !strings.Contains(err.Error(), path) {
					t.Errorf("load() error = %q, want it to name the file %s", err, path)
				}
			}
		})
	}
}

func TestLoadMissingFile(t *testing.T) {
	t.Parallel()
	path := missing(t)
	if _, err := load(path, true, nil, environ()); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), path) {
		t.Fatalf("explicit missing file: error = %v, want fs.ErrNotExist naming %s", err, path)
	}
	if _, err := load(path, false, nil, environ()); err != nil {
		t.Fatalf("default missing file: error = %v, want nil", err)
	}
}

func TestLoadNormalizes(t *testing.T) {
	t.Parallel()
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skip("no home directory")
	}
	tests := []struct {
		yaml        string
		wantDataDir string
		wantPublic  string
	}{
		{yaml: "data_dir: ~/kadu\n", wantDataDir: filepath.Join(home, "kadu"), wantPublic: "http://127.0.0.1:8080"},
		{yaml: "public_url: http://localhost:8080/\n", wantPublic: "http://localhost:8080"},
		{yaml: "public_url: null\naddr: '[::1]:8080'\n", wantPublic: "http://[::1]:8080"},
	}
	for _, tt := range tests {
		c, err := load(writeYAML(t, tt.yaml), true, nil, environ())
		if err != nil {
			t.Fatalf("%q: %v", tt.yaml, err)
		}
		if tt.wantDataDir != "" && c.DataDir != tt.wantDataDir {
			t.Errorf("%q: data_dir = %q, want %q", tt.yaml, c.DataDir, tt.wantDataDir)
		}
		if c.PublicURL != tt.wantPublic {
			t.Errorf("%q: public_url = %q, want %q", tt.yaml, c.PublicURL, tt.wantPublic)
		}
	}
}

func TestLoadNullAndEmptySections(t *testing.T) {
	t.Parallel()
	c, err := load(writeYAML(t, "addr: null\nauth: {}\nlog:\n"), true, nil, environ())
	if err != nil {
		t.Fatal(err)
	}
	if want := wantDefaults(); !reflect.DeepEqual(*c, want) {
		t.Fatalf("load() = %+v, want defaults", *c)
	}
}

func TestBindFlag(t *testing.T) {
	t.Parallel()
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	fs.String("addr", "", "")
	if err := BindFlag(fs, "addr", "adress"); err == nil || !strings.Contains(err.Error(), "adress") {
		t.Errorf("BindFlag to an unknown key: error = %v", err)
	}
	if err := BindFlag(fs, "nope", "addr"); err == nil || !strings.Contains(err.Error(), "--nope") {
		t.Errorf("BindFlag of an undefined flag: error = %v", err)
	}
	if err := BindFlag(fs, "addr", "addr"); err != nil {
		t.Errorf("BindFlag: %v", err)
	}
}

func TestSchemaKeys(t *testing.T) {
	t.Parallel()
	want := []string{
		"addr", "admin_addr", "api.previous_signing_keys", "api.signing_key",
		"auth.algorithms", "auth.audiences",
		"auth.dev.access_token_ttl", "auth.dev.client_credentials_role", "auth.dev.default_org", "auth.dev.default_role", "auth.dev.default_subject", "auth.dev.refresh_token_ttl",
		"auth.issuer", "auth.jwks_url", "auth.max_token_lifetime", "auth.org_claim", "auth.require_at_jwt", "auth.role_claim", "auth.scope_claim",
		"confirm.approval_ttl", "confirm.client_id", "confirm.client_secret", "confirm.sealing_keys", "confirm.state_ttl",
		"data_dir",
		"files.url",
		"http.drain_delay", "http.idle_timeout", "http.read_header_timeout", "http.read_timeout", "http.shutdown_timeout", "http.trusted_proxies", "http.write_timeout",
		"log.format", "log.level",
		"mcp_path",
		"orgs.auto_provision", "orgs.default_plan", "orgs.example_tasks",
		"plans.<name>.audit_retention", "plans.<name>.concurrent_executions", "plans.<name>.cost_cap_cents", "plans.<name>.executions_per_month",
		"plans.<name>.max_cost_per_execution_cents", "plans.<name>.max_file_size_bytes", "plans.<name>.requests_per_minute",
		"plans.<name>.retention", "plans.<name>.webhooks",
		"plugins.bundles.<name>.api_calls", "plugins.bundles.<name>.enabled", "plugins.bundles.<name>.isolation",
		"plugins.bundles.<name>.max_output_bytes", "plugins.bundles.<name>.memory_mib", "plugins.bundles.<name>.organisations",
		"plugins.bundles.<name>.path", "plugins.bundles.<name>.plans", "plugins.bundles.<name>.pool_size", "plugins.bundles.<name>.required", "plugins.bundles.<name>.routes",
		"plugins.bundles.<name>.settings", "plugins.bundles.<name>.sha256", "plugins.bundles.<name>.timeout",
		"plugins.cache_dir", "plugins.drain_timeout", "plugins.idle_ttl", "plugins.max_instances",
		"plugins.memory_budget_mib", "plugins.memory_wait", "plugins.org_share_percent",
		"plugins.quarantine.cooldown", "plugins.quarantine.faults", "plugins.quarantine.window", "plugins.require_signature",
		"plugins.trusted_keys.<name>.public_key", "plugins.watch",
		"public_url",
		"rate_limits.backend", "rate_limits.enabled", "rate_limits.ip_per_minute",
		"runner.http.poll_interval", "runner.http.timeout", "runner.http.token", "runner.http.url", "runner.kind", "runner.rescue_after",
		"single_node",
		"store.driver", "store.dsn",
		"tracing.endpoint", "tracing.sample_ratio", "tracing.service_name", "tracing.trust_traceparent",
		"webhooks.allow_hosts", "webhooks.timeout",
	}
	if !slices.Equal(configSchema.keys, want) {
		t.Fatalf("keys = %q\nwant %q", configSchema.keys, want)
	}
}

// TestRelativePathsResolveAgainstTheFile: a relative path in the
// configuration file means the same wherever the server starts (a service
// manager starts it from "/"); one typed in the environment or a flag is
// relative to the shell's working directory.
func TestRelativePathsResolveAgainstTheFile(t *testing.T) {
	t.Parallel()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	const yaml = `data_dir: state
store:
  dsn: db/kadu.db?_pragma=busy_timeout(5000)
plugins:
  cache_dir: cache
  bundles:
    tasks:
      path: ../wasm/tasks.wasm
    partner:
      enabled: true
      path: partner.wasm
      sha256: ` + "abababababababababababababababababababababababababababababababab" + `
    files:
      path: /opt/kadu/files.wasm
`
	path := writeYAML(t, yaml)
	dir := filepath.Dir(path)
	flags := serveFlags(t)
	if err := flags.Parse([]string{"--data-dir", "flagged"}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		env   []string
		flags bool
		key   string
		got   func(c *Config) string
		want  string
	}{
		{"data_dir from the file", nil, false, "data_dir", func(c *Config) string { return c.DataDir }, filepath.Join(dir, "state")},
		{"data_dir from the environment", []string{"KADU_DATA_DIR=env-state"}, false, "data_dir", func(c *Config) string { return c.DataDir }, filepath.Join(wd, "env-state")},
		{"data_dir from --data-dir", nil, true, "data_dir", func(c *Config) string { return c.DataDir }, filepath.Join(wd, "flagged")},
		{"SQLite store.dsn from the file", nil, false, "store.dsn", func(c *Config) string { return c.Store.DSN.Reveal() }, filepath.Join(dir, "db", "kadu.db") + "?_pragma=busy_timeout(5000)"},
		{"plugins.cache_dir from the file", nil, false, "plugins.cache_dir", func(c *Config) string { return c.Plugins.CacheDir }, filepath.Join(dir, "cache")},
		{"bundle path from the file", nil, false, "plugins.bundles.tasks.path", func(c *Config) string { return c.Plugins.Bundles["tasks"].Path }, filepath.Join(filepath.Dir(dir), "wasm", "tasks.wasm")},
		{"partner bundle path from the file", nil, false, "plugins.bundles.partner.path", func(c *Config) string { return c.Plugins.Bundles["partner"].Path }, filepath.Join(dir, "partner.wasm")},
		{"absolute bundle path", nil, false, "plugins.bundles.files.path", func(c *Config) string { return c.Plugins.Bundles["files"].Path }, "/opt/kadu/files.wasm"},
		{"bundle path from the environment", []string{"KADU_PLUGINS__BUNDLES__TASKS__PATH=bin/tasks.wasm"}, false, "plugins.bundles.tasks.path", func(c *Config) string { return c.Plugins.Bundles["tasks"].Path }, filepath.Join(wd, "bin", "tasks.wasm")},
		{"first-party bundle left out: the copy in the binary", nil, false, "plugins.bundles.executions.path", func(c *Config) string { return c.Plugins.Bundles["executions"].Path }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var fs *pflag.FlagSet
			if tt.flags {
				fs = flags
			}
			c, err := load(path, true, fs, environ(tt.env...))
			if err != nil {
				t.Fatal(err)
			}
			if got := tt.got(c); got != tt.want {
				t.Errorf("%s = %q, want %q", tt.key, got, tt.want)
			}
		})
	}
}
