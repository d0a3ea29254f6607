package plans

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// fakeStore is a Lookup over a map, counting reads.
type fakeStore struct {
	orgs  map[string]string
	err   error
	reads int
}

func (s *fakeStore) lookup(_ context.Context, orgID string) (string, bool, error) {
	s.reads++
	if s.err != nil {
		return "", false, fmt.Errorf("store: %w", s.err)
	}
	p, ok := s.orgs[orgID]
	return p, ok, nil
}

func newResolver(t *testing.T, s *fakeStore, now *time.Time) *Resolver {
	t.Helper()
	r, err := New(Options{Plans: Builtin(), Default: "developer", Lookup: s.lookup, Now: func() time.Time { return *now }})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The rule every caller shares: a configured plan is itself; any other
// name — removed, misspelt, empty, other case — is held to the default plan
// with all its limits, never to no limits.
func TestForResolvesEveryPlanName(t *testing.T) {
	t.Parallel()
	builtin := Builtin()
	for _, tt := range []struct {
		plan, want string
	}{
		{"team", "team"},
		{"developer", "developer"},
		{"gold", "developer"},
		{"", "developer"},
		{"TEAM", "developer"},
	} {
		t.Run(tt.plan, func(t *testing.T) {
			now := time.Unix(0, 0)
			r := newResolver(t, &fakeStore{orgs: map[string]string{"org_a": tt.plan}}, &now)
			got, err := r.For(context.Background(), "org_a")
			if err != nil {
				t.Fatal(err)
			}
			if got.Name != tt.want || got.Plan != builtin[tt.want] {
				t.Errorf("For(org on %q) = %+v; want plan %q", tt.plan, got, tt.want)
			}
			if got.Plan.CostCapCents <= 0 || got.Plan.RequestsPerMinute <= 0 {
				t.Errorf("For(org on %q): limits %+v, want the default plan's, not unlimited", tt.plan, got.Plan)
			}
		})
	}
}

func TestForUnprovisionedAndErrors(t *testing.T) {
	t.Parallel()
	boom := errors.New("database down")
	for _, tt := range []struct {
		name        string
		store       *fakeStore
		orDefault   bool
		wantErr     error // nil: no error
		wantDefault bool
	}{
		{"not provisioned", &fakeStore{orgs: map[string]string{}}, false, ErrNoOrganisation, false},
		{"not provisioned, or default", &fakeStore{orgs: map[string]string{}}, true, nil, true},
		{"store error", &fakeStore{err: boom}, false, boom, false},
		{"store error, or default", &fakeStore{err: boom}, true, boom, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			now := time.Unix(0, 0)
			r := newResolver(t, tt.store, &now)
			resolve := r.For
			if tt.orDefault {
				resolve = r.ForOrDefault
			}
			got, err := resolve(context.Background(), "org_x")
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantDefault && got != r.Default() {
				t.Errorf("got %+v, want the default plan", got)
			}
		})
	}
}

// One read per organisation per CacheTTL; unprovisioned organisations are
// not cached, so that provisioning takes effect on the next request.
func TestForCaches(t *testing.T) {
	t.Parallel()
	now := time.Unix(0, 0)
	s := &fakeStore{orgs: map[string]string{"org_a": "team"}}
	r := newResolver(t, s, &now)
	ctx := context.Background()
	for range 3 {
		if _, err := r.For(ctx, "org_a"); err != nil {
			t.Fatal(err)
		}
	}
	if s.reads != 1 {
		t.Errorf("%d reads within the TTL, want 1", s.reads)
	}
	s.orgs["org_a"] = "developer"
	now = now.Add(CacheTTL)
	got, _ := r.For(ctx, "org_a")
	if got.Name != "developer" || s.reads != 2 {
		t.Errorf("after the TTL: plan %q after %d reads, want developer after 2", got.Name, s.reads)
	}

	for range 2 {
		if _, err := r.For(ctx, "org_new"); !errors.Is(err, ErrNoOrganisation) {
			t.Fatalf("err = %v", err)
		}
	}
	if s.reads != 4 {
		t.Errorf("%d reads, want 4: an unprovisioned organisation is not cached", s.reads)
	}
	r.Remember("org_new", "team")
	if got, err := r.For(ctx, "org_new"); err != nil || got.Name != "team" || s.reads != 4 {
		t.Errorf("after Remember: %+v, %v after %d reads; want team from the cache", got, err, s.reads)
	}
}

func TestNewRefusesAnUnknownDefault(t *testing.T) {
	t.Parallel()
	s := &fakeStore{}
	if _, err := New(Options{Plans: Builtin(), Default: "gold", Lookup: s.lookup}); err == nil {
		t.Error("New accepted a default plan that is not configured")
	}
	if _, err := New(Options{Plans: Builtin(), Default: "developer"}); err == nil {
		t.Error("New accepted no Lookup")
	}
}

// An organisation on a plan that is not configured is logged, once per
// read from the store, with the plan it asked for and the one it got.
func TestForWarnsOfAnUnconfiguredPlan(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	now := time.Unix(0, 0)
	s := &fakeStore{orgs: map[string]string{"org_a": "gold", "org_b": "team"}}
	r, err := New(Options{Plans: Builtin(), Default: "developer", Lookup: s.lookup, Now: func() time.Time { return now },
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := r.For(context.Background(), "org_a"); err != nil {
			t.Fatal(err)
		}
		if _, err := r.For(context.Background(), "org_b"); err != nil {
			t.Fatal(err)
		}
	}
	out := logs.String()
	if strings.Count(out, "level=WARN") != 1 || !strings.Contains(out, "org_id=org_a plan=gold default_plan=developer") {
		t.Errorf("log = %q, want one warning naming org_a, gold and developer", out)
	}
}
