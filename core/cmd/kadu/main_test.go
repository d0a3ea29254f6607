package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/kobana/kadu/core/app"
	"github.com/kobana/kadu/core/config"
)

// fake records what the commands hand to core/app; nothing starts.
type fake struct {
	runCalls  int
	runCfg    *config.Config
	runVer    string
	runOpts   app.Options
	runCtxErr error // ctx.Err() when run was called
	runCtxOK  bool
	mintCalls int
	mintCfg   *config.Config
	mintOpts  app.TokenOptions

	migrateCalls int
	builtIn      []bundleInfo // what kadu version lists as built in
}

func (f *fake) deps() deps {
	return deps{
		version: "v9.9.9-test",
		self:    "./bin/kadu",
		run: func(ctx context.Context, cfg *config.Config, opts app.Options, stdout io.Writer) error {
			f.runCalls++
			f.runCtxOK, f.runCtxErr = ctx != nil, ctx.Err()
			f.runCfg, f.runVer, f.runOpts = cfg, opts.Version, opts
			return nil
		},
		mint: func(cfg *config.Config, opts app.TokenOptions) (string, error) {
			f.mintCalls++
			f.mintCfg, f.mintOpts = cfg, opts
			return "header.payload.signature", nil
		},
		migrate: func(ctx context.Context, cfg *config.Config, log *slog.Logger) error {
			f.migrateCalls++
			return nil
		},
		bundles: func(context.Context) ([]bundleInfo, error) { return f.builtIn, nil },
	}
}

// execute runs kadu with args and returns stdout, stderr and the error.
func execute(t *testing.T, f *fake, args ...string) (string, string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	root := newRootCmd(f.deps())
	root.SetOut(&stdout)
	root.SetErr(&stderr)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	return stdout.String(), stderr.String(), err
}

// writeConfig writes a YAML file for --config in a temporary directory.
func writeConfig(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kadu.yaml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// emptyConfig is a --config file that keeps every default, with a data
// directory under the test's temporary directory.
// noBundles disables the first-party bundles, whose files the tests of the
// commands do not build.
const noBundles = `plugins:
  bundles:
    tasks: {enabled: false}
    executions: {enabled: false}
    files: {enabled: false}
    webhooks: {enabled: false}
`

func emptyConfig(t *testing.T) string {
	t.Helper()
	return writeConfig(t, "data_dir: "+t.TempDir()+"\n"+noBundles)
}

func TestHelp(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"--help"}, []string{"serve", "token", "version", "--config", "KADU_AUTH__ISSUER"}},
		{[]string{}, []string{"Usage:", "serve"}},
		{[]string{"help", "serve"}, []string{"kadu serve"}},
		{[]string{"serve", "--help"}, []string{
			"--config", "--data-dir", "--addr", "--public-url", "--admin-addr", "--mcp-path", "--log-level",
			"[KADU_ADDR]", "[KADU_LOG__LEVEL]", `(default "127.0.0.1:8080")`, `(default "127.0.0.1:9090")`,
		}},
		{[]string{"token", "--help"}, []string{
			"--config", "--data-dir", "--addr", "--public-url",
			"--org", "--role", "--scope", "--sub", "--ttl", "--client-id",
			`(default "kadu.read kadu.write kadu.run kadu.admin")`, "(default 1h0m0s)", `(default "kadu-cli")`,
		}},
		{[]string{"version", "--help"}, []string{"kadu version"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			f := &fake{}
			out, _, err := execute(t, f, tt.args...)
			if err != nil {
				t.Fatalf("kadu %v: %v", tt.args, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("kadu %v output lacks %q:\n%s", tt.args, w, out)
				}
			}
			if f.runCalls+f.mintCalls != 0 {
				t.Errorf("help called core/app")
			}
		})
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	line := "kadu v9.9.9-test (" + runtime.Version() + ")\n"
	sum := strings.Repeat("ab", 32)
	tests := []struct {
		args    []string
		builtIn []bundleInfo
		want    string
	}{
		{[]string{"--version"}, []bundleInfo{{"tasks", "1.0.0", sum}}, line},
		{[]string{"version"}, []bundleInfo{{"executions", "1.2.0", sum}, {"tasks", "1.0.0", sum}},
			line + "bundles built in:\n  executions  1.2.0  sha256:" + sum + "\n  tasks       1.0.0  sha256:" + sum + "\n"},
		{[]string{"version"}, nil, line + "bundles built in: none (built without `go tool task build`: " +
			"each first-party bundle needs plugins.bundles.<name>.path)\n"},
	}
	for _, tt := range tests {
		out, _, err := execute(t, &fake{builtIn: tt.builtIn}, tt.args...)
		if err != nil || out != tt.want {
			t.Errorf("kadu %v = %q, %v; want %q", tt.args, out, err, tt.want)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"nope"}, `unknown command "nope"`},
		{[]string{"serve", "--bogus"}, "unknown flag: --bogus\nRun 'kadu serve --help' for usage."},
		{[]string{"serve", "extra"}, `unknown command "extra"`},
		{[]string{"token", "extra"}, `unknown command "extra"`},
		{[]string{"token", "--ttl", "soon"}, `invalid argument "soon" for "--ttl"`},
		{[]string{"version", "extra"}, `unknown command "extra"`},
	}
	for _, tt := range tests {
		f := &fake{}
		out, _, err := execute(t, f, tt.args...)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("kadu %v: error = %v, want %q", tt.args, err, tt.want)
		}
		if out != "" || f.runCalls+f.mintCalls != 0 {
			t.Errorf("kadu %v: stdout %q, core/app called %d times", tt.args, out, f.runCalls+f.mintCalls)
		}
	}
}
