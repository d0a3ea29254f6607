package app

import (
	"strings"
	"testing"

	"github.com/kobana/kadu/core/config"
	"github.com/kobana/kadu/plugins/embedded"
)

// TestFirstPartyBundleWithoutPath: a first-party bundle with no path is the
// copy built into the binary; a binary built without it (plain go build,
// go test before `go tool task build`) refuses with the key to set and the
// build to run, instead of a file error about some directory.
func TestFirstPartyBundleWithoutPath(t *testing.T) {
	cfg := config.Defaults()
	for name, b := range cfg.Plugins.Bundles {
		b.Enabled = name == "tasks"
		cfg.Plugins.Bundles[name] = b
	}
	bundles, err := bundleConfigs(&cfg)
	if embedded.Bundle("tasks") == nil {
		if err == nil || !strings.Contains(err.Error(), "plugins.bundles.tasks.path") || !strings.Contains(err.Error(), "go tool task build") {
			t.Fatalf("no tasks bundle built in: bundleConfigs error = %v; want one naming plugins.bundles.tasks.path and go tool task build", err)
		}
		return
	}
	if err != nil || len(bundles) != 1 || bundles[0].Wasm == nil || bundles[0].Path != "embedded:tasks.wasm" {
		t.Fatalf("tasks bundle built in: bundleConfigs = %d bundles, %v; want one, the embedded module at embedded:tasks.wasm", len(bundles), err)
	}
}
