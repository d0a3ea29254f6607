package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/kobana/kadu/core/app"
	"github.com/kobana/kadu/core/config"
)

// deps are what the commands call outside this package; tests replace run
// and mint so that no server starts.
type deps struct {
	version string
	self    string // the program as invoked (os.Args[0]), for commands the server suggests
	run     func(ctx context.Context, cfg *config.Config, opts app.Options, stdout io.Writer) error
	mint    func(cfg *config.Config, opts app.TokenOptions) (string, error)
	migrate func(ctx context.Context, cfg *config.Config, log *slog.Logger) error
	bundles func(ctx context.Context) ([]bundleInfo, error) // built into the binary (version.go)
}

// newRootCmd builds the kadu command tree. Errors are returned from Execute,
// not printed: main prints them once.
func newRootCmd(d deps) *cobra.Command {
	root := &cobra.Command{
		Use:   "kadu",
		Short: "Kadu MCP server: Kobana's financial agent for AI clients",
		Long: `Kadu exposes Kobana's financial agent to AI clients (Claude, ChatGPT, VS Code,
Cursor, MCP Inspector, …) as an MCP server over Streamable HTTP, with its REST
API at /api/v1.

Configuration, each source overriding the previous one:
  built-in defaults < YAML file (--config) < KADU_* environment < flags
Environment: KADU_ + the key upper-cased, "__" between nesting levels, e.g.
  KADU_ADDR, KADU_PUBLIC_URL, KADU_AUTH__ISSUER, KADU_AUTH__REQUIRE_AT_JWT=false,
  KADU_AUTH__ALGORITHMS=RS256,ES256 (lists are comma-separated).
See config/kadu.yaml for every key and its default.`,
		Version:       d.version,
		SilenceUsage:  true,
		SilenceErrors: true,
		CompletionOptions: cobra.CompletionOptions{
			HiddenDefaultCmd: true,
		},
	}
	root.SetVersionTemplate(versionLine("{{.Version}}"))
	root.PersistentFlags().String("config", config.DefaultPath,
		"YAML configuration file (the default path may be missing; a path given here must exist)")
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return fmt.Errorf("%w\nRun '%s --help' for usage.", err, cmd.CommandPath())
	})

	root.AddCommand(newServeCmd(d), newTokenCmd(d), newMigrateCmd(d), newPluginsCmd(), newAuditCmd(), newVersionCmd(d))
	return root
}
