package jobs

import (
	"context"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/kobana/kadu/core/audit"
	"github.com/kobana/kadu/core/store"
)

// maintenanceArgs is the periodic job (leader only) that expires
// executions left waiting for input and purges what retention allows,
// audit events included (auditpurge.go).
type maintenanceArgs struct{}

func (maintenanceArgs) Kind() string { return "maintenance" }

type maintenanceWorker struct {
	river.WorkerDefaults[maintenanceArgs]
	q *Queue
}

// Timeout: expiry and purge may take a while on a big database; River's
// rescuer runs a dead replica's maintenance job again after it (the work
// is idempotent).
func (w *maintenanceWorker) Timeout(*river.Job[maintenanceArgs]) time.Duration { return jobTimeout }

func (w *maintenanceWorker) Work(ctx context.Context, job *river.Job[maintenanceArgs]) error {
	q, now := w.q, w.q.opts.Now()
	// Expired and execution.expired commit together.
	var expired []store.Execution
	err := q.opts.Store.InTx(ctx, func(tx *store.Tx) error {
		var err error
		if expired, err = tx.ExpireWaiting(ctx, now); err != nil {
			return err
		}
		for _, e := range expired {
			if err := q.emitExecution(ctx, tx, e); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, e := range expired {
		q.log.InfoContext(ctx, "execution expired waiting for input", slog.String("execution_id", e.ID), slog.String("org_id", e.OrgID))
	}
	// Soft-deleted rows go after the longest retention of any plan: the
	// store purges across organisations in one statement, and no
	// organisation may lose rows before its own plan allows.
	retention := time.Duration(0)
	for _, p := range q.opts.Plans {
		retention = max(retention, p.Retention)
	}
	if retention > 0 {
		if _, err := q.opts.Store.PurgeDeleted(ctx, now.Add(-retention)); err != nil {
			return err
		}
	}
	if err := q.maintainFiles(ctx, now, retention); err != nil { // files.go
		return err
	}
	// Overdue approvals read as expired already; this records it, each
	// with its approval.expired audit event in the same transaction.
	if err := q.expireApprovals(ctx, now); err != nil {
		return err
	}
	// Drops answered confirmations and approvals long past their expiry.
	if _, err := q.opts.Store.PurgeConfirmations(ctx, now); err != nil {
		return err
	}
	if _, err := q.opts.Store.PurgeIdempotency(ctx, now.Add(-store.IdempotencyRetention)); err != nil {
		return err
	}
	return q.purgeAudit(ctx, now) // auditpurge.go
}

// expireApprovals marks overdue approvals expired, recording each in the
// audit trail with this run's trace (docs/audit.md#confirmations-and-approvals).
func (q *Queue) expireApprovals(ctx context.Context, now time.Time) error {
	expired, err := q.opts.Store.ExpireApprovals(ctx, now, func(a store.Approval) store.AuditRecord {
		return audit.Approval(ctx, a, store.AuditApprovalExpired, store.OutcomeDeclined)
	})
	for _, a := range expired {
		q.log.InfoContext(ctx, "approval expired", slog.String("approval_id", a.ID), slog.String("org_id", a.OrgID))
	}
	return err
}
