package config

import (
	"log/slog"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestURLs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                string
		cfg                 Config
		wantOrigin, wantMCP string
		wantIssuer          string
	}{
		{name: "defaults, public_url not filled",
			cfg:        Config{Addr: "127.0.0.1:8080", MCPPath: "/mcp"},
			wantOrigin: "http://127.0.0.1:8080", wantMCP: "http://127.0.0.1:8080/mcp", wantIssuer: "http://127.0.0.1:8080"},
		{name: "public_url with trailing slash",
			cfg:        Config{Addr: "127.0.0.1:8080", PublicURL: "http://localhost:8080/", MCPPath: "/v1/mcp"},
			wantOrigin: "http://localhost:8080", wantMCP: "http://localhost:8080/v1/mcp", wantIssuer: "http://localhost:8080"},
		{name: "external issuer",
			cfg:        Config{Addr: ":8080", PublicURL: "https://mcp.example.com", MCPPath: "/mcp", Auth: Auth{Issuer: "https://id.example.com/"}},
			wantOrigin: "https://mcp.example.com", wantMCP: "https://mcp.example.com/mcp", wantIssuer: "https://id.example.com/"},
	}
	for _, tt := range tests {
		if got := tt.cfg.PublicOrigin(); got != tt.wantOrigin {
			t.Errorf("%s: PublicOrigin() = %q, want %q", tt.name, got, tt.wantOrigin)
		}
		if got := tt.cfg.MCPURL(); got != tt.wantMCP {
			t.Errorf("%s: MCPURL() = %q, want %q", tt.name, got, tt.wantMCP)
		}
		if got := tt.cfg.IssuerURL(); got != tt.wantIssuer {
			t.Errorf("%s: IssuerURL() = %q, want %q", tt.name, got, tt.wantIssuer)
		}
	}
}

func TestLoopback(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]bool{
		"127.0.0.1:8080":   true,
		"127.1.2.3:8080":   true,
		"[::1]:8080":       true,
		"localhost:8080":   true,
		"LOCALHOST:8080":   true,
		"0.0.0.0:8080":     false,
		":8080":            false,
		"[::]:8080":        false,
		"10.0.0.1:8080":    false,
		"example.com:8080": false,
		"127.0.0.1":        false, // not host:port
	} {
		c := Config{Addr: addr}
		if got := c.Loopback(); got != want {
			t.Errorf("Config{Addr: %q}.Loopback() = %v, want %v", addr, got, want)
		}
	}
}

func TestSlogLevel(t *testing.T) {
	t.Parallel()
	for level, want := range map[string]slog.Level{
		"debug": slog.LevelDebug, "info": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError, "": slog.LevelInfo,
	} {
		if got := (Log{Level: level}).SlogLevel(); got != want {
			t.Errorf("Log{Level: %q}.SlogLevel() = %v, want %v", level, got, want)
		}
	}
}

func TestDefaultDataDir(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/xdg/state")
	if got := Defaults().DataDir; got != filepath.Join("/xdg/state", "kadu") {
		t.Errorf("with XDG_STATE_HOME: data_dir = %q", got)
	}
	t.Setenv("XDG_STATE_HOME", "relative/ignored")
	t.Setenv("HOME", "/home/someone")
	if got := Defaults().DataDir; got != filepath.Join("/home/someone", ".local", "state", "kadu") {
		t.Errorf("with HOME: data_dir = %q", got)
	}
}

// Defaults returns a fresh value each time: mutating one must not leak.
func TestDefaultsAreIndependent(t *testing.T) {
	t.Parallel()
	a := Defaults()
	a.Auth.Algorithms[0] = "EdDSA"
	a.Plans["gold"] = Plan{}
	delete(a.Plans, "team")
	if b := Defaults(); b.Auth.Algorithms[0] != "RS256" || len(b.Plans) != 2 || b.Plans["team"].Webhooks != 20 {
		t.Fatalf("Defaults() shares its slices or maps")
	}
}

