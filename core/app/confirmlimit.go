package app

import (
	"time"

	"github.com/kobana/kadu/core/config"
	"github.com/kobana/kadu/core/plugin/bundleconf"
)

// confirmRunMargin is what a confirmed call may take beyond its bundle
// call: recording its outcome in the store, and the clocks of replicas
// disagreeing a little (as idempotencyMargin).
const confirmRunMargin = 30 * time.Second

// confirmRunLimit is confirm.Options.RunLimit: the longest a confirmed
// call can take from the claim of its confirmation to the record of its
// outcome. The run ignores the client going away (context.WithoutCancel
// in core/confirm), so http.write_timeout does not bound it; the bundle
// call does (core/plugin): up to plugins.memory_wait for room in the
// memory budget, then _initialize of a fresh instance and kadu_handle,
// each under the bundle's timeout, api() round trips included. The
// longest timeout of any bundle counts, first-party ones at their default
// included. A claim older than this with no outcome was left by a replica
// that stopped mid-run, and is answered as interrupted (never run again).
//
// It is read once at start: a bundle timeout raised by a reload counts
// from the next start.
func confirmRunLimit(cfg *config.Config) time.Duration {
	timeout := bundleconf.DefaultTimeout
	for _, b := range cfg.Plugins.Bundles {
		if b.Enabled {
			timeout = max(timeout, b.WithDefaults().Timeout)
		}
	}
	return max(cfg.Plugins.MemoryWait, 0) + 2*timeout + confirmRunMargin
}
