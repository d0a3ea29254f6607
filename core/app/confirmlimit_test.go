package app

import (
	"testing"
	"time"

	"github.com/kobana/kadu/core/config"
	"github.com/kobana/kadu/core/plugin/bundleconf"
)

// TestConfirmRunLimit: the run limit of confirmed calls covers the longest
// bundle call an enabled bundle may make (memory wait, _initialize and
// kadu_handle under its timeout) plus the margin; a disabled bundle does
// not count.
func TestConfirmRunLimit(t *testing.T) {
	tests := []struct {
		name    string
		bundles map[string]config.Bundle
		want    time.Duration
	}{
		{"defaults", nil, 5*time.Second + 2*10*time.Second + 30*time.Second},
		{"a shorter timeout keeps the default", map[string]config.Bundle{"a": {Enabled: true, Limits: bundleconf.Limits{Timeout: 2 * time.Second}}},
			5*time.Second + 2*10*time.Second + 30*time.Second},
		{"the longest enabled bundle counts", map[string]config.Bundle{
			"a": {Enabled: true, Limits: bundleconf.Limits{Timeout: 45 * time.Second}}, "b": {Enabled: true, Limits: bundleconf.Limits{Timeout: 20 * time.Second}}},
			5*time.Second + 2*45*time.Second + 30*time.Second},
		{"a disabled bundle does not", map[string]config.Bundle{"a": {Enabled: false, Limits: bundleconf.Limits{Timeout: 10 * time.Minute}}},
			5*time.Second + 2*10*time.Second + 30*time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := config.Defaults()
			cfg.Plugins.Bundles = tt.bundles
			if got := confirmRunLimit(&cfg); got != tt.want {
				t.Errorf("confirmRunLimit = %s, want %s", got, tt.want)
			}
		})
	}
}
