package jobs

import (
	"context"
	"fmt"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/kobana/kadu/core/store"
	"github.com/kobana/kadu/core/webhook"
)

// Metrics counts the queue's work for the operator (core/metrics). Every
// value is bounded: statuses, River queue names and job kinds are the
// package's own; outcomes come from a fixed set. Implementations must be
// safe for concurrent use and cheap.
type Metrics interface {
	// JobWorked: a River job waited wait after it became runnable, then ran
	// for ran.
	JobWorked(queue, kind string, wait, ran time.Duration, failed bool)
	// WebhookAttempt: one delivery attempt, outcome "success",
	// "network_error" or "http_<class>".
	WebhookAttempt(outcome string, d time.Duration)
	// WebhookDelivered: a delivery settled as succeeded (sinceEvent: its
	// event's age) or failed for good.
	WebhookDelivered(succeeded bool, sinceEvent time.Duration)
}

type noMetrics struct{}

func (noMetrics) JobWorked(string, string, time.Duration, time.Duration, bool) {}
func (noMetrics) WebhookAttempt(string, time.Duration)                         {}
func (noMetrics) WebhookDelivered(bool, time.Duration)                         {}

func (q *Queue) metrics() Metrics {
	if q.opts.Metrics == nil {
		return noMetrics{}
	}
	return q.opts.Metrics
}

// jobMetrics is River middleware timing every job this replica works.
type jobMetrics struct {
	river.MiddlewareDefaults
	q *Queue
}

var _ rivertype.WorkerMiddleware = &jobMetrics{}

func (m *jobMetrics) Work(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
	start := time.Now()
	err := doInner(ctx)
	m.q.metrics().JobWorked(job.Queue, job.Kind, start.Sub(job.ScheduledAt), time.Since(start), err != nil)
	return err
}

// attemptOutcome classifies a webhook attempt's result.
func attemptOutcome(res webhook.Result) string {
	switch {
	case res.OK():
		return "success"
	case res.Err != nil || res.StatusCode == 0:
		return "network_error"
	}
	return fmt.Sprintf("http_%dxx", res.StatusCode/100)
}

// observeDelivery reports an attempt, and the delivery if it settled.
func (q *Queue) observeDelivery(ctx context.Context, d store.Delivery, evt store.Event, res webhook.Result, replay bool) {
	m := q.metrics()
	if _, none := m.(noMetrics); none {
		return
	}
	m.WebhookAttempt(attemptOutcome(res), res.Duration)
	if replay {
		return // a replay does not settle the delivery
	}
	if res.OK() {
		m.WebhookDelivered(true, q.opts.Now().Sub(evt.CreatedAt))
		return
	}
	if cur, err := q.opts.Store.GetDelivery(ctx, d.OrgID, d.ID); err == nil && cur.Status == store.DeliveryFailed {
		m.WebhookDelivered(false, 0)
	}
}

// QueueCount is how many unfinished jobs one River queue holds in one state.
type QueueCount struct {
	Queue, State string
	Jobs         int64
}

// Depth counts the unfinished jobs of every queue by state, across every
// replica (they share the table). For metrics, under a short deadline.
func (q *Queue) Depth(ctx context.Context) ([]QueueCount, error) {
	rows, err := q.opts.Store.Writer().QueryContext(ctx,
		`SELECT queue, state, count(*) FROM river_job
		 WHERE state IN ('available', 'scheduled', 'retryable', 'running', 'pending')
		 GROUP BY queue, state`)
	if err != nil {
		return nil, fmt.Errorf("jobs: counting queued jobs: %w", err)
	}
	defer rows.Close()
	var out []QueueCount
	for rows.Next() {
		var c QueueCount
		if err := rows.Scan(&c.Queue, &c.State, &c.Jobs); err != nil {
			return nil, fmt.Errorf("jobs: counting queued jobs: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("jobs: counting queued jobs: %w", err)
	}
	return out, nil
}
