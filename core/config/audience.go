package config

import (
	"maps"
	"slices"
	"strings"

	"github.com/kobana/kadu/core/auth"
)

// bundleAudiences checks plugins.bundles.<name>.organisations and .plans:
// each organisation id follows the one rule for ids, each plan is one of
// plans, and nothing is listed twice. A plan name that is not configured is
// an error rather than a bundle silently shown to nobody on that plan.
func (p *problems) bundleAudiences(pl *Plugins, plans map[string]Plan) {
	for _, name := range slices.Sorted(maps.Keys(pl.Bundles)) {
		b := pl.Bundles[name]
		key := "plugins.bundles." + name
		seen := map[string]bool{}
		for i, org := range b.Organisations {
			if err := auth.CheckOrgID(org); err != nil {
				p.add(key+".organisations", "entry %d, %q: %s", i, org, err)
			} else if seen[org] {
				p.add(key+".organisations", "entry %d, %q, is listed twice", i, org)
			}
			seen[org] = true
		}
		clear(seen)
		for i, plan := range b.Plans {
			if _, ok := plans[plan]; !ok {
				p.add(key+".plans", "entry %d, %q, is not a configured plan (want one of %s)",
					i, plan, strings.Join(slices.Sorted(maps.Keys(plans)), ", "))
			} else if seen[plan] {
				p.add(key+".plans", "entry %d, %q, is listed twice", i, plan)
			}
			seen[plan] = true
		}
	}
}
