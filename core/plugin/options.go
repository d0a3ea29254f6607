package plugin

import (
	"cmp"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/plugin/bundleconf"
	"github.com/kobana/kadu/core/plugin/internal/route"
)

// Isolation values of BundleConfig.Isolation (core/plugin/bundleconf).
const (
	// IsolationPerOrg pools instances per (bundle version, organisation):
	// an instance serves many calls, all of one organisation.
	IsolationPerOrg = bundleconf.IsolationPerOrg
	// IsolationPerCall gives every call a fresh instance, closed after it.
	IsolationPerCall = bundleconf.IsolationPerCall
)

// BundleConfig is the operator's configuration of one bundle. The lead maps
// config files to it; Reload and New validate it.
type BundleConfig struct {
	// Name is the bundle name (bundleconf.NameRE); the manifest's name must
	// equal it.
	Name string
	// Path is the .wasm file. With Wasm set it only names the module in
	// logs and Status (e.g. "embedded:tasks.wasm") and is never opened.
	Path string
	// Wasm, when set, is the module itself: a copy built into the binary.
	// It is pinned by SHA256 like a file, and never watched or checked for
	// changes (it cannot change under a running process).
	Wasm []byte
	// SHA256 pins the file: 64 hex characters, the output of sha256sum.
	SHA256 string
	// Routes is the operator's grant, in the manifest's pattern syntax
	// ("GET /api/v1/tasks/{id}"). Every route the manifest declares must be
	// within it; api() calls must match both.
	Routes []string
	// Isolation is IsolationPerOrg (default) or IsolationPerCall.
	Isolation string
	// Limits bound every instance and call of the bundle.
	Limits Limits
	// Config holds the values config_get returns. They may be secrets: they
	// are never logged.
	Config map[string]string
	// Required makes New fail when the bundle does not load. A bundle that
	// is not required and does not load is skipped: logged, listed as
	// failed by Status, and the others serve. Reload ignores it (a failed
	// reload never unloads a working version).
	Required bool
	// Audience says which organisations see the bundle; the zero value is
	// every organisation. Changing it keeps the loaded version.
	Audience Audience
	// Trust is the signature policy the file at Path is held to
	// (signature.go); a module built in (Wasm) is exempt.
	Trust Trust
}

// Limits bound a bundle's instances and calls: the configured per-bundle
// limits (bundleconf.Limits: memory_mib, timeout, max_output_bytes,
// pool_size, api_calls) and how long its idle instances are kept. A zero
// field takes its default.
type Limits struct {
	bundleconf.Limits
	// IdleTTL closes pooled instances idle for longer (plugins.idle_ttl).
	// Default 5m.
	IdleTTL time.Duration
}

// QuarantinePolicy is the circuit breaker of a bundle version: Faults
// faults within Window quarantine it for Cooldown, during which its calls
// fail at once. Zero fields take their defaults (5, 1m, 30s).
type QuarantinePolicy struct {
	Faults   int
	Window   time.Duration
	Cooldown time.Duration
}

// Dispatcher performs a Kadu API request in process, as p, the way the
// REST API would answer it over HTTP. The app implements it over the Echo
// router that serves /api/v1. path includes the query string.
//
// Implementations must be safe for concurrent use, must not keep body or
// resp after returning, and must answer errors in the API's own error shape.
type Dispatcher interface {
	Dispatch(ctx context.Context, p *auth.Principal, method, path string, body []byte) (status int, resp []byte)
}

// DispatcherFunc adapts a function to Dispatcher.
type DispatcherFunc func(ctx context.Context, p *auth.Principal, method, path string, body []byte) (int, []byte)

var _ Dispatcher = DispatcherFunc(nil)

// Dispatch calls f.
func (f DispatcherFunc) Dispatch(ctx context.Context, p *auth.Principal, method, path string, body []byte) (int, []byte) {
	return f(ctx, p, method, path, body)
}

