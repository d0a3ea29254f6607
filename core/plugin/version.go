package plugin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/kobana/kadu/core/api/routeclass"
	"github.com/kobana/kadu/core/plugin/internal/route"
)

// maxBundleBytes caps the .wasm file a bundle may be (a Go guest is a few
// MiB).
const maxBundleBytes = 256 << 20

// version is one loaded bundle version: its own wazero runtime, compiled
// module, validated manifest and instance pools. It is immutable after
// load except for its counters, pools and reference count.
//
// Lifetime: a call acquires it and releases it when done; Reload retires it
// when replaced; once retired and released by every call (or after the
// drain bound) it is closed, which closes its pools and its runtime.
type version struct {
	// fixed at load
	reg      *Registry
	cfg      BundleConfig // defaulted
	sha      string       // lowercase hex
	id       string       // "name@version"
	man      *compiledManifest
	grant    []route.Pattern
	classes  *routeclass.Table
	rt       wazero.Runtime
	compiled wazero.CompiledModule
	hasInit  bool
	log      *slog.Logger
	loadedAt time.Time
	breaker  breaker
	pools    *pools // nil with per_call isolation

	// refs counts calls in flight; retiredBit set means no new call may
	// acquire. See acquire.
	refs    atomic.Int64
	drained chan struct{} // closed when retired and refs reach zero
	drainMu sync.Once

	closeOnce sync.Once
	closed    atomic.Bool

	calls     atomic.Int64
	apiCalls  atomic.Int64
	instances atomic.Int64 // live modules of this version, describe included

	file fileState // the file it was loaded from, as last checked
	sig  sigState  // its signature file, as verified at load (signature.go)

	memBytes    atomic.Int64 // charged to the budget by its instances
	memEstimate atomic.Int64 // committed memory reserved for a new instance: the most one held when going idle
}

const retiredBit = int64(1) << 62

// acquire registers a call on v; false means v was retired meanwhile and
// the caller must look the name up in the current snapshot again (it was
// published before v was retired, so it no longer points here).
func (v *version) acquire() bool {
	if v.refs.Add(1) >= retiredBit {
		v.release()
		return false
	}
	return true
}

func (v *version) release() {
	if v.refs.Add(-1) == retiredBit {
		v.drainMu.Do(func() { close(v.drained) })
	}
}

// retire stops new calls from acquiring v; drained closes once the calls in
// flight have released it.
func (v *version) retire() {
	if v.refs.Add(retiredBit) == retiredBit {
		v.drainMu.Do(func() { close(v.drained) })
	}
}

func (v *version) inFlight() int64 { return v.refs.Load() &^ retiredBit }

// loadVersion reads, verifies, compiles and describes a bundle and
// validates its manifest. On error nothing it opened stays open.
func (r *Registry) loadVersion(ctx context.Context, cfg BundleConfig) (v *version, err error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	wasm, sum, err := cfg.module()
	if err != nil {
		return nil, err
	}
	if !equalFoldHex(sum, cfg.SHA256) {
		return nil, fmt.Errorf("sha256 mismatch for %s: the file has %s, the config pins %s; "+
			"if the new file is the one you mean to run, update sha256 in the config",
			cfg.Path, sum, strings.ToLower(cfg.SHA256))
	}
	sig, err := verifySignature(cfg, wasm, sum)
	if err != nil {
		return nil, err
	}
	grant := make([]route.Pattern, len(cfg.Routes))
	for i, s := range cfg.Routes {
		grant[i], _ = route.Parse(s) // validated above
	}
	v = &version{
		reg: r, cfg: cfg, sha: sum, grant: grant, classes: routeclass.New(), id: cfg.Name,
		drained: make(chan struct{}), loadedAt: r.set.now(),
		breaker: breaker{policy: r.set.quarantine}, sig: sig,
	}
	v.log = r.set.log.With(slog.String("bundle", cfg.Name))
	man, err := r.compileAndDescribe(ctx, v, wasm)
	if err != nil {
		return nil, err
	}
	if man.m.Name != cfg.Name {
		v.close()
		return nil, fmt.Errorf("manifest: name %q differs from the configured name %q; rename one of them", man.m.Name, cfg.Name)
	}
	if err := sig.checkManifest(SignatureFile(cfg.Path), man.m.Name, man.m.Version); err != nil {
		v.close()
		return nil, err
	}
	v.man = man
	v.id = man.m.Name + "@" + man.m.Version
	v.log = r.set.log.With(slog.String("bundle", man.m.Name), slog.String("version", man.m.Version))
	for _, u := range UnusableRoutes(man.m) {
		v.log.LogAttrs(ctx, slog.LevelWarn, "bundle declares a route none of its operations may call",
			slog.String("route", u.Route), slog.String("route_class", u.Class), slog.String("reason", u.Reason))
	}
	if cfg.Isolation == IsolationPerOrg {
		v.pools = newPools(v, r.budget)
	}
	return v, nil
}

