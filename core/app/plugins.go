package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"os/signal"
	"slices"
	"sync"
	"syscall"

	"github.com/kobana/kadu/core/config"
	"github.com/kobana/kadu/core/plugin"
	"github.com/kobana/kadu/plugins/embedded"
)

// bundleConfigs maps the enabled bundles of cfg to the registry's
// configuration, in name order. A first-party bundle without a path is the
// copy built into the binary (plugins/embedded); a binary built without it
// is an error naming the key and the two ways out.
func bundleConfigs(cfg *config.Config) ([]plugin.BundleConfig, error) {
	enabled := cfg.EnabledBundles()
	out := make([]plugin.BundleConfig, 0, len(enabled))
	keys, err := cfg.Plugins.Keyring()
	if err != nil {
		return nil, err
	}
	trust := plugin.Trust{Keys: keys, Require: cfg.Plugins.RequireSignature}
	var errs []error
	modules := embeddedModules(enabled)
	for _, name := range slices.Sorted(maps.Keys(enabled)) {
		b := enabled[name]
		bc := plugin.BundleConfig{
			Name:      name,
			Path:      b.Path,
			SHA256:    b.SHA256,
			Routes:    b.Routes,
			Isolation: b.Isolation,
			Limits:    plugin.Limits{Limits: b.Limits, IdleTTL: cfg.Plugins.IdleTTL},
			Config:    b.SettingsMap(),
			Required:  b.Required,
			Audience:  plugin.Audience{Organisations: b.Organisations, Plans: b.Plans},
			Trust:     trust,
		}
		if b.Path == "" && config.IsFirstParty(name) {
			if bc.Wasm = modules[name]; bc.Wasm == nil {
				errs = append(errs, fmt.Errorf("plugins.bundles.%s.path: empty, and this binary was built without the %s bundle "+
					"(plain go build or go test): build it with `go tool task build`, or set the path to a .wasm file "+
					"(`go tool task build:plugins` writes bin/plugins/%s.wasm)", name, name, name))
				continue
			}
			bc.Path = embeddedPath(name)
			// Built in and pinned: exempt from signatures, and so not
			// reloaded when plugins.trusted_keys changes.
			bc.Trust = plugin.Trust{}
		}
		out = append(out, bc)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// embeddedModules reads the modules built into the binary of the enabled
// first-party bundles without a path, at once: each read copies a few MiB
// out of the binary, and on the way to serving nothing else can run yet.
// A bundle this binary was built without maps to nil.
func embeddedModules(enabled map[string]config.Bundle) map[string][]byte {
	out := make(map[string][]byte, len(enabled))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for name, b := range enabled {
		if b.Path != "" || !config.IsFirstParty(name) {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			wasm := embedded.Bundle(name)
			mu.Lock()
			defer mu.Unlock()
			out[name] = wasm
		}()
	}
	wg.Wait()
	return out
}

// embeddedPath names a bundle built into the binary where a path would
// appear (GET /admin/plugins, logs).
func embeddedPath(name string) string { return "embedded:" + name + ".wasm" }

// openPlugins loads the configured bundles. A required bundle that does
// not load stops start-up with an error naming it and its file: an
// operator sees it at once, rather than a server missing tools. Any other
// bundle that does not load is skipped, logged and listed as failed in
// GET /admin/plugins, and the others serve.
func (a *App) openPlugins(ctx context.Context, opts Options) (*plugin.Registry, error) {
	pl := a.cfg.Plugins
	bundles, err := bundleConfigs(a.cfg)
	if err != nil {
		return nil, err
	}
	reg, err := plugin.New(ctx, &plugin.Options{
		Bundles:              bundles,
		CacheDir:             a.cfg.PluginCacheDir(),
		DescribeCache:        true,
		Dispatcher:           traceDispatch(a.dispatch, a.tracing),
		SealKey:              a.backend.keys.pluginState,
		GlobalInstanceBudget: pl.MaxInstances,
		MemoryBudget:         int64(pl.MemoryBudgetMiB) << 20,
		OrgSharePercent:      pl.OrgSharePercent,
		MemoryWait:           pl.MemoryWait,
		DrainTimeout:         pl.DrainTimeout,
		Quarantine: plugin.QuarantinePolicy{
			Faults: pl.Quarantine.Faults, Window: pl.Quarantine.Window, Cooldown: pl.Quarantine.Cooldown,
		},
		ReloadConfig: func(ctx context.Context) ([]plugin.BundleConfig, error) {
			cfg, err := a.reloadConfig(ctx, opts, "POST /admin/plugins/reload")
			if err != nil {
				return nil, err
			}
			return bundleConfigs(cfg)
		},
		Logger:         a.log,
		OnEvent:        a.auditBundleEvent,
		Metrics:        a.metrics,
		TracerProvider: a.tracing.Provider(),
		PlanOf:         planName(a.backend.plans),
	})
	if err != nil {
		return nil, fmt.Errorf("plugins: %w", err)
	}
	return reg, nil
}

// reloadConfig reads the configuration again when the caller of New said
// how (kadu serve does), else keeps the one the App started with: bundle
// files may still have changed. Either way the reload is recorded in the
// audit trail, with what triggered it.
func (a *App) reloadConfig(ctx context.Context, opts Options, trigger string) (*config.Config, error) {
	if opts.ReloadConfig == nil {
		a.auditConfigReload(ctx, trigger, nil)
		return a.cfg, nil
	}
	cfg, err := opts.ReloadConfig()
	if err != nil {
		err = fmt.Errorf("reading the configuration again: %w", err)
	}
	a.auditConfigReload(ctx, trigger, err)
	if err != nil {
		return nil, err
	}
	a.rewatch(cfg, opts)
	return cfg, nil
}

// rewatch makes the watcher, if any, watch the files cfg names. A reload
// calls it after reading the configuration and before reading the bundle
// files, so no change in between is missed: a bundle moved to a new file
// and refused for want of its .sig loads when the .sig is copied in, even
// while that reload is still running.
func (a *App) rewatch(cfg *config.Config, opts Options) {
	w := a.watcher.Load()
	if w == nil {
		return
	}
	if err := w.SetPaths(watchPaths(cfg, opts)); err != nil {
		a.log.Warn("not watching every bundle file; reload with SIGHUP or POST /admin/plugins/reload after changing it", slog.Any("error", err))
	}
}

// watchPaths are the files a change to which reloads the bundles: the
// configuration file and, for each enabled bundle with a file, the file
// and its signature (a bundle re-signed, or its .sig removed, is verified
// again at once).
func watchPaths(cfg *config.Config, opts Options) []string {
	var paths []string
	if opts.ConfigPath != "" {
		paths = append(paths, opts.ConfigPath)
	}
	for _, b := range cfg.EnabledBundles() {
		if b.Path != "" { // empty: built into the binary, nothing to watch
			paths = append(paths, b.Path, plugin.SignatureFile(b.Path))
		}
	}
	return paths
}

// watchPlugins reloads the bundles on SIGHUP and, when plugins.watch is on,
// when the configuration file or a bundle file changes, until ctx ends. A
// reload that fails leaves the loaded versions serving and is logged.
func (a *App) watchPlugins(ctx context.Context, opts Options) {
	var mu sync.Mutex // one reload at a time, whatever triggered it
	reload := func(trigger string) {
		mu.Lock()
		defer mu.Unlock()
		cfg, err := a.reloadConfig(ctx, opts, trigger)
		var bundles []plugin.BundleConfig
		if err == nil {
			bundles, err = bundleConfigs(cfg)
		}
		if err == nil {
			err = a.plugins.Reload(ctx, bundles)
		}
		if err != nil {
			a.log.Error("plugin reload failed; the loaded bundles keep serving", slog.String("trigger", trigger), slog.Any("error", err))
			return
		}
		a.log.Info("plugins reloaded", slog.String("trigger", trigger))
	}

	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		defer signal.Stop(hup)
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				reload("SIGHUP")
			}
		}
	}()

	if !a.cfg.Plugins.Watch {
		return
	}
	// Started even with nothing to watch yet: a reload may add a bundle.
	w, err := plugin.NewWatcher(nil)
	if err != nil {
		a.log.Warn("not watching bundle files; reload with SIGHUP or POST /admin/plugins/reload", slog.Any("error", err))
		return
	}
	a.watcher.Store(w)
	// A directory that cannot be watched (not there yet) is logged; the
	// other files are watched, and each reload tries it again.
	a.rewatch(a.cfg, opts)
	go func() {
		// Run returns only when ctx ends; it cannot fail once watching.
		_ = w.Run(ctx, func() { reload("file change") })
	}()
}
