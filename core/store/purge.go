package store

import (
	"context"
	"fmt"
	"time"
)

// Purged counts what PurgeDeleted removed.
type Purged struct {
	Tasks      int64
	Executions int64
	Steps      int64
	Webhooks   int64
	Deliveries int64 // of purged webhooks, and finished ones older than before
	Events     int64 // left without deliveries
}

// PurgeDeleted removes for good, in every organisation, the tasks and
// executions soft-deleted before before (now minus the plan's retention, for
// the periodic job), and the steps of those executions, in one transaction.
// Executions of a purged task stay (they were not deleted); their TaskID
// then names nothing. Files are not purged here: their blobs must go
// first (PurgeableFiles, delete the blobs, then PurgeFiles). Webhooks
// deleted before before go with their delivery log, and so do finished
// deliveries created before before (purgeWebhooks).
func (o *ops) PurgeDeleted(ctx context.Context, before time.Time) (Purged, error) {
	var p Purged
	t := o.d.timeArg(before)
	err := o.inTx(ctx, func(q querier) error {
		res, err := q.ExecContext(ctx, `DELETE FROM steps WHERE execution_id IN
			(SELECT id FROM executions WHERE deleted_at IS NOT NULL AND deleted_at < $1)`, t)
		if p.Steps, err = affected(res, err); err != nil {
			return fmt.Errorf("purging steps: %w", err)
		}
		res, err = q.ExecContext(ctx, `DELETE FROM executions WHERE deleted_at IS NOT NULL AND deleted_at < $1`, t)
		if p.Executions, err = affected(res, err); err != nil {
			return fmt.Errorf("purging executions: %w", err)
		}
		res, err = q.ExecContext(ctx, `DELETE FROM tasks WHERE deleted_at IS NOT NULL AND deleted_at < $1`, t)
		if p.Tasks, err = affected(res, err); err != nil {
			return fmt.Errorf("purging tasks: %w", err)
		}
		return purgeWebhooks(ctx, q, t, &p)
	})
	if err != nil {
		return Purged{}, err
	}
	return p, nil
}
