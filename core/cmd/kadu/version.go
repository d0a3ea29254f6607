package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/kobana/kadu/core/plugin"
	"github.com/kobana/kadu/plugins/embedded"
)

func newVersionCmd(d deps) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of kadu, of Go it was built with, and of the bundles built in",
		Long: `Print the version of kadu and of Go it was built with, then each first-party
bundle built into the binary (by go tool task build): its name, the version
its manifest declares and the sha256 that plugins.bundles.<name>.sha256 pins.
A binary built without them (plain go build) says so; it then needs a path
for each first-party bundle. kadu --version prints the first line only.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			w := cmd.OutOrStdout()
			fmt.Fprint(w, versionLine(d.version))
			if d.bundles == nil {
				return nil
			}
			bundles, err := d.bundles(cmd.Context())
			if err != nil {
				return err
			}
			printBundles(w, bundles)
			return nil
		},
	}
}

// versionLine is "kadu <version> (<go version>)\n".
func versionLine(v string) string {
	return fmt.Sprintf("kadu %s (%s)\n", v, runtime.Version())
}

// bundleInfo is one bundle built into the binary.
type bundleInfo struct {
	Name, Version, SHA256 string
}

func printBundles(w io.Writer, bundles []bundleInfo) {
	if len(bundles) == 0 {
		fmt.Fprintln(w, "bundles built in: none (built without `go tool task build`: each first-party bundle needs plugins.bundles.<name>.path)")
		return
	}
	fmt.Fprintln(w, "bundles built in:")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, b := range bundles {
		fmt.Fprintf(tw, "  %s\t%s\tsha256:%s\n", b.Name, b.Version, b.SHA256)
	}
	tw.Flush()
}

// embeddedBundles describes the bundles of plugins/embedded. The version
// comes from each manifest, which only running the module gives: they are
// compiled in parallel, into a cache under the user's cache directory so
// that later runs take a moment (the first one takes seconds).
func embeddedBundles(ctx context.Context) ([]bundleInfo, error) {
	mods, err := embedded.Modules()
	if err != nil {
		return nil, fmt.Errorf("reading the bundles built in: %w", err)
	}
	cache := userWasmCache()
	out := make([]bundleInfo, len(mods))
	var wg sync.WaitGroup
	for i, m := range mods {
		out[i] = bundleInfo{Name: m.Name, SHA256: m.SHA256}
		wg.Add(1)
		go func() {
			defer wg.Done()
			man, err := plugin.ValidateModule(ctx, "embedded:"+m.Name+".wasm", m.Wasm, nil, cache)
			if err != nil {
				out[i].Version = "invalid: " + err.Error()
				return
			}
			out[i].Version = man.Version
		}()
	}
	wg.Wait()
	return out, nil
}

// userWasmCache is where the commands that compile bundles outside a
// server (kadu version, kadu plugins list) keep them compiled: under the
// user's cache directory, or "" (no cache) when there is none.
func userWasmCache() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "kadu", "wasm-cache")
}
