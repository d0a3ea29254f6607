package plugin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"go.opentelemetry.io/otel/trace"

	"github.com/kobana/kadu/core/mcp"
	"github.com/kobana/kadu/core/plugin/internal/stateseal"
)

// sweepInterval is how often idle instances past their TTL are closed.
const sweepInterval = 30 * time.Second

// Registry serves the loaded bundles as an mcp.Catalog and swaps bundle
// versions atomically.
//
// A Registry is safe for concurrent use. Calls read an immutable snapshot
// and never wait for Reload. Reload publishes a new version only after it
// has compiled and validated; on error the old version keeps serving and
// nothing Reload opened stays open. A replaced version finishes the calls
// that acquired it; its pools and wazero runtime are closed when they
// return (or after Options.DrainTimeout).
//
// Close closes every runtime the Registry created and its compilation
// cache; later calls return ErrClosed. The zero value is not usable: use
// New.
type Registry struct {
	// fixed at creation
	set        settings
	cache      wazero.CompilationCache
	describes  describeCache // kadu_describe answers, beside cache on disk
	dispatcher Dispatcher
	sealer     *stateseal.Sealer
	budget     *budget
	reloadCfg  func(ctx context.Context) ([]BundleConfig, error)
	tracer     trace.Tracer
	stopSweep  context.CancelFunc
	metrics    Metrics // never nil
	planOf     PlanOf  // nil: plan audiences match nobody
	onEvent    EventFunc

	snap     atomic.Pointer[snapshot] // read without locks by every call
	runtimes atomic.Int64             // open wazero runtimes, for tests and status
	drains   sync.WaitGroup           // retired versions still draining
	forced   chan struct{}            // closed when Close gives up waiting for drains
	sweeper  sync.WaitGroup           // the idle sweep loop

	// failures are the bundles whose last load failed, by name; replaced
	// whole by each Reload, read by Status without waiting for one.
	failures atomic.Pointer[map[string]failure]

	mu     sync.Mutex // serialises Reload and Close; guards closed
	closed bool

	// events are the bundle events Reload has published and not yet
	// handed to onEvent: the hook runs after r.mu is released, so a slow
	// hook (an audit write to a stalled database) holds up neither Close
	// nor the next swap's publication.
	events eventQueue
}

// failure is a bundle whose last load failed: a new bundle (not published)
// or a replacement (the old version keeps serving).
type failure struct {
	cfg BundleConfig
	err error
	at  time.Time
}

var _ mcp.Catalog = (*Registry)(nil)

// New creates a Registry and loads opts.Bundles. A bundle that does not
// load is skipped (logged, and listed as failed by Status) unless it is
// Required: then New closes what it opened and returns an error naming
// each required bundle that failed, its file and what to do.
func New(ctx context.Context, opts *Options) (*Registry, error) {
	if opts == nil {
		return nil, errors.New("plugin options: required (Dispatcher at least)")
	}
	if err := opts.validate(); err != nil {
		return nil, err
	}
	sealer, err := stateseal.New(opts.SealKey)
	if err != nil {
		return nil, err
	}
	cache := wazero.NewCompilationCache()
	if opts.CacheDir != "" {
		if cache, err = wazero.NewCompilationCacheWithDir(opts.CacheDir); err != nil {
			return nil, fmt.Errorf("plugin options: CacheDir %q: %w", opts.CacheDir, err)
		}
	}
	set := opts.settings()
	var describes describeCache
	if opts.DescribeCache {
		describes = newDescribeCache(opts.CacheDir)
	}
	r := &Registry{
		set: set, cache: cache, describes: describes, dispatcher: opts.Dispatcher, sealer: sealer,
		budget: newBudget(set), reloadCfg: opts.ReloadConfig, forced: make(chan struct{}),
		metrics: metricsOrNone(opts.Metrics),
		tracer:  tracerOf(opts.TracerProvider),
		planOf:  opts.PlanOf,
	}
	r.onEvent = opts.OnEvent
	r.failures.Store(&map[string]failure{})
	r.snap.Store(newSnapshot().seal())
	if len(opts.Bundles) > 0 {
		if err := r.Reload(ctx, opts.Bundles); err != nil {
			if err := r.requiredLoaded(opts.Bundles, err); err != nil {
				_ = r.Close(ctx)
				return nil, err
			}
		}
	}
	sweepCtx, stop := context.WithCancel(context.Background())
	r.stopSweep = stop
	r.sweeper.Add(1)
	go r.sweepLoop(sweepCtx)
	return r, nil
}

