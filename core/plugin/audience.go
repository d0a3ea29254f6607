package plugin

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/mcp"
)

// Audience says which organisations see a bundle: those listed in
// Organisations, and those on a plan listed in Plans. Both nil (the zero
// value) is every organisation; a list that is set but empty matches
// nobody (plugins.bundles.<name>.organisations and .plans).
//
// A bundle an organisation does not see is absent from its listings and
// unknown to its calls, exactly as a bundle that is not loaded: the
// answers are the same bytes, so nothing tells it the bundle exists.
type Audience struct {
	Organisations []string
	Plans         []string
}

// Restricted reports whether the audience is not everyone.
func (a Audience) Restricted() bool { return a.Organisations != nil || a.Plans != nil }

// PlanOf returns the name of the plan organisation orgID is held to. The
// app passes its plan resolver (cached, plans.CacheTTL), so a plan change
// reaches bundle audiences as it reaches rate limits.
type PlanOf func(ctx context.Context, orgID string) (string, error)

// audience is an Audience compiled for lookups.
type audience struct {
	orgs  map[string]struct{}
	plans map[string]struct{}
	bit   uint64 // this bundle's bit in a view key; 0 past maxMaskBundles
	src   Audience
}

func compileAudience(a Audience) *audience {
	c := &audience{orgs: make(map[string]struct{}, len(a.Organisations)), plans: make(map[string]struct{}, len(a.Plans)),
		src: Audience{Organisations: slices.Clone(a.Organisations), Plans: slices.Clone(a.Plans)}}
	for _, o := range a.Organisations {
		c.orgs[o] = struct{}{}
	}
	for _, p := range a.Plans {
		c.plans[p] = struct{}{}
	}
	return c
}

// maxMaskBundles is how many restricted bundles a view key (a bit each)
// can tell apart; views of more are built on every listing, uncached.
const maxMaskBundles = 64

// maxViews bounds the views one snapshot caches: one per distinct set of
// restricted bundles seen, which is few in practice (a handful of partner
// bundles); past the bound, listings are built uncached.
const maxViews = 1024

// audiences is the audience side of a snapshot: who sees each restricted
// version, and the listings already built per set of visible bundles. Set
// once by setAudiences before the snapshot is published; views fill
// lazily and are safe for concurrent use.
type audiences struct {
	by       map[*version]*audience // restricted versions only
	list     []*audience            // the values of by, for loops without map lookups
	needPlan bool                   // some restricted version lists plans
	views    sync.Map               // uint64 mask → *view
	nviews   atomic.Int64
}

// view is what one set of visible bundles lists.
type view struct {
	tools     []mcp.Tool
	resources []mcp.Resource
	templates []mcp.ResourceTemplate
	prompts   []mcp.Prompt
}

// setAudiences records, for each published version, the audience its
// configuration in bundles gives it. It reads the configuration Reload
// was given, not the version's own: an audience change keeps the loaded
// version (nothing to compile) and takes effect with this snapshot.
func (s *snapshot) setAudiences(bundles []BundleConfig) {
	s.aud.by = map[*version]*audience{}
	n := 0
	seen := map[string]bool{}
	for _, b := range bundles {
		v := s.byName[b.Name]
		if seen[b.Name] || v == nil { // the first entry of a name is the one Reload serves
			continue
		}
		seen[b.Name] = true
		if !b.Audience.Restricted() {
			continue
		}
		a := compileAudience(b.Audience)
		if n < maxMaskBundles {
			a.bit = 1 << n
		}
		n++
		s.aud.by[v] = a
		s.aud.list = append(s.aud.list, a)
		s.aud.needPlan = s.aud.needPlan || len(a.plans) > 0
	}
}

// audienceOf is v's audience in s, for Status: the zero Audience when
// every organisation sees it.
func (s *snapshot) audienceOf(v *version) Audience {
	if a := s.aud.by[v]; a != nil {
		return a.src
	}
	return Audience{}
}

// viewer is who is asking: the organisation, and its plan when some
// audience needs it.
type viewer struct {
	org  string
	plan string
}