// compileAndDescribe creates v's runtime, compiles wasm, checks the exports
// the ABI requires, and runs kadu_describe once on a throwaway instance —
// unless the describe cache has its answer for this module and
// configuration (describecache.go). On error v's runtime is closed.
func (r *Registry) compileAndDescribe(ctx context.Context, v *version, wasm []byte) (*compiledManifest, error) {
	rc := wazero.NewRuntimeConfig().
		WithCloseOnContextDone(true). // without it a looping guest cannot be stopped
		WithMemoryLimitPages(uint32(v.cfg.Limits.MemoryMiB) * 16).
		WithCompilationCache(r.cache)
	v.rt = wazero.NewRuntimeWithConfig(ctx, rc)
	r.runtimes.Add(1)
	fail := func(err error) (*compiledManifest, error) {
		v.close()
		return nil, err
	}
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, v.rt); err != nil {
		return fail(fmt.Errorf("instantiating WASI: %w", err))
	}
	if err := instantiateHost(ctx, v.rt); err != nil {
		return fail(err)
	}
	compiled, err := v.rt.CompileModule(ctx, wasm)
	if err != nil {
		return fail(fmt.Errorf("compiling %s: %w", v.cfg.Path, err))
	}
	v.compiled = compiled
	if err := checkExports(compiled); err != nil {
		return fail(err)
	}
	_, v.hasInit = compiled.ExportedFunctions()[exportInit]
	if e, ok := r.describes.get(v.sha, v.cfg); ok {
		if man, err := parseManifest(e.Manifest, v.grant); err == nil {
			v.memEstimate.Store(e.Memory)
			return man, nil
		}
		// Refused now (a narrower grant, a stricter host): describe again,
		// so the error is the one the bundle's own answer gets.
	}
	raw, err := v.describe(ctx)
	if err != nil {
		return fail(err)
	}
	man, err := parseManifest(raw, v.grant)
	if err != nil {
		return fail(err)
	}
	if err := r.describes.put(v.sha, v.cfg, describeEntry{Manifest: raw, Memory: v.memEstimate.Load()}); err != nil {
		v.log.LogAttrs(ctx, slog.LevelWarn, "the next start will describe the bundle again", slog.Any("error", err))
	}
	return man, nil
}

