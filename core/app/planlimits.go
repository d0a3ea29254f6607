package app

import (
	"context"

	"github.com/kobana/kadu/core/plans"
)

// requestsPerMinute answers "how many requests a minute may this
// organisation make" on every request, from the process's plan resolver
// and its cache: a plan change reaches every replica within
// plans.CacheTTL. An organisation not provisioned yet gets the default
// plan's limit, the plan provisioning will give it; one on a plan that is
// not configured gets the default plan's too, never no limit.
func requestsPerMinute(r *plans.Resolver) func(ctx context.Context, orgID string) (int, error) {
	return func(ctx context.Context, orgID string) (int, error) {
		res, err := r.ForOrDefault(ctx, orgID)
		if err != nil {
			return 0, err
		}
		return res.Plan.RequestsPerMinute, nil
	}
}

// planName answers "which plan is this organisation on" for the bundles
// restricted to plans (plugins.bundles.<name>.plans), from the same
// resolver and cache as the rate limit: an organisation not provisioned
// yet is on the default plan, the one provisioning will give it.
func planName(r *plans.Resolver) func(ctx context.Context, orgID string) (string, error) {
	return func(ctx context.Context, orgID string) (string, error) {
		res, err := r.ForOrDefault(ctx, orgID)
		if err != nil {
			return "", err
		}
		return res.Name, nil
	}
}
