package plans

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
)

// ErrNoOrganisation is what For returns (wrapped) for an organisation
// that is not provisioned.
var ErrNoOrganisation = errors.New("organisation not provisioned")

// Lookup returns the name of the plan organisation orgID is on, as the
// store holds it; found is false when there is no such organisation.
// (*store.DB).PlanOf is one.
type Lookup func(ctx context.Context, orgID string) (plan string, found bool, err error)

// CacheTTL bounds how long a replica trusts an organisation's plan name
// that it read: a plan changed in the store reaches every replica within
// it.
const CacheTTL = 30 * time.Second

// cacheMax bounds the cache, in organisations; past it the cache starts
// over. An entry is a few dozen bytes.
const cacheMax = 100_000

// Options configure New. Plans, Default and Lookup are required.
type Options struct {
	// Plans are the configured plans by name. New copies the map.
	Plans map[string]Plan
	// Default, one of Plans, is the plan of an organisation whose own plan
	// is not configured, and the plan provisioning gives.
	Default string
	// Lookup reads an organisation's plan name from the store.
	Lookup Lookup
	// Logger receives a warning for each organisation found on a plan that
	// is not configured. Default: discard.
	Logger *slog.Logger
	// Now is the clock of the cache. Default time.Now.
	Now func() time.Time
}

// Resolved is the plan an organisation is held to.
type Resolved struct {
	// Name is the plan applied: the organisation's own, or the default plan
	// when its own is not configured.
	Name string
	Plan Plan
}

// Resolver answers "which plan is this organisation held to", from a
// short-lived cache of organisation → plan name. Safe for concurrent use.
type Resolver struct {
	plans  map[string]Plan
	def    string
	lookup Lookup
	log    *slog.Logger
	now    func() time.Time

	mu      sync.Mutex
	entries map[string]entry // guarded by mu
}

type entry struct {
	plan  string
	until time.Time
}

// New returns a Resolver over opts.
func New(opts Options) (*Resolver, error) {
	if opts.Lookup == nil {
		return nil, errors.New("plans: Options.Lookup is required")
	}
	if _, ok := opts.Plans[opts.Default]; !ok {
		return nil, fmt.Errorf("plans: the default plan %q is not one of the plans (%s)",
			opts.Default, strings.Join(slices.Sorted(maps.Keys(opts.Plans)), ", "))
	}
	r := &Resolver{
		plans:   maps.Clone(opts.Plans),
		def:     opts.Default,
		lookup:  opts.Lookup,
		log:     opts.Logger,
		now:     opts.Now,
		entries: map[string]entry{},
	}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	if r.now == nil {
		r.now = time.Now
	}
	return r, nil
}

// Default is the default plan.
func (r *Resolver) Default() Resolved { return Resolved{Name: r.def, Plan: r.plans[r.def]} }

// Plans returns a copy of the configured plans.
func (r *Resolver) Plans() map[string]Plan { return maps.Clone(r.plans) }

// For returns the plan orgID is held to: the plan named in the store (read
// at most once per CacheTTL), or the default plan, with a warning, when
// that name is not configured. An organisation that is not provisioned is
// an error matching ErrNoOrganisation; it is not cached, so provisioning
// takes effect at once.
func (r *Resolver) For(ctx context.Context, orgID string) (Resolved, error) {
	now := r.now()
	r.mu.Lock()
	e, ok := r.entries[orgID]
	r.mu.Unlock()
	if ok && now.Before(e.until) {
		return r.named(e.plan), nil
	}
	name, found, err := r.lookup(ctx, orgID)
	switch {
	case err != nil:
		return Resolved{}, fmt.Errorf("reading the plan of organisation %q: %w", orgID, err)
	case !found:
		return Resolved{}, fmt.Errorf("organisation %q: %w", orgID, ErrNoOrganisation)
	}
	r.remember(orgID, name, now)
	res := r.named(name)
	if res.Name != name {
		r.log.WarnContext(ctx, "plans: organisation on a plan that is not configured; using the default plan",
			slog.String("org_id", orgID), slog.String("plan", name), slog.String("default_plan", r.def))
	}
	return res, nil
}

// ForOrDefault is For, except that an organisation not provisioned yet is
// held to the default plan, the one provisioning will give it.
func (r *Resolver) ForOrDefault(ctx context.Context, orgID string) (Resolved, error) {
	res, err := r.For(ctx, orgID)
	if errors.Is(err, ErrNoOrganisation) {
		return r.Default(), nil
	}
	return res, err
}

// Remember records that orgID is on plan, as read or just written by the
// caller (after provisioning), for CacheTTL.
func (r *Resolver) Remember(orgID, plan string) { r.remember(orgID, plan, r.now()) }

func (r *Resolver) remember(orgID, plan string, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.entries) >= cacheMax {
		clear(r.entries)
	}
	r.entries[orgID] = entry{plan: plan, until: now.Add(CacheTTL)}
}

// named resolves a plan name: the plan, or the default plan when name is
// not configured — never no limits.
func (r *Resolver) named(name string) Resolved {
	if p, ok := r.plans[name]; ok {
		return Resolved{Name: name, Plan: p}
	}
	return r.Default()
}
