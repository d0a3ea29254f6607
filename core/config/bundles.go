package config

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
			"1a0e7d5f0d1f38eedd60155dee93f76e48a3e03ed192dfe476ba2d51edb9a1b2", // pin:tasks
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
			"c7c5d531932cd92d9482b94808196607b821508a8e30431693d8373492c31b3a", // pin:executions
			"GET /api/v1/executions",
			"GET /api/v1/executions/{id}",
			"GET /api/v1/executions/{id}/steps",
			"POST /api/v1/executions/{id}/continue",
			"POST /api/v1/executions/{id}/cancel",
			"DELETE /api/v1/executions/{id}",
			"GET /api/v1/approvals/{id}",
		),
		"files": firstParty("files",
			"ec549f87eb6695ad370406f82b97d18657e18a69d9403d227516890dec58add1", // pin:files
			"POST /api/v1/files",
			"POST /api/v1/files/{id}/confirm",
			"GET /api/v1/files/{id}",
			"GET /api/v1/files",
			"GET /api/v1/files/{id}/download",
			"DELETE /api/v1/files/{id}",
		),
		"webhooks": firstParty("webhooks",
			"65625827b8a4fa2bcb5c144212a8963a24e5caa59d5fa9b213dc5615f30e4a84", // pin:webhooks
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
