package plugin

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"regexp"
	"slices"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/plugin/internal/route"
)

// Isolation values of BundleConfig.Isolation.
const (
	// IsolationPerOrg pools instances per (bundle version, organisation):
	// an instance serves many calls, all of one organisation.
	IsolationPerOrg = "per_org"
	// IsolationPerCall gives every call a fresh instance, closed after it.
	IsolationPerCall = "per_call"
)

// Defaults of Limits and Options; each field's comment repeats its default.
const (
	DefaultMemoryMiB             = 64
	DefaultTimeout               = 10 * time.Second
	DefaultMaxOutputBytes        = 1 << 20
	DefaultPoolSize              = 4
	DefaultAPICallsPerInvocation = 16
	DefaultIdleTTL               = 5 * time.Minute
	DefaultGlobalInstanceBudget  = 256
	DefaultMemoryBudget          = 512 << 20
	DefaultOrgSharePercent       = 25
	DefaultMemoryWait            = 5 * time.Second
	DefaultDrainTimeout          = 30 * time.Second
	DefaultQuarantineFaults      = 5
	DefaultQuarantineWindow      = time.Minute
	DefaultQuarantineCooldown    = 30 * time.Second
)

// maxMemoryMiB is wazero's ceiling: 65536 pages of 64 KiB.
const maxMemoryMiB = 4096

// BundleConfig is the operator's configuration of one bundle. The lead maps
// config files to it; Reload and New validate it.
type BundleConfig struct {
	// Name is the bundle name; the manifest's name must equal it.
	// ^[a-z][a-z0-9_]{0,31}$.
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
}

// Limits bound a bundle's instances and calls. A zero field takes its
// default.
type Limits struct {
	// MemoryMiB caps an instance's linear memory. Default 64, at most 4096.
	MemoryMiB int
	// Timeout bounds every guest entry (_initialize, kadu_describe,
	// kadu_handle), api() round trips included. Default 10s.
	Timeout time.Duration
	// MaxOutputBytes caps output_write. Default 1 MiB.
	MaxOutputBytes int
	// PoolSize is the idle instances kept warm per (version, organisation)
	// for IdleTTL. It is not a cap: a pool grows with its organisation's
	// concurrency, within the memory budget, and what it grew beyond
	// PoolSize is closed after surplusTTL idle (pool.go). Default 4.
	PoolSize int
	// APICallsPerInvocation caps api() calls in one guest entry. Default 16.
	APICallsPerInvocation int
	// IdleTTL closes pooled instances idle for longer. Default 5m.
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
}

var bundleNameRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)

// withDefaults returns b with every zero limit and the isolation set.
func (b BundleConfig) withDefaults() BundleConfig {
	if b.Isolation == "" {
		b.Isolation = IsolationPerOrg
	}
	b.Limits = b.Limits.withDefaults()
	return b
}

func (l Limits) withDefaults() Limits {
	if l.MemoryMiB == 0 {
		l.MemoryMiB = DefaultMemoryMiB
	}
	if l.Timeout == 0 {
		l.Timeout = DefaultTimeout
	}
	if l.MaxOutputBytes == 0 {
		l.MaxOutputBytes = DefaultMaxOutputBytes
	}
	if l.PoolSize == 0 {
		l.PoolSize = DefaultPoolSize
	}
	if l.APICallsPerInvocation == 0 {
		l.APICallsPerInvocation = DefaultAPICallsPerInvocation
	}
	if l.IdleTTL == 0 {
		l.IdleTTL = DefaultIdleTTL
	}
	return l
}

