package main

import (
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/kobana/kadu/core/app"
	"github.com/kobana/kadu/core/config"
)

func newServeCmd(d deps) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the Kadu server",
		Long: `Run the Kadu server: the MCP endpoint, the REST API and, without auth.issuer,
the embedded development sign-in, on --addr; health, metrics and admin on
--admin-addr.

On a fresh machine it needs no configuration: SQLite, output files and the
development signing keys in --data-dir, the built-in playbook runner, the
embedded development authorization server, loopback only.

SIGINT or SIGTERM starts a graceful shutdown (http.shutdown_timeout).`,
		Example: `  kadu serve
  kadu serve --addr 127.0.0.1:9000 --log-level debug
  kadu serve --config config/production.example.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			opts := app.Options{
				Version: d.version,
				// Bundle reloads (SIGHUP, file changes, the admin endpoint)
				// read the same file, environment and flags again.
				ReloadConfig: func() (*config.Config, error) { return loadConfig(cmd) },
			}
			if path, _ := cmd.Flags().GetString("config"); path != "" {
				if _, err := os.Stat(path); err == nil { // the default file may be missing
					opts.ConfigPath = path
				}
			}
			return d.run(ctx, cfg, opts, cmd.OutOrStdout())
		},
	}
	addConfigFlags(cmd, sharedConfigFlags, serveConfigFlags)
	return cmd
}
