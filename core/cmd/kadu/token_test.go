package main

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestTokenPrintsOnlyTheToken(t *testing.T) {
	t.Parallel()
	f := &fake{}
	stdout, stderr, err := execute(t, f, "token", "--config", emptyConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	if stdout != "header.payload.signature\n" {
		t.Fatalf("stdout = %q, want the token and a newline only", stdout)
	}
	if !strings.Contains(stderr, "http://127.0.0.1:8080/mcp") {
		t.Errorf("stderr = %q, want a hint naming the audience", stderr)
	}
	o := f.mintOpts
	if o.OrgID != "org_dev" || o.Role != "owner" || o.Subject != "dev-user" || o.ClientID != "kadu-cli" || o.TTL != time.Hour ||
		!slices.Equal(o.Scopes, []string{"kadu.read", "kadu.write", "kadu.run", "kadu.admin"}) {
		t.Errorf("default options = %+v", o)
	}
}

func TestTokenDefaultsComeFromConfig(t *testing.T) {
	t.Parallel()
	path := writeConfig(t, "data_dir: "+t.TempDir()+"\nauth:\n  dev:\n    default_org: org_acme\n    default_role: viewer\n    default_subject: ana\n")
	f := &fake{}
	if _, _, err := execute(t, f, "token", "--config", path); err != nil {
		t.Fatal(err)
	}
	if o := f.mintOpts; o.OrgID != "org_acme" || o.Role != "viewer" || o.Subject != "ana" {
		t.Errorf("options = %+v, want the auth.dev defaults", o)
	}
}

func TestTokenFlags(t *testing.T) {
	t.Parallel()
	f := &fake{}
	_, _, err := execute(t, f, "token", "--config", emptyConfig(t),
		"--org", "org_x", "--role", "member", "--scope", "kadu.read kadu.run kadu.read", "--sub", "bob",
		"--ttl", "10m", "--client-id", "ci", "--addr", "127.0.0.1:7100", "--mcp-path", "/m")
	if err != nil {
		t.Fatal(err)
	}
	o := f.mintOpts
	if o.OrgID != "org_x" || o.Role != "member" || o.Subject != "bob" || o.ClientID != "ci" || o.TTL != 10*time.Minute ||
		!slices.Equal(o.Scopes, []string{"kadu.read", "kadu.run"}) {
		t.Errorf("options = %+v", o)
	}
	if got := f.mintCfg.MCPURL(); got != "http://127.0.0.1:7100/m" {
		t.Errorf("config MCP URL = %q, want the flags' address and path", got)
	}
}

func TestTokenRefusesWithIssuer(t *testing.T) {
	t.Parallel()
	path := writeConfig(t, "data_dir: "+t.TempDir()+"\npublic_url: https://mcp.example.com\nauth:\n  issuer: https://id.example.com\n")
	f := &fake{}
	stdout, _, err := execute(t, f, "token", "--config", path)
	if err == nil || !strings.Contains(err.Error(), "kadu token only mints tokens for the embedded development issuer") ||
		!strings.Contains(err.Error(), "https://id.example.com") {
		t.Fatalf("error = %v, want a refusal naming the issuer", err)
	}
	if stdout != "" || f.mintCalls != 0 {
		t.Fatalf("stdout %q, mint called %d times", stdout, f.mintCalls)
	}
}

func TestTokenValidation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		args   []string
		config string // extra YAML
		want   []string
	}{
		{name: "unknown role", args: []string{"--role", "boss"}, want: []string{`--role "boss" is not a role (want one of viewer, member, admin, owner)`}},
		{name: "zero ttl", args: []string{"--ttl", "0s"}, want: []string{"--ttl 0s must be positive"}},
		{name: "negative ttl", args: []string{"--ttl", "-5m"}, want: []string{"--ttl -5m0s must be positive"}},
		{name: "ttl above 24h", args: []string{"--ttl", "25h"}, want: []string{"--ttl 25h0m0s is longer than the limit 24h0m0s"}},
		{name: "ttl above max_token_lifetime", args: []string{"--ttl", "2h"}, config: "auth:\n  max_token_lifetime: 1h\n",
			want: []string{"--ttl 2h0m0s is longer than the limit 1h0m0s", "auth.max_token_lifetime"}},
		{name: "unknown scope", args: []string{"--scope", "kadu.read openid"}, want: []string{`--scope "openid" is not a Kadu scope`}},
		{name: "no scope", args: []string{"--scope", " "}, want: []string{"--scope must name at least one scope"}},
		{name: "empty org", args: []string{"--org", ""}, want: []string{"--org must not be empty"}},
		{name: "org with dots", args: []string{"--org", "a..b"}, want: []string{`--org "a..b" is not an organisation id: want 1 to 64 ASCII letters, digits`}},
		{name: "org with slash", args: []string{"--org", "acme/../x"}, want: []string{`--org "acme/../x" is not an organisation id`}},
		{name: "org too long", args: []string{"--org", strings.Repeat("o", 65)}, want: []string{"is not an organisation id"}},
		{name: "default org from config", config: "auth:\n  dev:\n    default_org: a..b\n", want: []string{"auth.dev.default_org", `"a..b" is not an organisation id`}},
		{name: "empty sub", args: []string{"--sub", ""}, want: []string{"--sub must not be empty"}},
		{name: "empty client id", args: []string{"--client-id", ""}, want: []string{"--client-id must not be empty"}},
		{name: "every problem at once", args: []string{"--role", "x", "--ttl", "0s", "--scope", ""},
			want: []string{"--role", "--ttl", "--scope"}},
		{name: "invalid configuration", args: []string{"--addr", "0.0.0.0:8080"}, want: []string{"addr (flag --addr):", "configure auth.issuer"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := writeConfig(t, "data_dir: "+t.TempDir()+"\n"+tt.config)
			f := &fake{}
			stdout, _, err := execute(t, f, append([]string{"token", "--config", path}, tt.args...)...)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error = %q\nwant it to contain %q", err, w)
				}
			}
			if stdout != "" || f.mintCalls != 0 {
				t.Errorf("stdout %q, mint called %d times", stdout, f.mintCalls)
			}
		})
	}
}
