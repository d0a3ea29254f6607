package config

import (
	"maps"
	"slices"
	"time"
)

// Plan is what an organisation on it may use (docs/reference/rest.md#conventions, docs/reference/limits.md#rate-limits). Plans are
// named in the configuration under plans.<name> (lower case, see
// entryNameRE); organisations refer to them by name. Every field is required
// and must be greater than 0, except Webhooks, which may be 0.
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
}

// builtinPlans are the plans every configuration has; a file or the
// environment may change their fields and add others.
func builtinPlans() map[string]Plan {
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
		},
	}
}

// plans checks every plan, in name order, reporting each field that is
// missing or out of range by its full key (plans.<name>.<field>).
func (p *problems) plans(plans map[string]Plan) {
	for _, name := range slices.Sorted(maps.Keys(plans)) {
		key := "plans." + name
		if !entryNameRE.MatchString(name) {
			p.add(key, "%q is not a valid plan name (want %s)", name, entryNameRule)
			continue
		}
		pl := plans[name]
		p.planCount(key+".concurrent_executions", int64(pl.ConcurrentExecutions))
		p.planCount(key+".executions_per_month", int64(pl.ExecutionsPerMonth))
		p.planCount(key+".max_file_size_bytes", pl.MaxFileSizeBytes)
		switch {
		case pl.Retention == 0:
			p.add(key+".retention", "is 0 or not set; want a positive duration such as \"720h\"")
		case pl.Retention < 0:
			p.positive(key+".retention", pl.Retention)
		}
		if pl.Webhooks < 0 {
			p.add(key+".webhooks", "%d is negative; want 0 (no webhooks) or more", pl.Webhooks)
		}
		p.planCount(key+".requests_per_minute", int64(pl.RequestsPerMinute))
		capOK := p.planCount(key+".cost_cap_cents", pl.CostCapCents)
		if p.planCount(key+".max_cost_per_execution_cents", pl.MaxCostPerExecutionCents) && capOK &&
			pl.MaxCostPerExecutionCents > pl.CostCapCents {
			p.add(key+".max_cost_per_execution_cents", "%d is more than %s.cost_cap_cents (%d); want at most the monthly cap",
				pl.MaxCostPerExecutionCents, key, pl.CostCapCents)
		}
	}
}

// planCount reports whether n > 0, adding a problem if not.
func (p *problems) planCount(key string, n int64) bool {
	switch {
	case n == 0:
		p.add(key, "is 0 or not set; want a whole number greater than 0 (a plan that is not built in must set every field)")
	case n < 0:
		p.add(key, "%d is negative; want a whole number greater than 0", n)
	default:
		return true
	}
	return false
}

// PlanFor resolves the plan an organisation on plan name is held to. It is
// the one place that decides what an organisation whose plan is not
// configured (renamed or removed after the organisation was provisioned,
// or set by hand in the store) gets: orgs.default_plan, with every limit and
// the monthly cost cap of that plan, never no limits. ok is false in that
// case, so that the caller can log it; resolved names the plan used.
func (c *Config) PlanFor(name string) (plan Plan, resolved string, ok bool) {
	return ResolvePlan(c.Plans, c.Orgs.DefaultPlan, name)
}

// ResolvePlan is PlanFor for code that holds the plans and the default
// plan's name rather than the Config (core/api and core/jobs take them as
// options). defaultPlan must be one of plans; Validate makes it so for
// orgs.default_plan.
func ResolvePlan(plans map[string]Plan, defaultPlan, name string) (plan Plan, resolved string, ok bool) {
	if p, found := plans[name]; found {
		return p, name, true
	}
	return plans[defaultPlan], defaultPlan, false
}