// checkExports refuses modules that are not kadu v1 reactors, and imports
// from anywhere but WASI and the kadu host module.
func checkExports(c wazero.CompiledModule) error {
	fns := c.ExportedFunctions()
	if _, ok := fns[exportMarker]; !ok {
		return fmt.Errorf("not a kadu v1 bundle: it does not export %s (build it with a kadu v1 SDK)", exportMarker)
	}
	if _, ok := fns[exportStart]; ok {
		return errors.New("the module is a WASI command (it exports _start); build it as a reactor " +
			"(Go: -buildmode=c-shared; C: -mexec-model=reactor)")
	}
	var errs []error
	for _, name := range []string{exportDescribe, exportHandle} {
		if _, ok := fns[name]; !ok {
			errs = append(errs, fmt.Errorf("the module does not export %s", name))
		}
	}
	if _, ok := c.ExportedMemories()[exportMemory]; !ok {
		errs = append(errs, errors.New("the module does not export its memory as \"memory\""))
	}
	for _, f := range c.ImportedFunctions() {
		mod, name, _ := f.Import()
		if mod != hostModule && mod != wasi_snapshot_preview1.ModuleName {
			errs = append(errs, fmt.Errorf("the module imports %s.%s; only %q and %q are provided",
				mod, name, hostModule, wasi_snapshot_preview1.ModuleName))
		}
	}
	return errors.Join(errs...)
}

// describe runs kadu_describe with input {} on a fresh instance that is
// closed afterwards (it served no organisation, and never will).
func (v *version) describe(ctx context.Context) ([]byte, error) {
	inst, err := v.instantiate(ctx, "")
	if err != nil {
		return nil, fmt.Errorf("instantiating the bundle: %w", err)
	}
	defer inst.close()
	fn := inst.mod.ExportedFunction(exportDescribe)
	out, err := inst.call(ctx, fn, &invocation{v: v, input: []byte("{}")})
	if err != nil {
		return nil, fmt.Errorf("kadu_describe: %w", err)
	}
	// What a fresh instance holds after one entry: reserved for every new
	// instance of the version, so it waits for room before it starts.
	v.memEstimate.Store(inst.memSize())
	if out.status != 0 {
		return nil, fmt.Errorf("kadu_describe answered status %d: %s", out.status, truncate(out.output, 512))
	}
	return out.output, nil
}

func truncate(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "…"
}

// module is the bundle's module and its sha256: Wasm, or the file at Path.
func (b BundleConfig) module() ([]byte, string, error) {
	if b.Wasm == nil {
		return readBundle(b.Path)
	}
	if len(b.Wasm) > maxBundleBytes {
		return nil, "", fmt.Errorf("bundle %s is over %d MiB", b.Path, maxBundleBytes>>20)
	}
	sum := sha256.Sum256(b.Wasm)
	return b.Wasm, hex.EncodeToString(sum[:]), nil
}

func readBundle(path string) ([]byte, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, "", fmt.Errorf("reading bundle: %w", err)
	}
	defer f.Close()
	wasm, err := io.ReadAll(io.LimitReader(f, maxBundleBytes+1))
	if err != nil {
		return nil, "", fmt.Errorf("reading bundle %s: %w", path, err)
	}
	if len(wasm) > maxBundleBytes {
		return nil, "", fmt.Errorf("bundle %s is over %d MiB", path, maxBundleBytes>>20)
	}
	sum := sha256.Sum256(wasm)
	return wasm, hex.EncodeToString(sum[:]), nil
}

// allowed reports whether an api() request is within the manifest's routes
// and the operator's grant: both must match it.
func (v *version) allowed(method, target string) bool {
	segs, err := route.Segments(target)
	if err != nil {
		return false
	}
	match := func(r route.Pattern) bool { return r.Matches(method, segs) }
	return slices.ContainsFunc(v.man.routes, match) && slices.ContainsFunc(v.grant, match)
}

// close closes v's pools and runtime, which closes every module it
// instantiated, including any still running past the drain bound.
func (v *version) close() {
	v.closeOnce.Do(func() {
		v.closed.Store(true)
		if v.pools != nil {
			v.pools.close()
			// Background instantiations (a pool growing, a swap's warm-up)
			// run in v.rt, and closing a wazero runtime under a module
			// being instantiated races inside wazero. With the pools closed
			// they stop after the one under way, which the bundle's timeout
			// bounds; past twice that, close anyway.
			v.pools.waitBackground(2 * v.cfg.Limits.Timeout)
		}
		if v.rt != nil {
			_ = v.rt.Close(context.Background())
			v.reg.runtimes.Add(-1)
		}
	})
}