// Reload makes bundles the loaded set. New and changed bundles are
// compiled and validated off to the side; a bundle whose configuration is
// unchanged keeps its loaded version. Then one snapshot is published, and
// versions no longer in it are retired: their calls finish on them, then
// they are closed.
//
// A bundle that fails never replaces a working version: the old one keeps
// serving (a new bundle is simply not published). The error joins one
// error per failed bundle, each naming it. Reload calls are serialised.
func (r *Registry) Reload(ctx context.Context, bundles []BundleConfig) error {
	err := r.reload(ctx, bundles)
	// After the lock: the events describe a snapshot already serving, and
	// the hook may take its time without holding up Close.
	r.events.deliver(r.onEvent)
	return err
}

// reload is Reload under r.mu, up to the publication of the new snapshot;
// it queues the events for Reload to deliver.
func (r *Registry) reload(ctx context.Context, bundles []BundleConfig) (err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return ErrClosed
	}
	// Collected in the order they happen and queued when the snapshot is
	// published, so that "loaded" or "swapped" is never told of a version
	// calls cannot reach yet.
	var events []Event
	defer func() {
		if r.onEvent != nil {
			r.events.push(ctx, events)
		}
	}()
	defer func() { r.metrics.BundleReload(err != nil) }()
	old := r.snap.Load()
	type candidate struct {
		v, prev *version
		fresh   bool
		pos     int
	}
	var (
		cands    []candidate
		errs     []error
		seen     = map[string]bool{}
		failures = map[string]failure{}
	)
	fail := func(cfg BundleConfig, err error) {
		errs = append(errs, fmt.Errorf("bundle %q: %w", cfg.Name, err))
		failures[cfg.Name] = failure{cfg: cfg, err: err, at: r.set.now()}
		r.set.log.LogAttrs(ctx, slog.LevelError, "bundle not loaded",
			slog.String("bundle", cfg.Name), slog.String("path", cfg.Path), slog.Any("error", err))
		events = append(events, Event{Kind: EventRefused, Bundle: cfg.Name, Reason: err.Error()})
	}
	// New and changed bundles load at once, each on its own runtime: a
	// load is CPU work in wazero (decoding, validating, reading compiled
	// code from the cache, an instance for kadu_describe), so a start with
	// several bundles is bound by the cores, not by the slowest bundle
	// times their number. The outcome is then read in configuration order,
	// so errors, logs and the snapshot are the same as loading one by one.
	loads := r.loadAll(ctx, bundles, old)
	for i, cfg := range bundles {
		cfg = cfg.withDefaults()
		if seen[cfg.Name] {
			err := errors.New("configured twice; give each bundle one entry")
			errs = append(errs, fmt.Errorf("bundle %q: %w", cfg.Name, err))
			events = append(events, Event{Kind: EventRefused, Bundle: cfg.Name, Reason: err.Error()})
			continue
		}
		seen[cfg.Name] = true
		prev := old.byName[cfg.Name]
		if prev != nil && !loads[i].tried { // unchanged: loadAll left it alone
			if err := r.checkFile(ctx, prev); err != nil {
				errs = append(errs, fmt.Errorf("bundle %q: %w", cfg.Name, err))
			}
			cands = append(cands, candidate{v: prev, prev: prev, pos: i})
			continue
		}
		v, err := loads[i].v, loads[i].err
		if err != nil {
			fail(cfg, err)
			if prev != nil {
				cands = append(cands, candidate{v: prev, prev: prev, pos: i})
			}
			continue
		}
		cands = append(cands, candidate{v: v, prev: prev, fresh: true, pos: i})
	}
	// Versions already serving go in first, so a new bundle cannot push a
	// working one out by claiming its names.
	next := newSnapshot()
	for _, c := range cands {
		if !c.fresh {
			if err := next.add(c.v, c.pos); err != nil {
				fail(c.v.cfg, err) // cannot happen: they were published together
			}
		}
	}
	for _, c := range cands {
		if !c.fresh {
			continue
		}
		if err := next.add(c.v, c.pos); err != nil {
			c.v.close()
			fail(c.v.cfg, err)
			if c.prev != nil {
				if err := next.add(c.prev, c.pos); err != nil {
					fail(c.prev.cfg, err)
				}
			}
			continue
		}
		r.set.log.LogAttrs(ctx, slog.LevelInfo, "bundle loaded", slog.String("bundle", c.v.id),
			slog.String("path", c.v.cfg.Path), slog.String("sha256", c.v.sha), slog.String("signed_by", c.v.signedBy()))
		if c.prev != nil {
			events = append(events, versionEvent(EventSwapped, c.v))
		} else {
			events = append(events, versionEvent(EventLoaded, c.v))
		}
	}
	next.setAudiences(bundles)
	r.snap.Store(next.seal())
	r.failures.Store(&failures)
	for _, v := range old.versions {
		if !next.has(v) {
			if nv := next.byName[v.cfg.Name]; nv != nil && nv.pools != nil && v.pools != nil {
				nv.pools.warm(v.pools.orgs()) // a hot swap: see pools.warm
			}
			r.retire(v)
		}
	}
	return errors.Join(errs...)
}

