package config

import (
	"encoding/hex"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Plugins configures the WASM bundles that provide tools, resources and
// prompts (SPEC §12).
type Plugins struct {
	// CacheDir keeps compiled bundles between restarts. Default empty:
	// <data_dir>/wasm-cache.
	CacheDir string `koanf:"cache_dir"`

	// Watch reloads bundles when the configuration file or a bundle file
	// changes. SIGHUP and POST /admin/plugins/reload always reload. Default
	// true.
	Watch bool `koanf:"watch"`

	// Bundles are the enabled bundles, by name: plugins.bundles.<name>.<field>.
	// The name is the bundle's manifest name.
	Bundles map[string]Bundle `koanf:"bundles"`
}

// Isolation modes (plugins.bundles.<name>.isolation).
const (
	IsolationPerOrg  = "per_org"
	IsolationPerCall = "per_call"
)

// Bundle is one enabled bundle and what the operator grants it.
type Bundle struct {
	// Enabled serves the bundle; false keeps its entry but unloads it.
	Enabled bool `koanf:"enabled"`

	// Path is the .wasm file; relative paths are resolved against the
	// working directory.
	Path string `koanf:"path"`

	// SHA256 pins the file's content (64 hex digits): a file that does not
	// match is refused and the version already loaded keeps serving.
	SHA256 string `koanf:"sha256"`

	// Routes are the API routes the bundle may call, "METHOD /api/v1/path"
	// with {name} for one path segment. A bundle whose manifest asks for
	// more is refused.
	Routes []string `koanf:"routes"`

	// Isolation is per_org (default: an instance serves one organisation,
	// pooled) or per_call (a fresh instance per call).
	Isolation string `koanf:"isolation"`

	// MemoryMiB caps an instance's memory. Default 64.
	MemoryMiB int `koanf:"memory_mib"`

	// Timeout bounds each call into the bundle. Default 10s.
	Timeout time.Duration `koanf:"timeout"`

	// MaxOutputBytes caps a result. Default 1048576 (1 MiB).
	MaxOutputBytes int `koanf:"max_output_bytes"`

	// PoolSize is how many idle instances are kept per organisation.
	// Default 4.
	PoolSize int `koanf:"pool_size"`

	// APICalls is how many API requests one call may make. Default 16.
	APICalls int `koanf:"api_calls"`

	// Settings are the bundle's own configuration, "key=value" entries the
	// bundle reads with config_get.
	Settings []string `koanf:"settings"`
}

// Bundle limits applied when a field is 0.
const (
	DefaultBundleMemoryMiB      = 64
	DefaultBundleTimeout        = 10 * time.Second
	DefaultBundleMaxOutputBytes = 1 << 20
	DefaultBundlePoolSize       = 4
	DefaultBundleAPICalls       = 16
)

// WithDefaults fills the zero limits of b.
func (b Bundle) WithDefaults() Bundle {
	if b.Isolation == "" {
		b.Isolation = IsolationPerOrg
	}
	if b.MemoryMiB == 0 {
		b.MemoryMiB = DefaultBundleMemoryMiB
	}
	if b.Timeout == 0 {
		b.Timeout = DefaultBundleTimeout
	}
	if b.MaxOutputBytes == 0 {
		b.MaxOutputBytes = DefaultBundleMaxOutputBytes
	}
	if b.PoolSize == 0 {
		b.PoolSize = DefaultBundlePoolSize
	}
	if b.APICalls == 0 {
		b.APICalls = DefaultBundleAPICalls
	}
	return b
}

// SettingsMap returns Settings as a map.
func (b Bundle) SettingsMap() map[string]string {
	m := make(map[string]string, len(b.Settings))
	for _, kv := range b.Settings {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

// PluginCacheDir is plugins.cache_dir or <data_dir>/wasm-cache.
func (c *Config) PluginCacheDir() string {
	if c.Plugins.CacheDir != "" {
		return c.Plugins.CacheDir
	}
	return filepath.Join(c.DataDir, "wasm-cache")
}

// EnabledBundles returns the enabled bundles by name, limits defaulted.
func (c *Config) EnabledBundles() map[string]Bundle {
	out := map[string]Bundle{}
	for name, b := range c.Plugins.Bundles {
		if b.Enabled {
			out[name] = b.WithDefaults()
		}
	}
	return out
}

func (p *Plugins) normalize() {
	p.CacheDir = absPath(p.CacheDir)
	for name, b := range p.Bundles {
		b.Path = absPath(b.Path)
		b.SHA256 = strings.ToLower(b.SHA256)
		p.Bundles[name] = b
	}
}

var (
	bundleNameRE   = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)
	routeRE        = regexp.MustCompile(`^(GET|POST|PUT|PATCH|DELETE) /api/v1(/([a-z0-9_]+|\{[a-z_]+\}))+$`)
	settingsKeyRE  = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)
	allowedIsolate = []string{IsolationPerOrg, IsolationPerCall}
)

func (p *problems) plugins(pl *Plugins) {
	if pl.CacheDir != "" && !filepath.IsAbs(pl.CacheDir) {
		p.add("plugins.cache_dir", "%q is not an absolute path", pl.CacheDir)
	}
	for _, name := range slices.Sorted(maps.Keys(pl.Bundles)) {
		key := "plugins.bundles." + name
		if !bundleNameRE.MatchString(name) {
			p.add(key, "%q is not a valid bundle name (want a lower-case letter, then up to 31 of a-z, 0-9, \"_\")", name)
			continue
		}
		b := pl.Bundles[name]
		if !b.Enabled {
			continue
		}
		if b.Path == "" {
			p.add(key+".path", "is required (the bundle's .wasm file)")
		}
		if d, err := hex.DecodeString(b.SHA256); err != nil || len(d) != 32 {
			p.add(key+".sha256", "must be the file's SHA-256 as 64 hex digits (sha256sum FILE, or kadu plugins validate FILE)")
		}
		for i, r := range b.Routes {
			if !routeRE.MatchString(r) {
				p.add(key+".routes", "entry %d, %q, is not a route (want e.g. \"GET /api/v1/tasks/{id}\")", i, r)
			}
		}
		if b.Isolation != "" {
			p.oneOf(key+".isolation", b.Isolation, allowedIsolate)
		}
		nonNegative := func(field string, n int) {
			if n < 0 {
				p.add(key+"."+field, "%d is negative; leave it out for the default", n)
			}
		}
		nonNegative("memory_mib", b.MemoryMiB)
		nonNegative("max_output_bytes", b.MaxOutputBytes)
		nonNegative("pool_size", b.PoolSize)
		nonNegative("api_calls", b.APICalls)
		if b.MemoryMiB > 4096 {
			p.add(key+".memory_mib", "%d is more than a WebAssembly instance can address (4096)", b.MemoryMiB)
		}
		if b.Timeout < 0 {
			p.positive(key+".timeout", b.Timeout)
		}
		for i, kv := range b.Settings {
			k, _, ok := strings.Cut(kv, "=")
			if !ok || !settingsKeyRE.MatchString(k) {
				p.add(key+".settings", "entry %d is not key=value with a key of letters, digits, \"_\", \".\", \"-\"", i)
			}
		}
	}
}
