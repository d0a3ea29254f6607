package config

import (
	"github.com/kobana/kadu/core/api/routeclass"
	"github.com/kobana/kadu/core/plugin/bundleconf"
)

// firstPartyBundles are the bundles every configuration has enabled: the
// tool groups of docs/reference/bundles.md#tool-catalogue, built from plugins/<name> by
// `go tool task build:plugins` into bin/plugins and into
// plugins/embedded/wasm, from where `go tool task build` builds them into
// the binary. Their path is empty: the copy in the binary, so that it runs
// from any directory (core/app says what to do when it has none).
//
// The pins are the SHA-256 of reproducible builds (-trimpath
// -buildvcs=false, the Go version of go.mod). After a change to plugins/ or
// sdk/go, `go tool task plugins:pin` rebuilds the bundles and rewrites every
// line marked "pin:<name>", here and in config/kadu.yaml.
func firstPartyBundles() map[string]Bundle {
	return map[string]Bundle{
		"tasks": firstParty("tasks",
			"d99b640af1f26cc2079e97af1773353b49d5e9ed29ba45740c9c9da2f9710c94", // pin:tasks
		),
		"executions": firstParty("executions",
			"b40e4e1fe2af5c045aeb98a45a042b0c38aa6b21e4988097a7c7ce8c8b6dba1b", // pin:executions
		),
		"files": firstParty("files",
			"b1b720218bcaaf4ad804a8020483d031ff942204bc68991470e8ad439f376f57", // pin:files
		),
		"webhooks": firstParty("webhooks",
			"113a2017fe12e9d9ee214bc9aa58ac07149e069963293febcd5307fcc60795f8", // pin:webhooks
		),
	}
}

// firstParty is a first-party bundle with its limits spelled out as
// config/kadu.yaml lists them. Its routes are the rows of the route table
// (core/api/routeclass) that name it; config/kadu.yaml spells them out, and
// TestKaduYAMLGrantsTheRouteTable says what to write there when they drift.
func firstParty(name, sha256 string) Bundle {
	return Bundle{
		Enabled:   true,
		Required:  true,
		Path:      "",
		SHA256:    sha256,
		Routes:    routeclass.Grants(name),
		Isolation: bundleconf.IsolationPerOrg,
		Limits:    bundleconf.Limits{}.WithDefaults(),
		Settings:  []string{},
	}
}

// IsFirstParty reports whether name is one of the first-party bundles,
// whose path may be empty (the copy built into the binary).
func IsFirstParty(name string) bool {
	_, ok := firstPartyBundles()[name]
	return ok
}
