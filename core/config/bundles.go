package config

// firstPartyBundles are the bundles every configuration has enabled: the
// tool groups of SPEC §7.4, built from plugins/<name> by
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
			"7d5db26410b5bde663726624e187a0cf565a9e0fd631ac16da50ad78f0936dce", // pin:tasks
			"GET /api/v1/tasks",
			"GET /api/v1/tasks/{id}",
			"POST /api/v1/tasks",
			"PATCH /api/v1/tasks/{id}",
			"DELETE /api/v1/tasks/{id}",
			"PUT /api/v1/tasks/{id}/launch_policy",
			"PUT /api/v1/tasks/{id}/destinations",
			"POST /api/v1/tasks/{id}/run",
			"GET /api/v1/usage",
			"GET /api/v1/playbooks",
		),
		"executions": firstParty("executions",
			"b40e4e1fe2af5c045aeb98a45a042b0c38aa6b21e4988097a7c7ce8c8b6dba1b", // pin:executions
			"GET /api/v1/executions",
			"GET /api/v1/executions/{id}",
			"GET /api/v1/executions/{id}/steps",
			"POST /api/v1/executions/{id}/continue",
			"POST /api/v1/executions/{id}/cancel",
			"DELETE /api/v1/executions/{id}",
			"GET /api/v1/approvals/{id}",
		),
		"files": firstParty("files",
			"ffe5e1415b682f7415ad9afe7e165c93bed3486a7d39723b67b360227a0c6a33", // pin:files
			"POST /api/v1/files",
			"POST /api/v1/files/{id}/confirm",
			"GET /api/v1/files/{id}",
			"GET /api/v1/files",
			"GET /api/v1/files/{id}/download",
			"DELETE /api/v1/files/{id}",
		),
		"webhooks": firstParty("webhooks",
			"113a2017fe12e9d9ee214bc9aa58ac07149e069963293febcd5307fcc60795f8", // pin:webhooks
			"GET /api/v1/webhooks",
			"GET /api/v1/webhooks/{id}",
			"POST /api/v1/webhooks",
			"PATCH /api/v1/webhooks/{id}",
			"DELETE /api/v1/webhooks/{id}",
			"POST /api/v1/webhooks/{id}/rotate_secret",
			"GET /api/v1/webhook_deliveries",
			"GET /api/v1/webhook_deliveries/{id}",
			"POST /api/v1/webhook_deliveries/{id}/replay",
		),
	}
}

// firstParty is a first-party bundle with its limits spelled out as
// config/kadu.yaml lists them.
func firstParty(name, sha256 string, routes ...string) Bundle {
	return Bundle{
		Enabled:        true,
		Required:       true,
		Path:           "",
		SHA256:         sha256,
		Routes:         routes,
		Isolation:      IsolationPerOrg,
		MemoryMiB:      DefaultBundleMemoryMiB,
		Timeout:        DefaultBundleTimeout,
		MaxOutputBytes: DefaultBundleMaxOutputBytes,
		PoolSize:       DefaultBundlePoolSize,
		APICalls:       DefaultBundleAPICalls,
		Settings:       []string{},
	}
}

// IsFirstParty reports whether name is one of the first-party bundles,
// whose path may be empty (the copy built into the binary).
func IsFirstParty(name string) bool {
	_, ok := firstPartyBundles()[name]
	return ok
}
