package jobs

import (
	"context"
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
