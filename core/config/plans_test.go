package config

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kobana/kadu/core/plans"
)

// A plan set in part starts from the built-in plan of that name, or from zero
// values; later sources override single fields.
func TestLoadPlans(t *testing.T) {
	t.Parallel()
	path := writeYAML(t, `
orgs:
  default_plan: gold
plans:
  team:
    webhooks: 0
  gold:
    concurrent_executions: 4
    executions_per_month: 5000
    max_file_size_bytes: 52428800
    retention: 1440h
    requests_per_minute: 1200
    cost_cap_cents: 50000
  silver: {}
`)
	c, err := load(path, true, nil, environ(
		"KADU_PLANS__GOLD__MAX_COST_PER_EXECUTION_CENTS=5000", // completes gold
		"KADU_PLANS__SILVER__CONCURRENT_EXECUTIONS=1",
		"KADU_PLANS__SILVER__EXECUTIONS_PER_MONTH=10",
		"KADU_PLANS__SILVER__MAX_FILE_SIZE_BYTES=1",
		"KADU_PLANS__SILVER__RETENTION=1h",
		"KADU_PLANS__SILVER__REQUESTS_PER_MINUTE=1",
		"KADU_PLANS__SILVER__COST_CAP_CENTS=1",
		"KADU_PLANS__SILVER__MAX_COST_PER_EXECUTION_CENTS=1",
	))
	if err != nil {
		t.Fatal(err)
	}
	team := plans.Builtin()["team"]
	team.Webhooks = 0
	want := map[string]Plan{
		"developer": plans.Builtin()["developer"],
		"team":      team,
		"gold": {ConcurrentExecutions: 4, ExecutionsPerMonth: 5000, MaxFileSizeBytes: 50 << 20, Retention: 1440 * time.Hour,
			RequestsPerMinute: 1200, CostCapCents: 50000, MaxCostPerExecutionCents: 5000, AuditRetention: plans.DefaultAuditRetention},
		"silver": {ConcurrentExecutions: 1, ExecutionsPerMonth: 10, MaxFileSizeBytes: 1, Retention: time.Hour,
			RequestsPerMinute: 1, CostCapCents: 1, MaxCostPerExecutionCents: 1, AuditRetention: plans.DefaultAuditRetention},
	}
	if !reflect.DeepEqual(c.Plans, want) {
		t.Fatalf("plans = %+v\nwant %+v", c.Plans, want)
	}
}

func TestLoadPlansEmptyOrNull(t *testing.T) {
	t.Parallel()
	for _, body := range []string{"plans: {}\n", "plans: null\n", "plans:\n  team: null\n"} {
		c, err := load(writeYAML(t, body), true, nil, environ())
		if err != nil {
			t.Fatalf("%q: %v", body, err)
		}
		if !reflect.DeepEqual(c.Plans, plans.Builtin()) {
			t.Errorf("%q: plans = %+v, want the built-in plans", body, c.Plans)
		}
	}
}

// A declared plan with no fields is reported field by field; a bad name once.
func TestLoadPlanProblems(t *testing.T) {
	t.Parallel()
	_, err := load(writeYAML(t, "plans:\n  empty: {}\n"), true, nil, environ())
	var keys []string
	for _, e := range keyErrors(t, unwrapLoad(t, err)) {
		keys = append(keys, e.Key)
	}
	want := []string{
		"plans.empty.concurrent_executions", "plans.empty.executions_per_month", "plans.empty.max_file_size_bytes",
		"plans.empty.retention", "plans.empty.requests_per_minute", "plans.empty.cost_cap_cents",
		"plans.empty.max_cost_per_execution_cents",
	}
	if !reflect.DeepEqual(keys, want) {
		t.Errorf("declared empty plan: keys = %q\nwant %q", keys, want)
	}

	_, err = load(writeYAML(t, "plans:\n  Gold:\n    webhooks: 1\n    retention: 1h\n"), true, nil, environ())
	if n := strings.Count(err.Error(), "plans.Gold ("); n != 1 {
		t.Errorf("bad plan name reported %d times, want once:\n%v", n, err)
	}
}

// unwrapLoad returns the joined *KeyErrors inside a load error.
func unwrapLoad(t *testing.T, err error) error {
	t.Helper()
	w, ok := err.(interface{ Unwrap() error })
	if err == nil || !ok {
		t.Fatalf("load error = %v, want a wrapped joined error", err)
	}
	return w.Unwrap()
}

// TestPlanAuditRetention: every plan keeps audit events a year unless it
// says otherwise, 0 keeps them forever, and a negative value is refused
// naming the key.
func TestPlanAuditRetention(t *testing.T) {
	t.Parallel()
	full := "    concurrent_executions: 1\n    executions_per_month: 1\n    max_file_size_bytes: 1\n    retention: 1h\n" +
		"    requests_per_minute: 1\n    cost_cap_cents: 1\n    max_cost_per_execution_cents: 1\n"
	tests := []struct {
		name, yaml string
		plan       string
		want       time.Duration
		wantErr    string
	}{
		{name: "built-in default", yaml: "plans: {}\n", plan: "team", want: 8760 * time.Hour},
		{name: "new plan default", yaml: "plans:\n  gold:\n" + full, plan: "gold", want: 8760 * time.Hour},
		{name: "set", yaml: "plans:\n  gold:\n" + full + "    audit_retention: 2160h\n", plan: "gold", want: 2160 * time.Hour},
		{name: "zero keeps forever", yaml: "plans:\n  team:\n    audit_retention: 0s\n", plan: "team", want: 0},
		{name: "negative", yaml: "plans:\n  team:\n    audit_retention: -1h\n", wantErr: "plans.team.audit_retention"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := load(writeYAML(t, tt.yaml), true, nil, environ())
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one naming %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Plans[tt.plan].AuditRetention; got != tt.want {
				t.Fatalf("plans.%s.audit_retention = %s, want %s", tt.plan, got, tt.want)
			}
		})
	}
}