func TestDecode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		typ     reflect.Type
		in      any
		want    any
		wantErr string // substring; "" = success
	}{
		{"string", reflect.TypeFor[string](), "x", "x", ""},
		{"string from YAML number", reflect.TypeFor[string](), 123, "123", ""},
		{"string from mapping", reflect.TypeFor[string](), map[string]any{"a": 1}, nil, "want a string, got a mapping"},
		{"bool", reflect.TypeFor[bool](), true, true, ""},
		{"bool from string", reflect.TypeFor[bool](), " false ", false, ""},
		{"bool from 1", reflect.TypeFor[bool](), "1", true, ""},
		{"bool from yes", reflect.TypeFor[bool](), "yes", nil, `"yes" is not a boolean`},
		{"bool from number", reflect.TypeFor[bool](), 2, nil, "2 is not a boolean"},
		{"duration", reflect.TypeFor[time.Duration](), "1h30m", 90 * time.Minute, ""},
		{"duration typed", reflect.TypeFor[time.Duration](), time.Second, time.Second, ""},
		{"duration without unit", reflect.TypeFor[time.Duration](), "30", nil, "not a duration"},
		{"duration from number", reflect.TypeFor[time.Duration](), 30, nil, "30 is not a duration"},
		{"int", reflect.TypeFor[int](), 42, 42, ""},
		{"int from string", reflect.TypeFor[int](), "42", 42, ""},
		{"int from float", reflect.TypeFor[int](), 42.0, 42, ""},
		{"int from fraction", reflect.TypeFor[int](), 4.2, nil, "not a whole number"},
		{"int32 overflow", reflect.TypeFor[int32](), 1 << 40, nil, "not a whole number"},
		{"list", reflect.TypeFor[[]string](), []any{"a", "b"}, []string{"a", "b"}, ""},
		{"list from csv", reflect.TypeFor[[]string](), "a, b,,c", []string{"a", "b", "c"}, ""},
		{"list from flag", reflect.TypeFor[[]string](), []string{"a"}, []string{"a"}, ""},
		{"list from empty", reflect.TypeFor[[]string](), "", []string{}, ""},
		{"list from mapping", reflect.TypeFor[[]string](), map[string]any{}, nil, "want a list of strings"},
	}
	for _, tt := range tests {
		got, _, msg := decode("k", tt.typ, tt.in)
		if tt.wantErr != "" {
			if !strings.Contains(msg, tt.wantErr) {
				t.Errorf("%s: decode(%#v) message = %q, want %q", tt.name, tt.in, msg, tt.wantErr)
			}
			continue
		}
		if msg != "" {
			t.Errorf("%s: decode(%#v) message = %q", tt.name, tt.in, msg)
			continue
		}
		if !reflect.DeepEqual(got.Interface(), reflect.ValueOf(tt.want).Convert(tt.typ).Interface()) {
			t.Errorf("%s: decode(%#v) = %#v, want %#v", tt.name, tt.in, got.Interface(), tt.want)
		}
	}
}

func TestBuildSchemaRejectsBadFields(t *testing.T) {
	t.Parallel()
	type noTag struct{ A string }
	type badType struct {
		A map[string]string `koanf:"a"`
	}
	type entry struct {
		B int `koanf:"b"`
	}
	type intKeys struct {
		A map[int]entry `koanf:"a"`
	}
	type nested struct {
		A map[string]struct {
			B map[string]entry `koanf:"b"`
		} `koanf:"a"`
	}
	type badEntry struct {
		A map[string]struct {
			B []int `koanf:"b"`
		} `koanf:"a"`
	}
	for _, typ := range []reflect.Type{
		reflect.TypeFor[noTag](), reflect.TypeFor[badType](), reflect.TypeFor[intKeys](),
		reflect.TypeFor[nested](), reflect.TypeFor[badEntry](),
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("buildSchema(%s) did not panic", typ)
				}
			}()
			buildSchema(typ)
		}()
	}
}

func TestSuggest(t *testing.T) {
	t.Parallel()
	for unknown, want := range map[string]string{
		"adress":           "addr",
		"admin_adress":     "admin_addr",
		"auth.isuer":       "auth.issuer",
		"log.lvl":          "log.level",
		"store.dns":        "store.dsn",
		"runner.knd":       "runner.kind",
		"orgs.defaultplan": "orgs.default_plan",
		"plans.team.rpm":   "",
		"plans.gold.hooks": "plans.gold.webhooks",
		"plans.x.retain":   "plans.x.retention",
		"plan.x.webhooks":  "plans.x.webhooks",
		"foo":              "",
		"completely_else":  "",
	} {
		if got := configSchema.suggest(unknown); got != want {
			t.Errorf("suggest(%q) = %q, want %q", unknown, got, want)
		}
	}
}

func TestMCPURLAliases(t *testing.T) {
	tests := []struct {
		name      string
		publicURL string
		issuer    string
		want      []string
	}{
		{name: "dev on 127.0.0.1", publicURL: "http://127.0.0.1:8080", want: []string{"http://localhost:8080/mcp", "http://[::1]:8080/mcp"}},
		{name: "dev on localhost", publicURL: "http://localhost:9000", want: []string{"http://127.0.0.1:9000/mcp", "http://[::1]:9000/mcp"}},
		{name: "dev on [::1]", publicURL: "http://[::1]:8080", want: []string{"http://localhost:8080/mcp", "http://127.0.0.1:8080/mcp"}},
		{name: "external issuer: one URL only", publicURL: "http://127.0.0.1:8080", issuer: "https://id.example.com", want: nil},
		{name: "public host", publicURL: "https://mcp.example.com", want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Defaults()
			c.PublicURL, c.Auth.Issuer = tt.publicURL, tt.issuer
			if got := c.MCPURLAliases(); !slices.Equal(got, tt.want) {
				t.Errorf("MCPURLAliases() = %q, want %q", got, tt.want)
			}
		})
	}
}
