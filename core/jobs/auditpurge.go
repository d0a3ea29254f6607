package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/kobana/kadu/core/store"
)

// purgeAudit purges, chain by chain, the audit events older than the
// retention of the chain's plan (plans.<name>.audit_retention; 0 keeps them
// forever). The installation's own chain (bundles, configuration) follows
// the default plan. store.PurgeAudit leaves a signed checkpoint of the last
// event it deletes, so each chain still verifies from there
// (docs/audit.md#retention). A failure on one chain does not keep the
// others from being purged; the errors are joined and the job retried.
func (q *Queue) purgeAudit(ctx context.Context, now time.Time) error {
	chains, err := q.opts.Store.AuditChains(ctx)
	if errors.Is(err, store.ErrAuditNotImplemented) {
		return nil // a store without the audit trail has nothing to purge
	}
	if err != nil {
		return fmt.Errorf("audit retention: listing the chains: %w", err)
	}
	var errs []error
	for _, org := range chains {
		retention, err := q.auditRetention(ctx, org)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if retention <= 0 {
			continue // kept forever
		}
		n, err := q.opts.Store.PurgeAudit(ctx, org, now.Add(-retention))
		if err != nil {
			errs = append(errs, fmt.Errorf("audit retention: purging the chain of %q: %w", org, err))
			continue
		}
		if n > 0 {
			q.log.InfoContext(ctx, "audit events purged past their retention", slog.String("org_id", org),
				slog.Int64("events", n), slog.Duration("audit_retention", retention))
		}
	}
	return errors.Join(errs...)
}

// auditRetention is how long org's audit events are kept: its plan's
// audit_retention, the default plan's for the installation's chain and for
// an organisation not provisioned (any more).
func (q *Queue) auditRetention(ctx context.Context, org string) (time.Duration, error) {
	if org == store.InstallationChain {
		return q.opts.PlanResolver.Default().Plan.AuditRetention, nil
	}
	res, err := q.opts.PlanResolver.ForOrDefault(ctx, org)
	if err != nil {
		return 0, fmt.Errorf("audit retention of %q: %w", org, err)
	}
	return res.Plan.AuditRetention, nil
}
