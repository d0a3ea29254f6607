// Package plugin runs tool groups as WebAssembly bundles under wazero: the
// host side of the "kadu v1" ABI (sdk/ABI.md).
//
// It owns: verifying bundles (sha256 pin, signature under the trusted keys
// — the format is core/plugin/bundlesig's —, exports, manifest, granted
// routes, x-mcp-header rules, schemas), the kadu v1 host functions, one
// wazero runtime per bundle version, instance pools per (bundle version,
// organisation) under a global memory budget in bytes (see budget and
// linearMemory), faults and quarantine, checks of the loaded files,
// sealing a bundle's input-required state into requestState, bounding
// each api() call by its route's class (core/api/routeclass: a read-only
// tool, resource, prompt or completion reads; only a destructive, hence
// confirmed, tool reaches a destructive route), and the
// Registry that serves the loaded bundles as an mcp.Catalog and swaps
// bundle versions atomically.
//
// It must not: know MCP wire formats (core/mcp calls it through Catalog),
// open the database (guests reach data only through the api host function,
// which dispatches into core/api as the caller through Dispatcher), or give
// a guest a token, a secret it was not configured with, or another
// organisation's instance.
//
// Wiring, once per process (core/app):
//
//	reg, err := plugin.New(ctx, &plugin.Options{
//		Bundles: cfg.Bundles, CacheDir: cfg.CacheDir, Dispatcher: apiDispatcher,
//		SealKey: key, Logger: log, ReloadConfig: loadBundleConfig})
//	engine, err := mcp.New(mcp.Options{Catalog: reg, …}) // *Registry is an mcp.Catalog
//	admin.Handle("/admin/plugins", reg.AdminHandler())   // and /admin/plugins/reload
//	w, err := plugin.NewWatcher(append(bundlePaths, configPath))
//	go w.Run(ctx, reloadFromConfig) // which calls w.SetPaths with the paths it read
//	// on SIGHUP: reloadFromConfig()
//	defer reg.Close(shutdownCtx)
//
// A call takes this path: the Catalog method acquires the bundle version
// serving the name in the current snapshot (so it finishes on that version
// whatever Reload does), validates the arguments, checks the quarantine,
// takes an instance of the caller's organisation from the version's pool
// (or instantiates one), runs kadu_handle under Limits.Timeout, decodes
// the result, and gives the instance back — or discards it on any fault.
//
// Errors come in three tiers: tool errors are results with IsError (the
// model can act on them); a bundle's protocol errors (status 1) are
// *mcp.Error; faults (trap, timeout, memory, oversized or invalid output)
// are *FaultError, which the engine answers as -32603 and logs.
//
// RATIONALE.md records why it is built this way.
package plugin