// viewerOf resolves p's plan only when s has an audience listing plans,
// so a server without plan audiences never looks one up.
func (r *Registry) viewerOf(ctx context.Context, s *snapshot, p *auth.Principal) (viewer, error) {
	if p == nil { // no caller: only what everyone sees
		return viewer{}, nil
	}
	w := viewer{org: p.OrgID}
	if !s.aud.needPlan || r.planOf == nil || p.OrgID == "" || !s.planDecides(p.OrgID) {
		return w, nil
	}
	plan, err := r.planOf(ctx, p.OrgID)
	if err != nil {
		return w, fmt.Errorf("resolving the plan of organisation %q for bundle audiences: %w", p.OrgID, err)
	}
	w.plan = plan
	return w, nil
}

// planDecides reports whether org's plan could change what it sees: some
// bundle lists plans and does not list org already. Then, and only then,
// the plan is looked up (a cache hit, or a read for an organisation not
// provisioned yet).
func (s *snapshot) planDecides(org string) bool {
	for _, a := range s.aud.list {
		if _, listed := a.orgs[org]; len(a.plans) > 0 && !listed {
			return true
		}
	}
	return false
}

// sees reports whether w sees v in s.
func (s *snapshot) sees(v *version, w viewer) bool {
	a := s.aud.by[v]
	return a == nil || a.admits(w)
}

// admits reports whether w is in the audience.
func (a *audience) admits(w viewer) bool {
	if _, ok := a.orgs[w.org]; ok && w.org != "" {
		return true
	}
	_, ok := a.plans[w.plan]
	return ok && w.plan != ""
}

// viewFor returns what w may list in s: the snapshot's own lists when no
// bundle is restricted (the common case costs one length check), else the
// view of the restricted bundles w sees, built once per snapshot and set
// of bundles.
func (s *snapshot) viewFor(w viewer) view {
	if len(s.aud.list) == 0 {
		return view{tools: s.toolList, resources: s.resourceList, templates: s.templateList, prompts: s.promptList}
	}
	if len(s.aud.list) > maxMaskBundles {
		return *s.buildView(w)
	}
	var mask uint64
	for _, a := range s.aud.list {
		if a.admits(w) {
			mask |= a.bit
		}
	}
	if cached, ok := s.aud.views.Load(mask); ok {
		return *cached.(*view)
	}
	built := s.buildView(w)
	if s.aud.nviews.Load() < maxViews {
		if cached, loaded := s.aud.views.LoadOrStore(mask, built); loaded {
			return *cached.(*view)
		}
		s.aud.nviews.Add(1)
	}
	return *built
}

// buildView lists, in configuration order, the entries of the versions w
// sees.
func (s *snapshot) buildView(w viewer) *view {
	out := &view{}
	for _, v := range s.versions {
		if s.sees(v, w) {
			out.add(v)
		}
	}
	return out
}

// add appends what v serves to the lists, in v's manifest order: the one
// rule behind both the snapshot's full lists (seal) and each audience's.
func (out *view) add(v *version) {
	for _, t := range v.man.tools {
		out.tools = append(out.tools, t.tool)
	}
	out.resources = append(out.resources, v.man.resources...)
	for _, t := range v.man.templates {
		out.templates = append(out.templates, t.entry)
	}
	out.prompts = append(out.prompts, v.man.prompts...)
}

// resolveURIFor is resolveURI among the versions w sees: a template of a
// bundle w does not see never shadows one it does.
func (s *snapshot) resolveURIFor(uri string, w viewer) (*version, mcp.Access) {
	if r, ok := s.resources[uri]; ok && s.sees(r.v, w) {
		return r.v, r.res.Access
	}
	for _, t := range s.templates {
		if s.sees(t.v, w) && t.def.match(uri) {
			return t.v, t.def.entry.Access
		}
	}
	return nil, mcp.Access{}
}

// currentView is the listing p may see in the current snapshot.
func (r *Registry) currentView(ctx context.Context, p *auth.Principal) (view, error) {
	s := r.snap.Load()
	if s.closed {
		return view{}, ErrClosed
	}
	if len(s.aud.list) == 0 {
		return s.viewFor(viewer{}), nil
	}
	w, err := r.viewerOf(ctx, s, p)
	if err != nil {
		return view{}, err
	}
	return s.viewFor(w), nil
}

// callerViewer resolves p for a call: the plan is looked up when the
// current snapshot needs it. A Reload between this and the call's own
// snapshot may bring plan audiences this viewer has no plan for; then
// only the organisation matches, which hides rather than shows.
func (r *Registry) callerViewer(ctx context.Context, p *auth.Principal) (viewer, error) {
	s := r.snap.Load()
	if s.closed {
		return viewer{}, ErrClosed
	}
	return r.viewerOf(ctx, s, p)
}
