package config

import (
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/kobana/kadu/core/plugin/bundleconf"
	"github.com/kobana/kadu/core/plugin/bundlesig"
)

// Plugins configures the WASM bundles that provide tools, resources and
// prompts (docs/reference/bundles.md#configuration).
type Plugins struct {
	// CacheDir keeps compiled bundles between restarts. Default empty:
	// <data_dir>/wasm-cache. A relative path set in the configuration file
	// resolves against the file's directory; one from the environment or a
	// flag, against the working directory.
	CacheDir string `koanf:"cache_dir"`

	// Watch reloads bundles when the configuration file or a bundle file
	// changes. SIGHUP and POST /admin/plugins/reload always reload. Default
	// true.
	Watch bool `koanf:"watch"`

	// MemoryBudgetMiB caps the memory of every live bundle instance
	// together: each is counted by its committed linear memory plus a
	// fixed overhead. Idle instances are closed, least recently used first,
	// to make room; when every instance is busy a call waits MemoryWait,
	// then fails with -31503 "overloaded" (retry). Default 512.
	MemoryBudgetMiB int `koanf:"memory_budget_mib"`

	// OrgSharePercent is the part of the memory budget one organisation
	// may hold, 1 to 100: over it, its own idle instances are closed first
	// and the others' are left alone. Default 25.
	OrgSharePercent int `koanf:"org_share_percent"`

	// MaxInstances caps live bundle instances, whatever their size.
	// Default 256.
	MaxInstances int `koanf:"max_instances"`

	// MemoryWait bounds how long a call waits for room in the memory
	// budget while every instance is busy. Default 5s.
	MemoryWait time.Duration `koanf:"memory_wait"`

	// IdleTTL closes pooled instances idle for longer. Default 5m.
	IdleTTL time.Duration `koanf:"idle_ttl"`

	// DrainTimeout bounds how long a replaced bundle version waits for its
	// calls in flight before it is closed under them. Default 30s.
	DrainTimeout time.Duration `koanf:"drain_timeout"`

	// Quarantine is the circuit breaker of every bundle version.
	Quarantine Quarantine `koanf:"quarantine"`

	// Bundles are the enabled bundles, by name: plugins.bundles.<name>.<field>.
	// The name is the bundle's manifest name.
	Bundles map[string]Bundle `koanf:"bundles"`

	// RequireSignature refuses, at start and at reload, a bundle file with
	// no signature next to it (<path>.sig, written by `kadu plugins sign` or
	// minisign; docs/reference/bundles.md, "Signed bundles"). A signature
	// that is present is verified either way. Bundles built into the binary
	// are exempt. Default false; recommended in production.
	RequireSignature bool `koanf:"require_signature"`

	// TrustedKeys are the public keys trusted to sign bundles, by a name of
	// the operator's choice (plugins.trusted_keys.<name>.public_key).
	// Several may be trusted at once, so a publisher can rotate keys.
	TrustedKeys map[string]TrustedKey `koanf:"trusted_keys"`
}

// TrustedKey is one public key trusted to sign bundles.
type TrustedKey struct {
	// PublicKey is a minisign Ed25519 public key: the base64 line
	// ("RW…") of the .pub file that `kadu plugins keygen` or `minisign -G`
	// wrote.
	PublicKey string `koanf:"public_key"`
}

// Keyring returns the trusted keys of plugins.trusted_keys. Load has
// validated them; the error names the key that does not parse.
func (p *Plugins) Keyring() (*bundlesig.Keyring, error) {
	keys := make(map[string]bundlesig.PublicKey, len(p.TrustedKeys))
	for _, name := range slices.Sorted(maps.Keys(p.TrustedKeys)) {
		k, err := bundlesig.ParsePublicKey(p.TrustedKeys[name].PublicKey)
		if err != nil {
			return nil, fmt.Errorf("plugins.trusted_keys.%s.public_key: %w", name, err)
		}
		keys[name] = k
	}
	kr, err := bundlesig.NewKeyring(keys)
	if err != nil {
		return nil, fmt.Errorf("plugins.trusted_keys: %w", err)
	}
	return kr, nil
}

// Quarantine is the circuit breaker of a bundle version: Faults faults
// (trap, timeout, memory limit, oversized or invalid output) within Window
// make every call to it fail at once for Cooldown.
type Quarantine struct {
	// Faults within Window that quarantine the version. Default 5.
	Faults int `koanf:"faults"`
	// Window is how far back faults count. Default 1m.
	Window time.Duration `koanf:"window"`
	// Cooldown is how long the quarantine lasts. Default 30s.
	Cooldown time.Duration `koanf:"cooldown"`
}

