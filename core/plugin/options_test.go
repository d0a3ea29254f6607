package plugin

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestBundleConfigValidate(t *testing.T) {
	good := BundleConfig{Name: "tasks", Path: "tasks.wasm", SHA256: strings.Repeat("ab", 32), Routes: []string{"GET /api/v1/tasks"}}
	tests := []struct {
		name    string
		edit    func(*BundleConfig)
		wantErr string
	}{
		{name: "valid, defaults filled", edit: func(*BundleConfig) {}},
		{name: "uppercase hash is fine", edit: func(b *BundleConfig) { b.SHA256 = strings.ToUpper(b.SHA256) }},
		{name: "name", edit: func(b *BundleConfig) { b.Name = "9tasks" }, wantErr: `name: "9tasks" is not a valid bundle name`},
		{name: "no path", edit: func(b *BundleConfig) { b.Path = "" }, wantErr: "plugins.bundles.tasks.path: required"},
		{name: "short hash", edit: func(b *BundleConfig) { b.SHA256 = "abc" }, wantErr: "plugins.bundles.tasks.sha256: must be the file's SHA-256 as 64 hex digits"},
		{name: "hash not hex", edit: func(b *BundleConfig) { b.SHA256 = strings.Repeat("zz", 32) }, wantErr: "plugins.bundles.tasks.sha256: must be"},
		{name: "bad grant", edit: func(b *BundleConfig) { b.Routes = []string{"GET tasks"} }, wantErr: "plugins.bundles.tasks.routes[0]"},
		{name: "isolation", edit: func(b *BundleConfig) { b.Isolation = "per_user" }, wantErr: `plugins.bundles.tasks.isolation: "per_user" is not allowed (want one of per_org, per_call)`},
		{name: "memory over wazero's ceiling", edit: func(b *BundleConfig) { b.Limits.MemoryMiB = 5000 }, wantErr: "plugins.bundles.tasks.memory_mib: 5000 is more than a WebAssembly instance can address (4096)"},
		{name: "negative timeout", edit: func(b *BundleConfig) { b.Limits.Timeout = -time.Second }, wantErr: "plugins.bundles.tasks.timeout: -1s is negative"},
		// Every hint names a key an operator can write (there is no
		// api_calls_per_invocation).
		{name: "negative api calls", edit: func(b *BundleConfig) { b.Limits.APICalls = -1 }, wantErr: "plugins.bundles.tasks.api_calls: -1 is negative"},
		{name: "output over the cap", edit: func(b *BundleConfig) { b.Limits.MaxOutputBytes = 65 << 20 }, wantErr: "plugins.bundles.tasks.max_output_bytes: 68157440 is more than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := good
			tt.edit(&b)
			b = b.withDefaults()
			err := b.validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("validate() = %v", err)
				}
				if b.Isolation != IsolationPerOrg || b.Limits.MemoryMiB != 64 || b.Limits.Timeout != 10*time.Second ||
					b.Limits.MaxOutputBytes != 1<<20 || b.Limits.PoolSize != 4 || b.Limits.APICalls != 16 ||
					b.Limits.IdleTTL != 5*time.Minute {
					t.Fatalf("defaults not applied: %+v", b)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("validate() = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestNewRefusesBadOptions(t *testing.T) {
	tests := []struct {
		name    string
		opts    *Options
		wantErr string
	}{
		{name: "nil", opts: nil, wantErr: "required"},
		{name: "no dispatcher", opts: &Options{}, wantErr: "Dispatcher is required"},
		{name: "negative memory budget", opts: &Options{Dispatcher: &fakeAPI{}, MemoryBudget: -1}, wantErr: "MemoryBudget -1"},
		{name: "org share over 100", opts: &Options{Dispatcher: &fakeAPI{}, OrgSharePercent: 101}, wantErr: "OrgSharePercent 101, want 1 to 100"},
		{name: "short seal key", opts: &Options{Dispatcher: &fakeAPI{}, SealKey: []byte("short")}, wantErr: "SealKey is 5 bytes, want 32"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := New(context.Background(), tt.opts)
			if err == nil {
				r.Close(context.Background())
				t.Fatal("New() succeeded")
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("New() = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}
