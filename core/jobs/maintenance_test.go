package jobs

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/kobana/kadu/core/agent"
	"github.com/kobana/kadu/core/store"
)

// TestMaintenanceExpiresWaiting runs the maintenance job with a clock past
// a pause's expiry: the execution becomes expired, a fresh pause stays.
func TestMaintenanceExpiresWaiting(t *testing.T) {
	forEachDB(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		db := open(t)
		q := startQueue(t, db, agent.NewBuiltinRunner(nil))
		exe := launch(t, db, q, "org_a", "developer", playbook(stepAsk, stepParse))
		waiting := waitStatus(t, db, "org_a", exe.ID, store.StatusWaitingInput)

		w := &maintenanceWorker{q: q}
		ctx := context.Background()
		if err := w.Work(ctx, &river.Job[maintenanceArgs]{}); err != nil {
			t.Fatal(err)
		}
		if e, _ := db.GetExecution(ctx, "org_a", exe.ID); e.Status != store.StatusWaitingInput {
			t.Fatalf("a fresh pause was expired: %s", e.Status)
		}
		later := *q
		later.opts.Now = func() time.Time { return waiting.PendingInput.ExpiresAt.Add(time.Second) }
		w = &maintenanceWorker{q: &later}
		if err := w.Work(ctx, &river.Job[maintenanceArgs]{}); err != nil {
			t.Fatal(err)
		}
		if e, _ := db.GetExecution(ctx, "org_a", exe.ID); e.Status != store.StatusExpired {
			t.Fatalf("after its expiry the execution is %s, want expired", e.Status)
		}
	})
}

// TestMaintenanceExpiresApprovals runs the maintenance job past an approval
// link's expiry: the approval becomes expired with one approval.expired
// event in its organisation's audit chain, and a second run adds none.
func TestMaintenanceExpiresApprovals(t *testing.T) {
	forEachDB(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		db := open(t)
		q := startQueue(t, db, agent.NewBuiltinRunner(nil))
		ctx := context.Background()
		now := q.opts.Now()
		if _, _, err := db.EnsureOrg(ctx, "org_a", "developer"); err != nil {
			t.Fatal(err)
		}
		a, err := db.CreateApproval(ctx, "org_a", store.Approval{Tool: "kadu_tasks_run", ToolTitle: "Run a task",
			Arguments: json.RawMessage(`{"id":"tsk_1"}`), ClientID: "client-1", ClientName: "Claude",
			Principal: store.ApprovalPrincipal{Issuer: "https://issuer.test", Subject: "alice", OrgID: "org_a",
				Role: "member", Scopes: []string{"kadu.run"}, ClientID: "client-1"},
			ExpiresAt: now.Add(time.Minute)}, now)
		if err != nil {
			t.Fatal(err)
		}
		later := *q
		later.opts.Now = func() time.Time { return now.Add(2 * time.Minute) }
		w := &maintenanceWorker{q: &later}
		for range 2 {
			if err := w.Work(ctx, &river.Job[maintenanceArgs]{}); err != nil {
				t.Fatal(err)
			}
		}
		if got, _ := db.GetApproval(ctx, "org_a", a.ID); got.Status != store.ApprovalExpired {
			t.Fatalf("after its expiry the approval is %s, want expired", got.Status)
		}
		page, err := db.ListAudit(ctx, "org_a", store.AuditFilter{Action: store.AuditApprovalExpired}, store.ListParams{})
		if err != nil {
			t.Fatal(err)
		}
		events := page.Items
		if len(events) != 1 {
			t.Fatalf("%d approval.expired events after two runs, want 1: %+v", len(events), events)
		}
		e := events[0]
		if e.ResourceID != a.ID || e.Subject != "alice" || e.Tool != "kadu_tasks_run" || e.ClientName != "Claude" ||
			e.Outcome != store.OutcomeDeclined || e.Surface != store.SurfaceSystem || e.ArgsDigest == "" {
			t.Errorf("approval.expired event = %+v", e.AuditRecord)
		}
	})
}
