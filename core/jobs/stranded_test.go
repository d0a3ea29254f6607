package jobs

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/kobana/kadu/core/store"
)

// TestSweepRequeuesAJobFetchedByADeadReplica: a replica fetches an
// execution's job and stops answering before starting it (killed, or only
// very slow). Another replica runs the execution within about RescueAfter
// instead of leaving it queued until River's rescuer; when the original
// worker wakes up it finds the execution started and does nothing, so the
// execution runs once; its stranded job ends cancelled.
func TestSweepRequeuesAJobFetchedByADeadReplica(t *testing.T) {
	forEachDB(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		db := open(t)
		runner := &countingRunner{runs: map[string]int{}}
		held := make(chan int64, 1)
		wake := make(chan struct{})
		woke := make(chan error, 1)
		stuck := startQueueWith(t, db, runner, func(o *Options) {
			o.RescueAfter = time.Hour // its own sweeper stays out of the way
			o.beforeStart = func(ctx context.Context, job *river.Job[executeArgs]) error {
				if job.Args.Supersedes != 0 {
					return nil
				}
				held <- job.ID
				select {
				case <-wake: // slow, not dead: it goes on and tries to start the execution
					woke <- nil
					return nil
				case <-ctx.Done():
					woke <- context.Cause(ctx)
					return context.Cause(ctx)
				}
			}
		})
		exe := launch(t, db, stuck, "org_a", "developer", playbook(stepParse))
		var stranded int64
		select {
		case stranded = <-held:
		case <-time.After(20 * time.Second):
			t.Fatal("the job was never fetched")
		}

		startQueueWith(t, db, runner, func(o *Options) { o.RescueAfter = time.Second })
		waitStatus(t, db, "org_a", exe.ID, store.StatusSucceeded)
		close(wake)

		deadline := time.Now().Add(30 * time.Second)
		for {
			job, err := stuck.client.JobGet(context.Background(), stranded)
			if err != nil {
				t.Fatal(err)
			}
			if job.State == rivertype.JobStateCancelled || job.State == rivertype.JobStateCompleted {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the stranded job is still %s, want it finalized", job.State)
			}
			time.Sleep(50 * time.Millisecond)
		}
		select {
		case <-woke:
		case <-time.After(20 * time.Second):
			t.Fatal("the original worker never returned")
		}
		got := waitStatus(t, db, "org_a", exe.ID, store.StatusSucceeded)
		if got.Failure != nil {
			t.Errorf("failure %+v, want none", got.Failure)
		}
		runner.mu.Lock()
		defer runner.mu.Unlock()
		if n := runner.runs[exe.ID]; n != 1 {
			t.Errorf("the execution ran %d times, want 1", n)
		}
	})
}

// TestDeliveryOfADeadReplicaIsSentAgain: a delivery job whose replica dies
// mid-attempt (here: never returns) is sent again by another replica
// about RescueAfter after the attempt's timeout, not ten minutes later
// (at least once: a slow live attempt may be sent twice, never none).
func TestDeliveryOfADeadReplicaIsSentAgain(t *testing.T) {
	forEachDB(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		db := open(t)
		rc := newReceiver(t, always(http.StatusOK))
		held := make(chan struct{})
		release := make(chan struct{})
		var once sync.Once
		fast := func(o *Options) {
			o.WebhookAllowHosts = []string{"127.0.0.1"}
			// A live attempt that outlives its job's timeout is sent again
			// too (at least once): leave it time on a busy machine.
			o.WebhookTimeout, o.TimeoutGrace, o.RescueAfter = 200*time.Millisecond, 2*time.Second, time.Second
		}
		dead := startQueueWith(t, db, &countingRunner{runs: map[string]int{}}, func(o *Options) {
			fast(o)
			o.beforeDeliver = func(ctx context.Context, job *river.Job[deliverArgs]) {
				first := false
				once.Do(func() { first = true })
				if first {
					close(held)
					<-release // dead: its context's end changes nothing
				}
			}
		})
		t.Cleanup(func() { close(release) })
		hook := hookOrg(t, db, "org_dead", rc.url, store.EventExecutionFailed)
		emitObject(t, dead, "org_dead", store.EventExecutionFailed)
		select {
		case <-held:
		case <-time.After(20 * time.Second):
			t.Fatal("the delivery job was never fetched")
		}
		startQueueWith(t, db, &countingRunner{runs: map[string]int{}}, fast)

		// River's rescuer looks every 30 s; the budget allows two rounds.
		deadline := time.Now().Add(90 * time.Second)
		for {
			ds := deliveriesTo(t, db, "org_dead", hook.ID)
			if len(ds) == 1 && ds[0].Status == store.DeliverySucceeded {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("deliveries %+v: want the one delivery sent again and succeeded", ds)
			}
			time.Sleep(100 * time.Millisecond)
		}
		if n := len(rc.requests()); n < 1 {
			t.Errorf("the receiver got %d requests, want at least 1", n)
		}
	})
}