// validate checks a defaulted BundleConfig. Errors name the field and say
// what to write instead.
func (b BundleConfig) validate() error {
	var errs []error
	if !bundleNameRE.MatchString(b.Name) {
		errs = append(errs, fmt.Errorf("name %q: want a lowercase letter then up to 31 of a-z, 0-9, _", b.Name))
	}
	if b.Path == "" {
		errs = append(errs, errors.New("path: required, the bundle's .wasm file"))
	}
	if err := checkSHA256(b.SHA256); err != nil {
		errs = append(errs, fmt.Errorf("sha256: %w", err))
	}
	for i, r := range b.Routes {
		if _, err := route.Parse(r); err != nil {
			errs = append(errs, fmt.Errorf("routes[%d]: %w", i, err))
		}
	}
	if b.Isolation != IsolationPerOrg && b.Isolation != IsolationPerCall {
		errs = append(errs, fmt.Errorf("isolation %q: want %q or %q", b.Isolation, IsolationPerOrg, IsolationPerCall))
	}
	l := b.Limits
	if l.MemoryMiB < 1 || l.MemoryMiB > maxMemoryMiB {
		errs = append(errs, fmt.Errorf("limits.memory_mib %d: want 1 to %d", l.MemoryMiB, maxMemoryMiB))
	}
	if l.Timeout < 0 {
		errs = append(errs, fmt.Errorf("limits.timeout %s: want a positive duration such as 10s", l.Timeout))
	}
	if l.MaxOutputBytes < 0 || l.MaxOutputBytes > 64<<20 {
		errs = append(errs, fmt.Errorf("limits.max_output_bytes %d: want 1 to %d", l.MaxOutputBytes, 64<<20))
	}
	if l.PoolSize < 0 {
		errs = append(errs, fmt.Errorf("limits.pool_size %d: want 1 or more", l.PoolSize))
	}
	if l.APICallsPerInvocation < 0 {
		errs = append(errs, fmt.Errorf("limits.api_calls_per_invocation %d: want 1 or more", l.APICallsPerInvocation))
	}
	if l.IdleTTL < 0 {
		errs = append(errs, fmt.Errorf("limits.idle_ttl %s: want a positive duration such as 5m", l.IdleTTL))
	}
	return errors.Join(errs...)
}

func checkSHA256(s string) error {
	if len(s) != 64 {
		return fmt.Errorf("want 64 hex characters (the output of sha256sum), got %d characters", len(s))
	}
	if _, err := hex.DecodeString(s); err != nil {
		return errors.New("want 64 hex characters (the output of sha256sum)")
	}
	return nil
}

// equal reports whether two defaulted configs load the same version: then
// Reload keeps the loaded one.
func (b BundleConfig) equal(o BundleConfig) bool {
	return b.Name == o.Name && b.Path == o.Path && (b.Wasm == nil) == (o.Wasm == nil) && equalFoldHex(b.SHA256, o.SHA256) &&
		slices.Equal(b.Routes, o.Routes) && b.Isolation == o.Isolation && b.Limits == o.Limits &&
		maps.Equal(b.Config, o.Config)
}

func equalFoldHex(a, b string) bool {
	x, errA := hex.DecodeString(a)
	y, errB := hex.DecodeString(b)
	return errA == nil && errB == nil && string(x) == string(y)
}

// instanceOverhead is what the budget charges an instance besides its
// linear memory: wazero's bookkeeping for one module (function and table
// instances, globals, the call stack). Measured for the first-party Go
// bundles, the heaviest the project ships: see RATIONALE.md.
const instanceOverhead = 1 << 20

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
		maxInstances:     o.GlobalInstanceBudget,
		memoryBudget:     o.MemoryBudget,
		orgSharePercent:  o.OrgSharePercent,
		memoryWait:       o.MemoryWait,
		instanceOverhead: instanceOverhead,
		quarantine:       o.Quarantine,
		drain:            o.DrainTimeout,
		log:              o.Logger,
		now:              o.Now,
	}
	if s.maxInstances == 0 {
		s.maxInstances = DefaultGlobalInstanceBudget
	}
	if s.memoryBudget == 0 {
		s.memoryBudget = DefaultMemoryBudget
	}
	if s.orgSharePercent == 0 {
		s.orgSharePercent = DefaultOrgSharePercent
	}
	if s.memoryWait == 0 {
		s.memoryWait = DefaultMemoryWait
	}
	if s.quarantine.Faults == 0 {
		s.quarantine.Faults = DefaultQuarantineFaults
	}
	if s.quarantine.Window == 0 {
		s.quarantine.Window = DefaultQuarantineWindow
	}
	if s.quarantine.Cooldown == 0 {
		s.quarantine.Cooldown = DefaultQuarantineCooldown
	}
	if s.drain == 0 {
		s.drain = DefaultDrainTimeout
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
