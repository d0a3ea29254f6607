// Command kadu is the Kadu MCP server: Kobana's financial agent exposed to AI
// clients over MCP (Streamable HTTP), with its REST API at /api/v1.
//
//	kadu serve     run the server (embedded defaults: SQLite, dev sign-in, loopback only)
//	kadu token     print an access token from the embedded development issuer
//	kadu migrate   create or upgrade the database tables, then exit
//	kadu audit     verify the audit trail's hash chains, export a chain as JSON Lines
//	kadu version   print the version and the bundles built in
//
// Configuration comes from defaults ← YAML file (--config) ← KADU_*
// environment variables ← flags; see package core/config.
package main

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"

	"github.com/kobana/kadu/core/app"
)

// version is set at build time: go build -ldflags "-X main.version=v1.2.3".
var version = "dev"

func main() {
	privateUmask()
	root := newRootCmd(deps{
		version: buildVersion(),
		self:    os.Args[0],
		run:     app.Run,
		mint:    app.MintDevToken,
		migrate: app.Migrate,
		bundles: embeddedBundles,
	})
	if err := root.ExecuteContext(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "kadu:", err)
		os.Exit(1)
	}
}

// buildVersion is the -X main.version value, else the module version `go
// install …@vX` recorded, else "dev".
func buildVersion() string {
	if version != "dev" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return version
}