// defaultPlugins is the plugins section of the embedded defaults.
func defaultPlugins() Plugins {
	return Plugins{
		Watch:           true,
		MemoryBudgetMiB: bundleconf.DefaultMemoryBudgetMiB,
		OrgSharePercent: bundleconf.DefaultOrgSharePercent,
		MaxInstances:    bundleconf.DefaultMaxInstances,
		MemoryWait:      bundleconf.DefaultMemoryWait,
		IdleTTL:         bundleconf.DefaultIdleTTL,
		DrainTimeout:    bundleconf.DefaultDrainTimeout,
		Quarantine: Quarantine{
			Faults:   bundleconf.DefaultQuarantineFaults,
			Window:   bundleconf.DefaultQuarantineWindow,
			Cooldown: bundleconf.DefaultQuarantineCooldown,
		},
		Bundles: firstPartyBundles(),
	}
}

// Bundle is one enabled bundle and what the operator grants it.
type Bundle struct {
	// Enabled serves the bundle; false keeps its entry but unloads it.
	Enabled bool `koanf:"enabled"`

	// Required stops the start when the bundle does not load (file missing,
	// sha256 mismatch, invalid module). A bundle that is not required is
	// skipped with an error in the log and in GET /admin/plugins, and the
	// others serve. Default false; true for the first-party bundles.
	Required bool `koanf:"required"`

	// Path is the .wasm file. A relative path set in the configuration file
	// resolves against the file's directory; one from the environment,
	// against the working directory. Empty: for a first-party bundle
	// (tasks, executions, files, webhooks) the copy built into the binary
	// by `go tool task build`, required for any other.
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

	// Limits bound the bundle's instances and calls: memory_mib, timeout,
	// max_output_bytes, pool_size and api_calls, keys of the bundle itself
	// (core/plugin/bundleconf has their defaults and caps).
	bundleconf.Limits

	// Settings are the bundle's own configuration, "key=value" entries the
	// bundle reads with config_get.
	Settings []string `koanf:"settings"`

	// Organisations are the organisation ids that see the bundle, besides
	// the organisations on a plan listed in Plans. Both unset (the
	// default): every organisation. A list set but empty
	// matches nobody, so `organisations: []` with no plans loads the bundle
	// without showing it to anyone. Its tools, resources, prompts and
	// completions are absent for everyone else, as if they did not exist
	// (docs/reference/bundles.md#who-sees-a-bundle).
	Organisations []string `koanf:"organisations"`

	// Plans are the plan names (plans.<name>) whose organisations see the
	// bundle, besides those listed in Organisations. Unset: none by plan.
	Plans []string `koanf:"plans"`
}

// Restricted reports whether b is shown only to some organisations: its
// organisations or its plans are set (an empty list counts as set).
func (b Bundle) Restricted() bool { return b.Organisations != nil || b.Plans != nil }

// WithDefaults fills the zero limits and the isolation of b.
func (b Bundle) WithDefaults() Bundle {
	if b.Isolation == "" {
		b.Isolation = bundleconf.IsolationPerOrg
	}
	b.Limits = b.Limits.WithDefaults()
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

func (p *Plugins) normalize(base paths) {
	p.CacheDir = absPath(base.dir("plugins.cache_dir"), p.CacheDir)
	for name, b := range p.Bundles {
		b.Path = absPath(base.dir("plugins.bundles."+name+".path"), b.Path)
		b.SHA256 = strings.ToLower(b.SHA256)
		p.Bundles[name] = b
	}
}

var (
	routeRE       = regexp.MustCompile(`^(GET|POST|PUT|PATCH|DELETE) /api/v1(/([a-z0-9_]+|\{[a-z_]+\}))+$`)
	settingsKeyRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)
)

