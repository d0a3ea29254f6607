// Package bundleconf is the one home of what an operator configures for
// WebAssembly bundles: the bundle name rule, the isolation modes, the
// per-bundle limits with their defaults, caps and validation, and the
// defaults of the pool every bundle shares (memory budget, instances,
// quarantine).
//
// It owns: those rules and numbers, and the key names they have under
// plugins.* and plugins.bundles.<name>.* in the configuration (the koanf
// tags of Limits), so that an error found by the registry names the key an
// operator writes.
//
// It must not: read configuration (core/config decodes it into these
// types), load or run bundles (core/plugin does), or import either of them:
// both import it, core/config to decode and validate, core/plugin to
// enforce.
package bundleconf
