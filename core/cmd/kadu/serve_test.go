package main

import (
	"errors"
	"io/fs"
	"slices"
	"strings"
	"testing"
)

func TestServePassesConfigToRun(t *testing.T) {
	t.Parallel()
	path := writeConfig(t, "addr: 127.0.0.1:7001\nlog:\n  level: warn\n  format: text\n")
	f := &fake{}
	_, _, err := execute(t, f, "serve", "--config", path,
		"--addr", "127.0.0.1:7002", "--admin-addr", "127.0.0.1:7003", "--mcp-path", "/v1/mcp",
		"--log-level", "debug", "--data-dir", t.TempDir(), "--public-url", "http://localhost:7002/")
	if err != nil {
		t.Fatal(err)
	}
	if f.runCalls != 1 {
		t.Fatalf("run called %d times, want 1", f.runCalls)
	}
	c := f.runCfg
	checks := []struct{ name, got, want string }{
		{"addr (flag over file)", c.Addr, "127.0.0.1:7002"},
		{"admin_addr", c.AdminAddr, "127.0.0.1:7003"},
		{"log.level (flag over file)", c.Log.Level, "debug"},
		{"log.format (file)", c.Log.Format, "text"},
		{"MCP URL", c.MCPURL(), "http://localhost:7002/v1/mcp"},
		{"version", f.runVer, "v9.9.9-test"},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s = %q, want %q", ch.name, ch.got, ch.want)
		}
	}
	if !f.runCtxOK || f.runCtxErr != nil {
		t.Errorf("run got a nil or cancelled context (%v)", f.runCtxErr)
	}
}

func TestServeRefusesInvalidConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"non-loopback without issuer", []string{"--addr", "0.0.0.0:8080"}, "configure auth.issuer"},
		{"bad addr", []string{"--addr", "8080"}, `addr (flag --addr): "8080" is not host:port`},
		{"bad log level", []string{"--log-level", "loud"}, `log.level (flag --log-level): "loud" is not allowed (want one of debug, info, warn, error)`},
		{"bad mcp path", []string{"--mcp-path", "mcp/"}, "mcp_path (flag --mcp-path):"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := &fake{}
			_, _, err := execute(t, f, append([]string{"serve", "--config", emptyConfig(t)}, tt.args...)...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want %q", err, tt.want)
			}
			if f.runCalls != 0 {
				t.Fatalf("run called with an invalid configuration")
			}
		})
	}
}

func TestServeConfigFile(t *testing.T) {
	t.Parallel()
	f := &fake{}
	missing := t.TempDir() + "/absent.yaml"
	_, _, err := execute(t, f, "serve", "--config", missing)
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Fatalf("explicit missing --config: error = %v, want not-exist naming the file", err)
	}
	_, _, err = execute(t, f, "serve", "--config", writeConfig(t, "adress: 127.0.0.1:8080\n"))
	if err == nil || !strings.Contains(err.Error(), `did you mean "addr"`) {
		t.Fatalf("unknown key: error = %v", err)
	}
	if f.runCalls != 0 {
		t.Fatal("run called")
	}
}

// TestServeNamesTheMatchingTokenCommand: the ready banner's token command
// carries the flags that decide issuer, audience and keys — as given, so
// that pasting it mints a token this server accepts — and not the others.
func TestServeNamesTheMatchingTokenCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir() + "/my data"
	cfgFile := emptyConfig(t)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"defaults", nil, "./bin/kadu token"},
		{"listener flags", []string{"--addr", "127.0.0.1:9000", "--admin-addr", "127.0.0.1:9001", "--log-level", "debug"},
			"./bin/kadu token --addr 127.0.0.1:9000"},
		{"everything that decides the token", []string{"--config", cfgFile, "--data-dir", dir, "--public-url", "http://localhost:9000", "--mcp-path", "/v1/mcp"},
			"./bin/kadu token --config " + cfgFile + " --data-dir '" + dir + "' --public-url http://localhost:9000 --mcp-path /v1/mcp"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := &fake{}
			args := append([]string{"serve"}, tt.args...)
			if !slices.Contains(tt.args, "--config") {
				args = append(args, "--config", cfgFile)
				tt.want = strings.Replace(tt.want, "token", "token --config "+cfgFile, 1)
			}
			if _, _, err := execute(t, f, args...); err != nil {
				t.Fatal(err)
			}
			if f.runOpts.TokenCommand != tt.want {
				t.Errorf("TokenCommand = %q\nwant          %q", f.runOpts.TokenCommand, tt.want)
			}
		})
	}
}
