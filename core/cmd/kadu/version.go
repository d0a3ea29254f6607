package main

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"
)

func newVersionCmd(d deps) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of kadu and of Go it was built with",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprint(cmd.OutOrStdout(), versionLine(d.version))
		},
	}
}

// versionLine is "kadu <version> (<go version>)\n".
func versionLine(v string) string {
	return fmt.Sprintf("kadu %s (%s)\n", v, runtime.Version())
}