// Options configure a Registry. A nil *Options is not allowed: Dispatcher
// is required.
type Options struct {
	// Bundles are loaded by New; every Required one must load.
	Bundles []BundleConfig
	// CacheDir holds wazero's compilation cache on disk, so a restart does
	// not recompile unchanged bundles. Empty: an in-memory cache.
	CacheDir string
	// DescribeCache also keeps in CacheDir what kadu_describe answered for
	// each module and configuration, so a restart validates the manifest
	// read back instead of instantiating every bundle to ask again
	// (describecache.go says why a hit is as good as asking). A new build
	// is always described. Ignored without CacheDir.
	DescribeCache bool
	// Dispatcher serves api() host calls. Required.
	Dispatcher Dispatcher
	// SealKey is the 32-byte AES-256-GCM key that seals bundle state into
	// requestState. Every replica must share it. Nil: a random key, which
	// only works with a single replica.
	SealKey []byte
	// GlobalInstanceBudget caps live instances across every pool; the least
	// recently used idle ones are closed to make room. Default 256.
	GlobalInstanceBudget int
	// MemoryBudget caps, in bytes, the memory of every live instance: its
	// committed linear memory plus a fixed overhead each. The least
	// recently used idle instances are closed to make room. Default 512 MiB.
	MemoryBudget int64
	// OrgSharePercent is the part of MemoryBudget one organisation may
	// hold, 1 to 100; over it, the organisation's own idle instances are
	// closed first. Default 25.
	OrgSharePercent int
	// MemoryWait bounds how long a call waits for memory when every
	// instance that could make room is busy; then it fails with a
	// *BusyError. Default 5s.
	MemoryWait time.Duration
	// Quarantine is the circuit breaker applied to every bundle version.
	Quarantine QuarantinePolicy
	// DrainTimeout bounds how long a replaced version waits for its
	// in-flight calls before its runtime is closed under them. Default 30s.
	DrainTimeout time.Duration
	// ReloadConfig returns the current bundle configuration, for
	// POST /admin/plugins/reload. Nil: that endpoint answers 501.
	ReloadConfig func(ctx context.Context) ([]BundleConfig, error)
	// Logger receives load, fault and guest logs. Default: discard.
	Logger *slog.Logger
	// TracerProvider records a span per bundle call (trace.go). Nil: none.
	TracerProvider trace.TracerProvider
	// Now is the clock for idle TTLs, quarantine and requestState expiry.
	// Default time.Now.
	Now func() time.Time
	// Metrics counts instantiations, calls, faults and reloads
	// (metrics.go). Nil: none.
	Metrics Metrics
	// PlanOf resolves an organisation's plan for the bundles whose
	// Audience lists plans. Nil: such lists match no organisation.
	PlanOf PlanOf
	// OnEvent is told of every bundle load, swap, refusal and quarantine
	// (event.go), outside the Registry's locks. Nil: none.
	OnEvent EventFunc
}

// bundleNameRE is the bundle name rule, which manifests are held to too.
var bundleNameRE = bundleconf.NameRE

// withDefaults returns b with every zero limit and the isolation set.
func (b BundleConfig) withDefaults() BundleConfig {
	if b.Isolation == "" {
		b.Isolation = IsolationPerOrg
	}
	b.Limits = b.Limits.withDefaults()
	return b
}

func (l Limits) withDefaults() Limits {
	l.Limits = l.Limits.WithDefaults()
	l.IdleTTL = cmp.Or(l.IdleTTL, bundleconf.DefaultIdleTTL)
	return l
}

// validate checks a defaulted BundleConfig. Errors name the configuration
// key (plugins.bundles.<name>.<field>) and say what to write instead.
func (b BundleConfig) validate() error {
	var errs []error
	if err := bundleconf.CheckName(b.Name); err != nil {
		errs = append(errs, fmt.Errorf("name: %w", err))
	}
	if b.Path == "" {
		errs = append(errs, fmt.Errorf("%s: required, the bundle's .wasm file", bundleconf.Key(b.Name, "path")))
	}
	problems := b.Limits.Check()
	if e := bundleconf.CheckSHA256(b.SHA256); e != nil {
		problems = append([]*bundleconf.FieldError{e}, problems...)
	}
	for i, r := range b.Routes {
		if _, err := route.Parse(r); err != nil {
			errs = append(errs, fmt.Errorf("%s[%d]: %w", bundleconf.Key(b.Name, "routes"), i, err))
		}
	}
	if e := bundleconf.CheckIsolation(b.Isolation); e != nil || b.Isolation == "" {
		errs = append(errs, fmt.Errorf("%s: %q is not allowed (want one of %s, %s)",
			bundleconf.Key(b.Name, "isolation"), b.Isolation, IsolationPerOrg, IsolationPerCall))
	}
	if b.Limits.IdleTTL < 0 {
		errs = append(errs, fmt.Errorf("plugins.idle_ttl %s: want a positive duration such as 5m", b.Limits.IdleTTL))
	}
	return errors.Join(append([]error{bundleconf.Join(b.Name, problems)}, errs...)...)
}

