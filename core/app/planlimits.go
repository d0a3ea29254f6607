package app

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/kobana/kadu/core/config"
	"github.com/kobana/kadu/core/store"
)

// planLimits answers "how many requests a minute may this organisation
// make" on every request, from a short-lived cache of organisation → plan:
// a plan change reaches every replica within planLimitsTTL.
type planLimits struct {
	db  *store.DB
	cfg *config.Config // PlanFor: organisations not provisioned yet, or on a plan not configured, get the default plan's limit

	mu      sync.Mutex
	entries map[string]planLimitEntry
}

type planLimitEntry struct {
	perMinute int
	expires   time.Time
}

const (
	planLimitsTTL = 30 * time.Second
	planLimitsMax = 100_000 // entries; the cache is emptied past it
)

func newPlanLimits(db *store.DB, cfg *config.Config) *planLimits {
	return &planLimits{db: db, cfg: cfg, entries: map[string]planLimitEntry{}}
}

func (l *planLimits) requestsPerMinute(ctx context.Context, orgID string) (int, error) {
	now := time.Now()
	l.mu.Lock()
	e, ok := l.entries[orgID]
	l.mu.Unlock()
	if ok && now.Before(e.expires) {
		return e.perMinute, nil
	}
	name := l.cfg.Orgs.DefaultPlan
	o, err := l.db.GetOrg(ctx, orgID)
	switch {
	case err == nil:
		name = o.Plan
	case !errors.Is(err, store.ErrNotFound):
		return 0, err
	}
	plan, _, _ := l.cfg.PlanFor(name)
	n := plan.RequestsPerMinute
	l.mu.Lock()
	if len(l.entries) >= planLimitsMax {
		clear(l.entries)
	}
	l.entries[orgID] = planLimitEntry{perMinute: n, expires: now.Add(planLimitsTTL)}
	l.mu.Unlock()
	return n, nil
}
