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
			"368d4665bd69cce1735e76d3264c2113f19c47106357bc0f0664f0d07c21d8cb", // pin:tasks
		),
		"executions": firstParty("executions",
			"b3ef0d1d5f05ce89f5663e5e164edaf2c9d6ab49d830276c93e1fcee01f9dc2d", // pin:executions
		),
		"files": firstParty("files",
			"5d08939fc2ca159f46d720625ca92f618905e6ece0d681831e7d78641e5efc16", // pin:files
		),
		"webhooks": firstParty("webhooks",
			"bc1e3ac5c9f7d6ff7d75712f70757480dea1b8c12f1026ce2c268420fe003c9e", // pin:webhooks
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
