package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kobana/kadu/core/config"
)

// configFlag is a flag that overrides one configuration key.
type configFlag struct {
	name, key, usage string
	def              func(config.Config) string // default shown in --help
}

// sharedConfigFlags are taken by both serve and token: token needs the same
// data directory (signing keys), public URL and MCP path (issuer and
// audience) as the server that will accept its tokens, and takes the
// listener flags too so the same flags can be pasted to both commands.
var sharedConfigFlags = []configFlag{
	{"admin-addr", "admin_addr", "listen address of /healthz, /readyz, /metrics and admin endpoints, host:port",
		func(c config.Config) string { return c.AdminAddr }},
	{"data-dir", "data_dir", "directory for the database, blobs and development signing keys (relative: to the working directory)",
		func(c config.Config) string { return c.DataDir }},
	{"addr", "addr", "listen address of the MCP endpoint and API, host:port",
		func(c config.Config) string { return c.Addr }},
	{"public-url", "public_url", `origin clients use, scheme://host[:port] (default "http://" + addr)`,
		func(config.Config) string { return "" }},
	{"mcp-path", "mcp_path", "path of the MCP endpoint",
		func(c config.Config) string { return c.MCPPath }},
}

// serveConfigFlags are taken by serve only.
var serveConfigFlags = []configFlag{
	{"log-level", "log.level", "log level: debug, info, warn or error",
		func(c config.Config) string { return c.Log.Level }},
}

// addConfigFlags registers flags on cmd and binds each to its configuration
// key, so that config.Load applies the ones the user sets over the file and
// the environment. It panics on a binding mistake (a programming error the
// tests catch).
func addConfigFlags(cmd *cobra.Command, flags ...[]configFlag) {
	defaults := config.Defaults()
	fs := cmd.Flags()
	for _, group := range flags {
		for _, f := range group {
			fs.String(f.name, f.def(defaults), fmt.Sprintf("%s [%s]", f.usage, config.EnvVar(f.key)))
			if err := config.BindFlag(fs, f.name, f.key); err != nil {
				panic(err)
			}
		}
	}
}

// loadConfig loads the configuration for cmd: --config (inherited from the
// root), the environment, and cmd's bound flags.
func loadConfig(cmd *cobra.Command) (*config.Config, error) {
	fs := cmd.Flags()
	path, err := fs.GetString("config")
	if err != nil {
		return nil, err
	}
	return config.Load(path, fs.Changed("config"), fs)
}