// equal reports whether two defaulted configs load the same version: then
// Reload keeps the loaded one.
func (b BundleConfig) equal(o BundleConfig) bool {
	return b.Name == o.Name && b.Path == o.Path && (b.Wasm == nil) == (o.Wasm == nil) && equalFoldHex(b.SHA256, o.SHA256) &&
		slices.Equal(b.Routes, o.Routes) && b.Isolation == o.Isolation && b.Limits == o.Limits &&
		maps.Equal(b.Config, o.Config) && b.Trust.equal(o.Trust)
}

func equalFoldHex(a, b string) bool {
	x, errA := hex.DecodeString(a)
	y, errB := hex.DecodeString(b)
	return errA == nil && errB == nil && string(x) == string(y)
}

// instanceOverhead is what the budget charges an instance besides its
// linear memory (bundleconf.InstanceOverhead says why).
const instanceOverhead = bundleconf.InstanceOverhead

// settings are the registry-wide options after defaults.
type settings struct {
	maxInstances     int
	memoryBudget     int64
	orgSharePercent  int
	memoryWait       time.Duration
	instanceOverhead int64
	quarantine       QuarantinePolicy
	drain            time.Duration
	log              *slog.Logger
	now              func() time.Time
}

func (o *Options) settings() settings {
	s := settings{
		maxInstances:     cmp.Or(o.GlobalInstanceBudget, bundleconf.DefaultMaxInstances),
		memoryBudget:     cmp.Or(o.MemoryBudget, bundleconf.DefaultMemoryBudgetMiB<<20),
		orgSharePercent:  cmp.Or(o.OrgSharePercent, bundleconf.DefaultOrgSharePercent),
		memoryWait:       cmp.Or(o.MemoryWait, bundleconf.DefaultMemoryWait),
		instanceOverhead: instanceOverhead,
		quarantine: QuarantinePolicy{
			Faults:   cmp.Or(o.Quarantine.Faults, bundleconf.DefaultQuarantineFaults),
			Window:   cmp.Or(o.Quarantine.Window, bundleconf.DefaultQuarantineWindow),
			Cooldown: cmp.Or(o.Quarantine.Cooldown, bundleconf.DefaultQuarantineCooldown),
		},
		drain: cmp.Or(o.DrainTimeout, bundleconf.DefaultDrainTimeout),
		log:   o.Logger,
		now:   o.Now,
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s
}

func (o *Options) validate() error {
	var errs []error
	if o.Dispatcher == nil {
		errs = append(errs, errors.New("plugin options: Dispatcher is required (the app's in-process /api/v1 dispatcher)"))
	}
	if o.SealKey != nil && len(o.SealKey) != 32 {
		errs = append(errs, fmt.Errorf("plugin options: SealKey is %d bytes, want 32 (AES-256)", len(o.SealKey)))
	}
	if o.GlobalInstanceBudget < 0 {
		errs = append(errs, fmt.Errorf("plugin options: GlobalInstanceBudget %d, want 1 or more", o.GlobalInstanceBudget))
	}
	if o.MemoryBudget < 0 {
		errs = append(errs, fmt.Errorf("plugin options: MemoryBudget %d, want a positive number of bytes", o.MemoryBudget))
	}
	if o.OrgSharePercent < 0 || o.OrgSharePercent > 100 {
		errs = append(errs, fmt.Errorf("plugin options: OrgSharePercent %d, want 1 to 100", o.OrgSharePercent))
	}
	if o.MemoryWait < 0 {
		errs = append(errs, errors.New("plugin options: MemoryWait must not be negative"))
	}
	q := o.Quarantine
	if q.Faults < 0 || q.Window < 0 || q.Cooldown < 0 {
		errs = append(errs, errors.New("plugin options: Quarantine fields must not be negative"))
	}
	if o.DrainTimeout < 0 {
		errs = append(errs, errors.New("plugin options: DrainTimeout must not be negative"))
	}
	return errors.Join(errs...)
}
