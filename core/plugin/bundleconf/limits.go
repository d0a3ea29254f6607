package bundleconf

import (
	"cmp"
	"errors"
	"fmt"
	"regexp"
	"time"
)

// Isolation modes (plugins.bundles.<name>.isolation).
const (
	// IsolationPerOrg pools instances per (bundle version, organisation):
	// an instance serves many calls, all of one organisation. The default.
	IsolationPerOrg = "per_org"
	// IsolationPerCall gives every call a fresh instance, closed after it.
	IsolationPerCall = "per_call"
)

// Isolations are the allowed isolation modes, in the order messages list
// them.
var Isolations = []string{IsolationPerOrg, IsolationPerCall}

// Per-bundle limits applied when a field of Limits is 0.
const (
	DefaultMemoryMiB      = 64
	DefaultTimeout        = 10 * time.Second
	DefaultMaxOutputBytes = 1 << 20
	DefaultPoolSize       = 4
	DefaultAPICalls       = 16
)

// Caps on per-bundle limits.
const (
	// MaxMemoryMiB is what a WebAssembly instance can address: 65536 pages
	// of 64 KiB.
	MaxMemoryMiB = 4096
	// MaxOutputBytes bounds max_output_bytes: a result is held in memory
	// whole, and answered in one response.
	MaxOutputBytes = 64 << 20
)

// InstanceOverhead is what the memory budget charges an instance besides
// its linear memory: wazero's bookkeeping for one module (function and
// table instances, globals, the call stack). Measured for the first-party
// Go bundles, the heaviest the project ships: see core/plugin/RATIONALE.md.
// One organisation's share of the budget must hold an instance of every
// enabled bundle at its memory_mib plus this.
const InstanceOverhead = 1 << 20

// Defaults of the pool every bundle shares (plugins.*).
const (
	DefaultMemoryBudgetMiB    = 512
	DefaultOrgSharePercent    = 25
	DefaultMaxInstances       = 256
	DefaultMemoryWait         = 5 * time.Second
	DefaultIdleTTL            = 5 * time.Minute
	DefaultDrainTimeout       = 30 * time.Second
	DefaultQuarantineFaults   = 5
	DefaultQuarantineWindow   = time.Minute
	DefaultQuarantineCooldown = 30 * time.Second
)

// NameRule says in words what NameRE accepts.
const NameRule = `a lower-case letter, then up to 31 of a-z, 0-9, "_"`

// NameRE is the rule for bundle names: the key under plugins.bundles, and
// the name the bundle's manifest must declare.
var NameRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)

// CheckName reports whether name is a valid bundle name.
func CheckName(name string) error {
	if !NameRE.MatchString(name) {
		return fmt.Errorf("%q is not a valid bundle name (want %s)", name, NameRule)
	}
	return nil
}

// Key is the configuration key of field (a koanf tag of Limits, or
// "sha256", "isolation", …) of bundle name: plugins.bundles.<name>.<field>.
func Key(name, field string) string { return "plugins.bundles." + name + "." + field }

// Limits bound a bundle's instances and calls, as configured under
// plugins.bundles.<name>. A zero field takes its default (WithDefaults).
type Limits struct {
	// MemoryMiB caps an instance's linear memory. Default 64, at most 4096.
	MemoryMiB int `koanf:"memory_mib"`

	// Timeout bounds each call into the bundle (every guest entry, api()
	// round trips included). Default 10s.
	Timeout time.Duration `koanf:"timeout"`

	// MaxOutputBytes caps a result. Default 1048576 (1 MiB), at most 64 MiB.
	MaxOutputBytes int `koanf:"max_output_bytes"`

	// PoolSize is how many idle instances of the bundle are kept warm per
	// organisation for plugins.idle_ttl. Pools grow past it with an
	// organisation's concurrency, within the memory budget, and the surplus
	// is closed after 30 s idle (docs/plugins-operations.md). Default 4.
	PoolSize int `koanf:"pool_size"`

	// APICalls is how many API requests one call may make. Default 16.
	APICalls int `koanf:"api_calls"`
}

// WithDefaults fills the zero fields of l.
func (l Limits) WithDefaults() Limits {
	return Limits{
		MemoryMiB:      cmp.Or(l.MemoryMiB, DefaultMemoryMiB),
		Timeout:        cmp.Or(l.Timeout, DefaultTimeout),
		MaxOutputBytes: cmp.Or(l.MaxOutputBytes, DefaultMaxOutputBytes),
		PoolSize:       cmp.Or(l.PoolSize, DefaultPoolSize),
		APICalls:       cmp.Or(l.APICalls, DefaultAPICalls),
	}
}

// FieldError is one problem with one field of a bundle's configuration.
type FieldError struct {
	Field string // the key under plugins.bundles.<name>, e.g. "memory_mib"
	Msg   string // what is wrong and what is allowed
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// Check returns every problem with l, before or after defaults (0 is
// allowed: it takes the default).
func (l Limits) Check() []*FieldError {
	var out []*FieldError
	add := func(field, format string, args ...any) {
		out = append(out, &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	nonNegative := func(field string, n int) bool {
		if n < 0 {
			add(field, "%d is negative; leave it out for the default", n)
		}
		return n >= 0
	}
	if nonNegative("memory_mib", l.MemoryMiB) && l.MemoryMiB > MaxMemoryMiB {
		add("memory_mib", "%d is more than a WebAssembly instance can address (%d)", l.MemoryMiB, MaxMemoryMiB)
	}
	if l.Timeout < 0 {
		add("timeout", "%s is negative; want a positive duration such as \"10s\", or leave it out for the default", l.Timeout)
	}
	if nonNegative("max_output_bytes", l.MaxOutputBytes) && l.MaxOutputBytes > MaxOutputBytes {
		add("max_output_bytes", "%d is more than %d (64 MiB)", l.MaxOutputBytes, MaxOutputBytes)
	}
	nonNegative("pool_size", l.PoolSize)
	nonNegative("api_calls", l.APICalls)
	return out
}

// CheckIsolation reports whether isolation is one of Isolations ("" takes
// the default).
func CheckIsolation(isolation string) *FieldError {
	for _, ok := range append([]string{""}, Isolations...) {
		if isolation == ok {
			return nil
		}
	}
	return &FieldError{Field: "isolation", Msg: fmt.Sprintf("%q is not allowed (want one of %s, %s)", isolation, IsolationPerOrg, IsolationPerCall)}
}

// CheckSHA256 reports whether s is a SHA-256 digest as 64 hex digits.
func CheckSHA256(s string) *FieldError {
	if len(s) != 64 || !isHex(s) {
		return &FieldError{Field: "sha256", Msg: "must be the file's SHA-256 as 64 hex digits (sha256sum FILE, or kadu plugins validate FILE)"}
	}
	return nil
}

func isHex(s string) bool {
	for _, c := range []byte(s) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// Join turns the problems of bundle name into one error whose lines name
// the full keys (nil without problems).
func Join(name string, problems []*FieldError) error {
	errs := make([]error, len(problems))
	for i, p := range problems {
		errs[i] = fmt.Errorf("%s: %s", Key(name, p.Field), p.Msg)
	}
	return errors.Join(errs...)
}
