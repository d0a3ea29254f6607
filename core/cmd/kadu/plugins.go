package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/kobana/kadu/core/config"
	"github.com/kobana/kadu/core/plugin"
	"github.com/kobana/kadu/plugins/embedded"
)

func newPluginsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plugins",
		Short: "Check, list and sign WebAssembly bundles",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cmd.Help()
		},
	}
	cmd.AddCommand(newPluginsValidateCmd(), newPluginsListCmd(), newPluginsKeygenCmd(), newPluginsSignCmd())
	return cmd
}

func newPluginsValidateCmd() *cobra.Command {
	var routes []string
	cmd := &cobra.Command{
		Use:   "validate FILE",
		Short: "Check a bundle offline and print the configuration that enables it",
		Long: `Check a bundle offline, exactly as the server does before it publishes one:
it compiles the module, checks the kadu v1 ABI, runs kadu_describe and
validates the manifest (names, JSON Schemas, x-mcp-header rules, annotations,
access, routes). With --route, the manifest's routes must be within them, as
they must be within plugins.bundles.<name>.routes on the server.

On success it prints the bundle's tools and the plugins.bundles entry to
paste into the configuration, sha256 pin included, and warns on stderr
about each declared route that none of the bundle's operations may call
under the route classes of sdk/ABI.md (a destructive route in a bundle
without a destructive tool, a write route in one that only reads, a path
that is no route of the API): every call of it would be refused. A
warning does not fail the command; the server logs the same warning when
it loads the bundle.`,
		Example: `  kadu plugins validate bin/plugins/tasks.wasm
  kadu plugins validate my.wasm --route "GET /api/v1/executions" --route "GET /api/v1/executions/{id}"`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := args[0]
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(data)
			m, err := plugin.Validate(cmd.Context(), path, routes)
			if err != nil {
				return fmt.Errorf("%s is not a valid bundle: %w", path, err)
			}
			printManifest(cmd.OutOrStdout(), path, hex.EncodeToString(sum[:]), m)
			for _, u := range plugin.UnusableRoutes(m) {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: route %q (%s): %s\n", u.Route, u.Class, u.Reason)
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&routes, "route", nil, `a granted route, "METHOD /api/v1/path" with {name} segments (repeatable)`)
	return cmd
}

func printManifest(w io.Writer, path, sha string, m *plugin.Manifest) {
	fmt.Fprintf(w, "%s: valid %s bundle %q version %s\n", path, m.ABI, m.Name, m.Version)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, t := range m.Tools {
		access := ""
		if t.Access != nil {
			access = t.Access.MinRole + "/" + t.Access.Scope
		}
		var hints []string
		if a := t.Annotations; a != nil {
			for _, h := range []struct {
				on   *bool
				name string
			}{{a.ReadOnlyHint, "read-only"}, {a.DestructiveHint, "destructive"}, {a.IdempotentHint, "idempotent"}} {
				if h.on != nil && *h.on {
					hints = append(hints, h.name)
				}
			}
		}
		fmt.Fprintf(tw, "  tool\t%s\t%s\t%s\n", t.Name, access, strings.Join(hints, ","))
	}
	for _, r := range m.Resources {
		fmt.Fprintf(tw, "  resource\t%s\t\t\n", r.URI)
	}
	for _, r := range m.ResourceTemplates {
		fmt.Fprintf(tw, "  template\t%s\t\t\n", r.URITemplate)
	}
	for _, p := range m.Prompts {
		fmt.Fprintf(tw, "  prompt\t%s\t\t\n", p.Name)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nplugins:\n  bundles:\n    %s:\n      enabled: true\n      path: %s\n      sha256: %s\n      routes:\n", m.Name, path, sha)
	for _, r := range m.Routes {
		fmt.Fprintf(w, "        - %s\n", r)
	}
}

func newPluginsListCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the configured bundles and check each one offline",
		Long: `List the bundles of plugins.bundles with their paths and pins, and check each
enabled one offline: that its file matches its sha256 pin, that it
validates against its granted routes, and that its signature (<path>.sig)
would be accepted under plugins.trusted_keys and plugins.require_signature. A running server reports what it has
loaded at GET /admin/plugins on the admin listener.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if len(cfg.Plugins.Bundles) == 0 {
				fmt.Fprintln(w, "no bundles configured (plugins.bundles)")
				return nil
			}
			keys, err := cfg.Plugins.Keyring()
			if err != nil {
				return err
			}
			trust := plugin.Trust{Keys: keys, Require: cfg.Plugins.RequireSignature}
			tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tSTATE\tVERSION\tPATH")
			failed := 0
			for _, name := range slices.Sorted(maps.Keys(cfg.Plugins.Bundles)) {
				b := cfg.Plugins.Bundles[name]
				state, version, path := "disabled", "", b.Path
				var wasm []byte
				if path == "" && config.IsFirstParty(name) {
					path = "(built in)"
					if wasm = embedded.Bundle(name); wasm == nil {
						path = "-"
					}
				}
				if b.Enabled {
					state = "ok"
					if problem := checkBundle(cmd, b.Path, wasm, b.SHA256, b.Routes, &version); problem != "" {
						state, failed = problem, failed+1
					} else if problem := checkSignature(trust, b.Path, name, version); problem != "" {
						state, failed = problem, failed+1
					}
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", name, state, version, path)
			}
			tw.Flush()
			if failed > 0 {
				return fmt.Errorf("%d bundle(s) would not load", failed)
			}
			return nil
		},
	}
	addConfigFlags(cmd, sharedConfigFlags)
	return cmd
}

// checkBundle returns "" when the module (wasm, the copy built into the
// binary, or else the file at path) matches pin and validates, else what
// is wrong.
func checkBundle(cmd *cobra.Command, path string, wasm []byte, pin string, routes []string, version *string) string {
	data := wasm
	if path == "" && wasm == nil {
		return "not built into this binary: set its path, or build kadu with go tool task build"
	}
	if path != "" {
		var err error
		if data, err = os.ReadFile(path); err != nil {
			return "unreadable: " + err.Error()
		}
	}
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); got != pin {
		return "sha256 mismatch: file has " + got
	}
	m, err := plugin.ValidateModule(cmd.Context(), path, data, routes, userWasmCache())
	if err != nil {
		return "invalid: " + err.Error()
	}
	*version = m.Version
	return ""
}

// checkSignature returns "" when the bundle file at path (empty: built
// in, exempt) has a signature the server would accept, else what is wrong.
func checkSignature(trust plugin.Trust, path, name, version string) string {
	if path == "" {
		return ""
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "unreadable: " + err.Error()
	}
	if _, err := plugin.VerifySignature(trust, path, data, name, version); err != nil {
		return "refused: " + err.Error()
	}
	return ""
}
