package jobs

import (
	"context"
	"maps"
	"path/filepath"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/kobana/kadu/core/agent"
	"github.com/kobana/kadu/core/store"
	"github.com/kobana/kadu/core/store/pgtest"
)

// TestMaintenancePurgesAuditPerPlan: the maintenance job drops each chain's
// events older than its plan's audit_retention (the installation's chain
// follows the default plan), keeps a plan's with 0 forever, and every
// chain still verifies afterwards.
func TestMaintenancePurgesAuditPerPlan(t *testing.T) {
	keys, err := store.NewSecretKeys([]byte("audit-purge-test-master-key-of-32-bytes-or-more"))
	if err != nil {
		t.Fatal(err)
	}
	// The purge signs a checkpoint with a key derived from the secret keys.
	for _, driver := range []string{store.DriverSQLite, store.DriverPostgres} {
		t.Run(driver, func(t *testing.T) {
			testAuditPurge(t, driver, keys)
		})
	}
}

func testAuditPurge(t *testing.T, driver string, keys *store.SecretKeys) {
	dsn := filepath.Join(t.TempDir(), "kadu.db")
	if driver == store.DriverPostgres {
		dsn = pgtest.Shared(t).NewDatabase(t)
	}
	db := openStore(t, store.Options{Driver: driver, DSN: dsn, SecretKeys: keys})
	q := startQueueWith(t, db, agent.NewBuiltinRunner(nil), func(o *Options) {
		o.Plans = maps.Clone(testPlans)
		dev := o.Plans["developer"]
		dev.AuditRetention = 24 * time.Hour
		o.Plans["developer"] = dev
		forever := dev
		forever.AuditRetention = 0
		o.Plans["forever"] = forever
	})
	ctx := context.Background()
	if _, _, err := db.EnsureOrg(ctx, "org_forever", "forever"); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	chains := []string{"org_dev", "org_forever", store.InstallationChain}
	for _, org := range chains {
		for _, age := range []time.Duration{72 * time.Hour, 48 * time.Hour, 25 * time.Hour, time.Hour, time.Minute} {
			if _, err := db.AppendAudit(ctx, store.AuditRecord{OrgID: org, Action: store.AuditConfigReloaded,
				Surface: store.SurfaceSystem, Outcome: store.OutcomeSucceeded, OccurredAt: now.Add(-age)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	later := *q
	later.opts.Now = func() time.Time { return now }
	if err := (&maintenanceWorker{q: &later}).Work(ctx, &river.Job[maintenanceArgs]{}); err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"org_dev": 2, "org_forever": 5, store.InstallationChain: 2}
	for _, org := range chains {
		var left int64
		if err := db.ExportAudit(ctx, org, time.Time{}, func(store.AuditEvent) error { left++; return nil }); err != nil {
			t.Fatal(err)
		}
		checked, brk, err := db.VerifyAudit(ctx, org)
		if err != nil || brk != nil {
			t.Fatalf("chain %q after the purge: %v, %v; want it to verify from its checkpoint", org, brk, err)
		}
		if left != want[org] || checked != want[org] {
			t.Errorf("chain %q keeps %d events (%d verified), want %d", org, left, checked, want[org])
		}
	}
}
