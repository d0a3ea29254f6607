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
			"dfa40915e054a44307b0f823cbbcef5af574af35295cdd434118bf1e25746c3b", // pin:tasks
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
			"e4a12a617f1fbb90cef537de4ccd9ff1f08074768c97759430fc470917db00a7", // pin:executions
			"GET /api/v1/executions",
			"GET /api/v1/executions/{id}",
			"GET /api/v1/executions/{id}/steps",
			"POST /api/v1/executions/{id}/continue",
			"POST /api/v1/executions/{id}/cancel",
			"DELETE /api/v1/executions/{id}",
			"GET /api/v1/approvals/{id}",
		),
		"files": firstParty("files",
			"80be78a1e6d9d13ae64d8912be87e49fb4acc757734162a55b6040df429af2fe", // pin:files
			"POST /api/v1/files",
			"POST /api/v1/files/{id}/confirm",
			"GET /api/v1/files/{id}",
			"GET /api/v1/files",
			"GET /api/v1/files/{id}/download",
			"DELETE /api/v1/files/{id}",
		),
		"webhooks": firstParty("webhooks",
			"3a955e98f27b2770b792f8413ab1febca695140f9a107109dbd4fff5c7720340", // pin:webhooks
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
