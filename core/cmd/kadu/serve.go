package main

import (
	"context"
	"os"
	"os/signal"
	"strings"
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
the embedded development sign-in, on --addr; /healthz, /readyz, Prometheus
metrics (GET /metrics, see docs/metrics.md) and /admin/plugins on --admin-addr.

On a fresh machine it needs no configuration: SQLite, output files and the
development signing keys in --data-dir, the built-in playbook runner, the
embedded development authorization server, loopback only, and the
first-party bundles built into the binary by go tool task build (see kadu
version), so it runs from any directory. Relative paths in the --config
file resolve against that file's directory; relative paths in flags and
KADU_* variables, against the working directory.

On --admin-addr, /healthz answers 200 while the process is alive; /readyz
answers 200 or 503 with JSON naming each check (store, migrations, bundles,
issuer_keys, draining) and, for a failing one, why. OpenTelemetry traces go
over OTLP/HTTP when tracing.endpoint or OTEL_EXPORTER_OTLP_ENDPOINT is set
(docs/tracing.md); off otherwise.

SIGTERM (what orchestrators send) first drains for http.drain_delay: the
listener keeps accepting, every request gets 503 with Retry-After and /readyz
fails, so a load balancer moves traffic away without a refused connection.
Then, as at once on SIGINT (Ctrl-C) or on a second signal, the listener
closes, in-flight requests finish within http.shutdown_timeout and running
executions go back to the queue.`,
		Example: `  kadu serve
  kadu serve --addr 127.0.0.1:9000 --log-level debug
  kadu serve --config config/production.example.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			ctx, skipDrain, stop := stopOnSignals(cmd.Context())
			defer stop()
			opts := app.Options{
				SkipDrain:    skipDrain,
				Version:      d.version,
				TokenCommand: tokenCommand(d.self, cmd),
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

// tokenCommand is the `kadu token` command line whose tokens this serve
// accepts, for the ready banner: the same program and the configuration
// flags that decide the issuer, audience and signing keys (--config,
// --data-dir, --addr, --public-url, --mcp-path), as the user set them.
// KADU_* variables stay in the environment the two commands share.
func tokenCommand(self string, cmd *cobra.Command) string {
	if self == "" || !strings.ContainsRune(self, '/') {
		self = "kadu" // found on PATH, or unknown
	}
	parts := []string{shellWord(self), "token"}
	fs := cmd.Flags()
	if fs.Changed("config") {
		v, _ := fs.GetString("config")
		parts = append(parts, "--config", shellWord(v))
	}
	for _, f := range sharedConfigFlags {
		if f.name != "admin-addr" && fs.Changed(f.name) {
			v, _ := fs.GetString(f.name)
			parts = append(parts, "--"+f.name, shellWord(v))
		}
	}
	return strings.Join(parts, " ")
}

// shellWord quotes s for a POSIX shell when it holds anything but plain
// path and address characters.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:@%+=,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// stopOnSignals returns a context cancelled by the first SIGINT or SIGTERM —
// with cause app.ErrTerminated for SIGTERM, which asks for the drain delay —
// and a channel closed by the next signal, which cuts the delay short. Call
// stop when the server has returned.
func stopOnSignals(parent context.Context) (ctx context.Context, skipDrain <-chan struct{}, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	skip, done := make(chan struct{}), make(chan struct{})
	go func() {
		select {
		case s := <-sigs:
			if s == syscall.SIGTERM {
				cancel(app.ErrTerminated)
			} else {
				cancel(context.Canceled)
			}
		case <-done:
			return
		}
		select {
		case <-sigs:
			close(skip)
		case <-done:
		}
	}()
	return ctx, skip, func() {
		signal.Stop(sigs)
		close(done)
		cancel(nil)
	}
}
