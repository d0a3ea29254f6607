package plans

import "time"

// Plan is what an organisation on it may use (docs/reference/limits.md).
// Plans are named in the configuration under plans.<name>; organisations
// refer to them by name. Every field is required and must be greater than
// 0, except Webhooks, which may be 0 (core/config validates them).
type Plan struct {
	// ConcurrentExecutions is how many executions may run at once; more stay
	// queued.
	ConcurrentExecutions int `koanf:"concurrent_executions"`

	// ExecutionsPerMonth is how many executions may be launched per calendar
	// month (UTC).
	ExecutionsPerMonth int `koanf:"executions_per_month"`

	// MaxFileSizeBytes is the largest file that may be uploaded, in bytes.
	MaxFileSizeBytes int64 `koanf:"max_file_size_bytes"`

	// Retention is how long soft-deleted rows (and their blobs) are kept
	// before they are purged.
	Retention time.Duration `koanf:"retention"`

	// Webhooks is the most webhook endpoints the organisation may have; 0
	// allows none.
	Webhooks int `koanf:"webhooks"`

	// RequestsPerMinute limits MCP and REST requests together.
	RequestsPerMinute int `koanf:"requests_per_minute"`

	// CostCapCents is the monthly cost cap, in cents: a launch that would
	// exceed it is refused (402 cost_cap_exceeded), and an execution that
	// crosses it fails.
	CostCapCents int64 `koanf:"cost_cap_cents"`

	// MaxCostPerExecutionCents is the most one execution may cost, in cents;
	// at most CostCapCents.
	MaxCostPerExecutionCents int64 `koanf:"max_cost_per_execution_cents"`

	// AuditRetention is how long the organisation's audit events are kept
	// before the maintenance job purges them, leaving a signed checkpoint
	// so that the rest of the chain still verifies (docs/audit.md). 0 keeps
	// them forever. Unlike the other fields it has a default, 8760h (a
	// year), also for a plan that is not built in.
	AuditRetention time.Duration `koanf:"audit_retention"`
}

// DefaultAuditRetention is the audit retention of a plan that does not
// set one: a year, what an annual audit looks back on.
const DefaultAuditRetention = 8760 * time.Hour

// ApplyDefaults sets the fields that have a default, for a plan the
// configuration declares: it starts from them instead of zero values.
func (p *Plan) ApplyDefaults() {
	p.AuditRetention = DefaultAuditRetention
}

// Builtin returns the plans every configuration has, developer and team; a
// configuration may change their fields and add others. Each call returns
// a new map.
func Builtin() map[string]Plan {
	return map[string]Plan{
		"developer": {
			ConcurrentExecutions:     2,
			ExecutionsPerMonth:       1000,
			MaxFileSizeBytes:         10 << 20, // 10 MiB
			Retention:                720 * time.Hour,
			Webhooks:                 5,
			RequestsPerMinute:        600,
			CostCapCents:             10000,
			MaxCostPerExecutionCents: 2000,
			AuditRetention:           DefaultAuditRetention,
		},
		"team": {
			ConcurrentExecutions:     10,
			ExecutionsPerMonth:       20000,
			MaxFileSizeBytes:         100 << 20, // 100 MiB
			Retention:                2160 * time.Hour,
			Webhooks:                 20,
			RequestsPerMinute:        3000,
			CostCapCents:             500000,
			MaxCostPerExecutionCents: 20000,
			AuditRetention:           DefaultAuditRetention,
		},
	}
}