// loaded is the outcome of loading one bundle; tried is false when
// loadAll kept the version serving it (see version.unchanged).
type loaded struct {
	v     *version
	err   error
	tried bool
}

// loadAll loads, in parallel on up to GOMAXPROCS goroutines, the bundles
// Reload will need a new version of: the first entry of each name whose
// configuration differs from the version serving it in old. The result is
// indexed like bundles; other entries are zero.
func (r *Registry) loadAll(ctx context.Context, bundles []BundleConfig, old *snapshot) []loaded {
	out := make([]loaded, len(bundles))
	var todo []int
	seen := map[string]bool{}
	for i, cfg := range bundles {
		cfg = cfg.withDefaults()
		if seen[cfg.Name] {
			continue
		}
		seen[cfg.Name] = true
		if prev := old.byName[cfg.Name]; prev != nil && prev.unchanged(cfg) {
			continue
		}
		todo = append(todo, i)
		out[i].tried = true
	}
	if len(todo) == 1 {
		i := todo[0]
		out[i].v, out[i].err = r.loadVersion(ctx, bundles[i])
		return out
	}
	sem := make(chan struct{}, max(1, min(runtime.GOMAXPROCS(0), len(todo))))
	var wg sync.WaitGroup
	for _, i := range todo {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			out[i].v, out[i].err = r.loadVersion(ctx, bundles[i])
		}()
	}
	wg.Wait()
	return out
}

// retire stops new calls on v and closes it once its calls have returned,
// or after the drain bound, whichever comes first.
func (r *Registry) retire(v *version) {
	v.retire()
	r.drains.Add(1)
	go func() {
		defer r.drains.Done()
		t := time.NewTimer(r.set.drain)
		defer t.Stop()
		select {
		case <-v.drained:
		case <-r.forced:
		case <-t.C:
			r.set.log.LogAttrs(context.Background(), slog.LevelWarn, "closing a replaced bundle with calls in flight",
				slog.String("bundle", v.id), slog.Int64("in_flight", v.inFlight()), slog.Duration("drain_timeout", r.set.drain))
		}
		v.close()
	}()
}

// Close stops serving, retires every version and waits, until ctx ends,
// for their calls to return; then closes every runtime and the compilation
// cache. Calls after Close return ErrClosed.
func (r *Registry) Close(ctx context.Context) error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	old := r.snap.Load()
	closed := newSnapshot().seal()
	closed.closed = true
	r.snap.Store(closed)
	for _, v := range old.versions {
		r.retire(v)
	}
	r.mu.Unlock()
	if r.stopSweep != nil {
		r.stopSweep()
		r.sweeper.Wait()
	}
	done := make(chan struct{})
	go func() {
		r.drains.Wait()
		close(done)
	}()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		close(r.forced)
		for _, v := range old.versions {
			v.close() // under the calls still running: they fail
		}
		r.drains.Wait() // quick now: every drain was told to stop
		err = fmt.Errorf("closing plugin registry: %w", ctx.Err())
	}
	return errors.Join(err, r.cache.Close(context.Background()))
}

// sweepLoop closes idle instances past their TTL, and checks the files of
// the loaded versions, until ctx ends.
func (r *Registry) sweepLoop(ctx context.Context) {
	defer r.sweeper.Done()
	t := time.NewTicker(sweepInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r.sweep(r.set.now())
		}
	}
}

func (r *Registry) sweep(now time.Time) {
	for _, v := range r.snap.Load().versions {
		if v.pools != nil {
			v.pools.sweep(now)
		}
		_ = r.checkFile(context.Background(), v) // reported by checkFile; here for when nothing reloads
	}
}