func (p *problems) plugins(pl *Plugins) {
	if pl.CacheDir != "" && !filepath.IsAbs(pl.CacheDir) {
		p.add("plugins.cache_dir", "%q is not an absolute path", pl.CacheDir)
	}
	p.pluginPool(pl)
	p.trustedKeys(pl)
	for _, name := range slices.Sorted(maps.Keys(pl.Bundles)) {
		key := "plugins.bundles." + name
		if err := bundleconf.CheckName(name); err != nil {
			p.add(key, "%s", err)
			continue
		}
		b := pl.Bundles[name]
		if !b.Enabled {
			continue
		}
		if b.Path == "" && !IsFirstParty(name) {
			p.add(key+".path", "is required (the bundle's .wasm file)")
		}
		if e := bundleconf.CheckSHA256(b.SHA256); e != nil {
			p.add(key+"."+e.Field, "%s", e.Msg)
		}
		for i, r := range b.Routes {
			if !routeRE.MatchString(r) {
				p.add(key+".routes", "entry %d, %q, is not a route (want e.g. \"GET /api/v1/tasks/{id}\")", i, r)
			}
		}
		fieldErrs := b.Limits.Check()
		if e := bundleconf.CheckIsolation(b.Isolation); e != nil {
			fieldErrs = append([]*bundleconf.FieldError{e}, fieldErrs...)
		}
		for _, e := range fieldErrs {
			p.add(key+"."+e.Field, "%s", e.Msg)
		}
		for i, kv := range b.Settings {
			k, _, ok := strings.Cut(kv, "=")
			if !ok || !settingsKeyRE.MatchString(k) {
				p.add(key+".settings", "entry %d is not key=value with a key of letters, digits, \"_\", \".\", \"-\"", i)
			}
		}
	}
}

// pluginPool checks the pool policy: every knob must be positive, and one
// organisation's share must fit the largest instance an enabled bundle may
// grow to, or its calls could never get the memory they are allowed.
func (p *problems) pluginPool(pl *Plugins) {
	atLeastOne := func(key string, n int) {
		if n < 1 {
			p.add(key, "%d: want 1 or more", n)
		}
	}
	atLeastOne("plugins.memory_budget_mib", pl.MemoryBudgetMiB)
	atLeastOne("plugins.max_instances", pl.MaxInstances)
	atLeastOne("plugins.quarantine.faults", pl.Quarantine.Faults)
	if pl.OrgSharePercent < 1 || pl.OrgSharePercent > 100 {
		p.add("plugins.org_share_percent", "%d: want 1 to 100 (the part of plugins.memory_budget_mib one organisation may hold)", pl.OrgSharePercent)
	}
	p.positive("plugins.memory_wait", pl.MemoryWait)
	p.positive("plugins.idle_ttl", pl.IdleTTL)
	p.positive("plugins.drain_timeout", pl.DrainTimeout)
	p.positive("plugins.quarantine.window", pl.Quarantine.Window)
	p.positive("plugins.quarantine.cooldown", pl.Quarantine.Cooldown)
	if pl.MemoryBudgetMiB < 1 || pl.OrgSharePercent < 1 || pl.OrgSharePercent > 100 {
		return
	}
	share := pl.MemoryBudgetMiB * pl.OrgSharePercent / 100
	for _, name := range slices.Sorted(maps.Keys(pl.Bundles)) {
		b := pl.Bundles[name].WithDefaults()
		if pl.Bundles[name].Enabled && b.MemoryMiB <= bundleconf.MaxMemoryMiB && b.MemoryMiB+bundleconf.InstanceOverhead>>20 > share {
			p.add("plugins.org_share_percent", "%d%% of plugins.memory_budget_mib (%d MiB) is %d MiB, less than one instance of "+
				"bundle %q may take (memory_mib %d, plus 1 MiB overhead): raise plugins.memory_budget_mib or "+
				"plugins.org_share_percent, or lower plugins.bundles.%s.memory_mib", pl.OrgSharePercent, pl.MemoryBudgetMiB, share, name, b.MemoryMiB, name)
			return
		}
	}
}

// trustedKeys checks that each trusted key is a minisign public key, and
// that no two names hold one key (a signature could not say which signed).
func (p *problems) trustedKeys(pl *Plugins) {
	byID := map[bundlesig.KeyID]string{}
	for _, name := range slices.Sorted(maps.Keys(pl.TrustedKeys)) {
		key := "plugins.trusted_keys." + name + ".public_key"
		v := pl.TrustedKeys[name].PublicKey
		if strings.TrimSpace(v) == "" {
			p.add(key, "is required: the base64 line of a minisign public key (`kadu plugins keygen` writes it to PREFIX.pub)")
			continue
		}
		k, err := bundlesig.ParsePublicKey(v)
		if err != nil {
			p.add(key, "%s; want the base64 line (\"RW…\") of a minisign public key, as `kadu plugins keygen` or `minisign -G` writes it", err)
			continue
		}
		if other, ok := byID[k.ID]; ok {
			p.add(key, "is the same key (ID %s) as plugins.trusted_keys.%s; keep one of them", k.ID, other)
			continue
		}
		byID[k.ID] = name
	}
}
