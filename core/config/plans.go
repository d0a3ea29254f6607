package config

import (
	"maps"
	"slices"

	"github.com/kobana/kadu/core/plans"
)

// Plan is what an organisation on it may use; core/plans owns the type,
// its fields' meaning and the rule resolving an organisation's plan. Plans
// are named in the configuration under plans.<name> (lower case, see
// entryNameRE). Every field is required and must be greater than 0, except
// Webhooks, which may be 0, and AuditRetention, which defaults to a year
// and may be 0 (keep forever).
type Plan = plans.Plan

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
		if pl.AuditRetention < 0 {
			p.add(key+".audit_retention", "%s is negative; want 0 (keep forever) or a duration such as \"8760h\"", pl.AuditRetention)
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