// acquire finds, in the current snapshot, the version lookup names and
// registers the call on it. v is nil when lookup finds nothing. The caller
// must release v.
func (r *Registry) acquire(lookup func(s *snapshot) *version) (*version, error) {
	// A version retired between the snapshot load and acquire was replaced
	// by a snapshot published before it was retired: loading again finds
	// the replacement. Each retry means a Reload happened meanwhile.
	for range 16 {
		s := r.snap.Load()
		if s.closed {
			return nil, ErrClosed
		}
		v := lookup(s)
		if v == nil || v.acquire() {
			return v, nil
		}
	}
	return nil, errors.New("bundle was replaced 16 times during one call; try again")
}

// BundleStatus describes one configured bundle, for operators.
type BundleStatus struct {
	Name             string     `json:"name"`
	Version          string     `json:"version,omitempty"`
	SHA256           string     `json:"sha256"`
	Path             string     `json:"path"`
	State            string     `json:"state"` // "loaded", "quarantined" or "failed"
	Required         bool       `json:"required"`
	LastError        string     `json:"last_error,omitempty"`
	FileError        string     `json:"file_error,omitempty"` // the loaded version's file is missing or changed
	QuarantinedUntil *time.Time `json:"quarantined_until,omitempty"`
	LoadedAt         *time.Time `json:"loaded_at,omitempty"`
	Isolation        string     `json:"isolation"`
	Organisations    []string   `json:"organisations"`  // who sees it (Audience); both null: everyone
	Plans            []string   `json:"plans"`          // null: none by plan
	Pools            int        `json:"pools"`          // organisations with a pool
	IdleInstances    int        `json:"idle_instances"` // pooled, ready
	Instances        int64      `json:"instances"`      // live, busy ones included
	MemoryBytes      int64      `json:"memory_bytes"`   // charged to the memory budget by its instances
	InFlight         int64      `json:"in_flight"`
	Calls            int64      `json:"calls"`
	Faults           int64      `json:"faults"`
	APICalls         int64      `json:"api_calls"`

	// Signature is "signed", "unsigned" or "built_in" (exempt) for a
	// loaded version; SignedBy names the trusted key (plugins.trusted_keys)
	// that signed it, SignerKeyID is that key's minisign key ID.
	Signature   string `json:"signature,omitempty"`
	SignedBy    string `json:"signed_by,omitempty"`
	SignerKeyID string `json:"signer_key_id,omitempty"`
}

// Bundle states of BundleStatus.
const (
	StateLoaded      = "loaded"
	StateQuarantined = "quarantined"
	StateFailed      = "failed"
)

// Status describes every published bundle in configuration order, then
// every bundle whose last load failed and that has no version serving.
func (r *Registry) Status() []BundleStatus {
	failures := *r.failures.Load()
	now := r.set.now()
	var out []BundleStatus
	snap := r.snap.Load()
	for _, v := range snap.versions {
		faults, until := v.breaker.state(now)
		loaded := v.loadedAt
		st := BundleStatus{
			Name: v.cfg.Name, Version: v.man.m.Version, SHA256: v.sha, Path: v.cfg.Path, State: StateLoaded,
			Required: v.cfg.Required, LoadedAt: &loaded, Isolation: v.cfg.Isolation, Instances: v.instances.Load(), InFlight: v.inFlight(),
			Calls: v.calls.Load(), Faults: faults, APICalls: v.apiCalls.Load(), MemoryBytes: v.memBytes.Load(),
		}
		aud := snap.audienceOf(v)
		st.Organisations, st.Plans = aud.Organisations, aud.Plans
		if !until.IsZero() {
			st.State, st.QuarantinedUntil = StateQuarantined, &until
		}
		if v.pools != nil {
			st.Pools, st.IdleInstances = v.pools.stats()
		}
		if f, ok := failures[v.cfg.Name]; ok {
			st.LastError = f.err.Error()
		}
		st.FileError = v.fileError()
		v.signatureStatus(&st)
		out = append(out, st)
	}
	var failed []BundleStatus
	for name, f := range failures {
		if slices.ContainsFunc(out, func(s BundleStatus) bool { return s.Name == name }) {
			continue
		}
		failed = append(failed, BundleStatus{Name: name, SHA256: f.cfg.SHA256, Path: f.cfg.Path, State: StateFailed, Required: f.cfg.Required,
			LastError: f.err.Error(), Isolation: f.cfg.Isolation,
			Organisations: f.cfg.Audience.Organisations, Plans: f.cfg.Audience.Plans})
	}
	slices.SortFunc(failed, func(a, b BundleStatus) int { return strings.Compare(a.Name, b.Name) })
	return append(out, failed...)
}
