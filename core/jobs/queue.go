package jobs

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/kobana/kadu/core/agent"
	"github.com/kobana/kadu/core/plans"
	"github.com/kobana/kadu/core/store"
	"github.com/kobana/kadu/core/webhook"
)

// Options configure a Queue. Store, Runner, Plans and DefaultPlan are
// required (DefaultPlan may be left out with PlanResolver).
type Options struct {
	Store  *store.DB
	Runner agent.Runner
	// Plans are the configured plans; the maintenance job keeps
	// soft-deleted rows for the longest retention among them.
	Plans map[string]plans.Plan
	// DefaultPlan, one of Plans, is the plan of an organisation whose own
	// plan is not configured: its limits and monthly cost cap apply. Used
	// only when PlanResolver is nil.
	DefaultPlan string
	// PlanResolver finds each organisation's plan (core/plans); give the
	// process's one resolver so that every package shares its cache. Nil:
	// New builds one over Store from Plans and DefaultPlan.
	PlanResolver *plans.Resolver
	// RescueAfter is how long a running or cancelling execution may go
	// without its replica renewing its lease before any replica gives it
	// up (sweep.go): running fails with replica_lost, cancelling ends
	// cancelled. The lease is renewed, and lost runs looked for, every
	// quarter of it. Default 1 min (config runner.rescue_after).
	RescueAfter time.Duration
	// TimeoutGrace is how long a run may go on after its timeout_seconds
	// or a cancel before the worker stops waiting for the runner and
	// settles the execution anyway (default 10 s).
	TimeoutGrace time.Duration
	// OutputDir is where output files are written when Blobs is nil:
	// OutputDir/<org>/<execution>/<file id>/<name>, with no files row.
	OutputDir string
	// Blobs keeps file contents (core/blob): executions read their input
	// files from it, output files are written to it with a files row, and
	// the maintenance job deletes the blobs of expired uploads and purged
	// files. Nil: an execution with input files fails with invalid_input,
	// output files go to OutputDir, and expired uploads are only marked.
	Blobs Blobs
	// Workers is how many executions run at once on this replica
	// (default 10); each organisation's plan still caps its own.
	Workers int
	// PollInterval is how often the queue looks for new jobs (default
	// 100 ms: an indexed query, cheap on both databases, and the bound on how
	// long a launched execution waits to start).
	PollInterval time.Duration
	// ListenerDSN, on PostgreSQL, is the connection string for the one
	// connection that LISTENs for new jobs, so a launch usually starts in a
	// few milliseconds (River skips notifications closer than 100 ms apart;
	// the poll catches those). Empty: poll only.
	ListenerDSN string
	// WaitingTTL is how long an execution waits for input before it expires
	// (default 24 h).
	WaitingTTL time.Duration
	// CancelCheck is how often a running execution checks whether it was
	// cancelled from another replica (default 500 ms).
	CancelCheck time.Duration
	// MaintenanceInterval spaces expiry and purge runs (default 1 min).
	MaintenanceInterval time.Duration
	// ExecutionJSON renders an execution as the object of its events
	// (execution.started, …): the app gives api.ExecutionJSON with the
	// organisation's plan. Nil: {"id","object":"execution","status","task_id"}.
	ExecutionJSON func(store.Execution) json.RawMessage
	// FileJSON renders a file as the object of file.ready, emitted when an
	// execution writes an output file: the app gives api.FileJSON. Nil:
	// {"id","object":"file","status","purpose","execution_id"}.
	FileJSON func(store.File) json.RawMessage
	// WebhookJSON renders a webhook as the object of webhook.disabled; it
	// must leave the secrets out (api.WebhookJSON does). Nil:
	// {"id","object":"webhook","url","status","disabled_reason"}.
	WebhookJSON func(store.Webhook) json.RawMessage
	// WebhookAllowHosts are the hosts deliveries may reach over plain http
	// or at private addresses, for development (webhook.ClientOptions).
	// Nil: https to public addresses only.
	WebhookAllowHosts []string
	// WebhookTimeout bounds one delivery attempt (default 15 s).
	WebhookTimeout time.Duration
	// WebhookWorkers is how many deliveries are sent at once on this
	// replica (default 10), in a River queue of their own so that slow
	// receivers never hold up executions.
	WebhookWorkers int
	Logger         *slog.Logger // nil discards; the caller passes its logger
	// TracerProvider and Propagator, both set, run each job under a span
	// linked to the request that enqueued it and pass the trace context on
	// to webhook receivers (trace.go). Nil: no spans, nothing propagated.
	TracerProvider trace.TracerProvider
	Propagator     propagation.TextMapPropagator
	// Now is the clock of waiting_input expiry, maintenance and webhook
	// attempts (their timestamps and retry schedule). Default time.Now.
	Now func() time.Time
	// Metrics counts transitions, jobs and webhook attempts (metrics.go).
	// Nil: none.
	Metrics Metrics

	// beforeStart, for tests, runs in an execute job between fetching a
	// queued execution and starting it: where a replica killed then leaves
	// the execution stranded (stranded.go).
	beforeStart func(context.Context, *river.Job[executeArgs]) error
	// beforeDeliver, for tests, runs at the start of a deliver job.
	beforeDeliver func(context.Context, *river.Job[deliverArgs])
}

// Queue is the River client of one replica. Start it to work jobs; it can
// enqueue without being started. Safe for concurrent use.
type Queue struct {
	// fixed at creation
	client   *river.Client[*sql.Tx]
	listener *pgxpool.Pool // nil: poll only
	hooks    *webhook.Client
	opts     Options
	log      *slog.Logger
	owner    string // this replica's name in run leases (store.ClaimRun)

	sweeper *sweeper // sweep.go; a pointer so that tests may copy a Queue
}

// New migrates River's tables in the store's database and builds the
// client. Nothing runs until Start.
func New(ctx context.Context, opts Options) (*Queue, error) {
	if opts.Store == nil || opts.Runner == nil || opts.Plans == nil {
		return nil, errors.New("jobs: Options.Store, Runner and Plans are required")
	}
	if opts.PlanResolver == nil {
		r, err := plans.New(plans.Options{Plans: opts.Plans, Default: opts.DefaultPlan,
			Lookup: opts.Store.PlanOf, Logger: opts.Logger})
		if err != nil {
			return nil, fmt.Errorf("jobs: Options.Plans: %w", err)
		}
		opts.PlanResolver = r
	}
	if opts.RescueAfter <= 0 {
		opts.RescueAfter = time.Minute
	}
	if opts.TimeoutGrace <= 0 {
		opts.TimeoutGrace = 10 * time.Second
	}
	if opts.Workers <= 0 {
		opts.Workers = 10
	}
	if opts.WaitingTTL <= 0 {
		opts.WaitingTTL = 24 * time.Hour
	}
	if opts.CancelCheck <= 0 {
		opts.CancelCheck = 500 * time.Millisecond
	}
	if opts.MaintenanceInterval <= 0 {
		opts.MaintenanceInterval = time.Minute
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler) // never the process-wide default
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	driver, err := newDriver(opts.Store)
	if err != nil {
		return nil, err
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = 100 * time.Millisecond
	}
	if err := migrate(ctx, driver, opts.Logger); err != nil {
		return nil, err
	}

	if opts.ExecutionJSON == nil {
		opts.ExecutionJSON = minimalExecutionJSON
	}
	if opts.WebhookJSON == nil {
		opts.WebhookJSON = minimalWebhookJSON
	}
	if opts.WebhookWorkers <= 0 {
		opts.WebhookWorkers = 10
	}
	q := &Queue{opts: opts, log: opts.Logger, owner: replicaName(), sweeper: &sweeper{}, hooks: webhook.NewClient(webhook.ClientOptions{
		AllowHosts: opts.WebhookAllowHosts, Timeout: opts.WebhookTimeout, Propagate: propagateFunc(opts.Propagator)})}
	pollOnly := true
	if opts.ListenerDSN != "" && opts.Store.Driver() == store.DriverPostgres {
		cfg, err := pgxpool.ParseConfig(opts.ListenerDSN)
		if err != nil {
			return nil, fmt.Errorf("jobs: listener DSN: %w", err)
		}
		cfg.MinConns, cfg.MaxConns = 0, 1 // River hijacks the one connection it listens on
		if q.listener, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
			return nil, fmt.Errorf("jobs: listener pool: %w", err)
		}
		driver, pollOnly = riverdatabasesql.NewWithPgxListener(opts.Store.Writer(), q.listener), false
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, &executeWorker{q: q})
	river.AddWorker(workers, &maintenanceWorker{q: q})
	river.AddWorker(workers, &deliverWorker{q: q})
	river.AddWorker(workers, &replayWorker{q: q})
	client, err := river.NewClient(driver, &river.Config{
		Queues: map[string]river.QueueConfig{
			river.QueueDefault: {MaxWorkers: opts.Workers},
			queueWebhooks:      {MaxWorkers: opts.WebhookWorkers},
		},
		Workers:           workers,
		Middleware:        append([]rivertype.Middleware{&jobMetrics{q: q}}, traceMiddlewares(opts)...),
		FetchPollInterval: opts.PollInterval,
		// A notified insert is fetched at most this long after the previous
		// fetch (River's default, 100 ms, would make every launch wait it).
		FetchCooldown: min(20*time.Millisecond, opts.PollInterval),
		PollOnly:      pollOnly,
		// Every job has a timeout, so that River's rescuer retries the jobs
		// of a replica that died (a timeout of -1 would leave them running
		// for ever): it looks at jobs running for longer than
		// RescueStuckJobsAfter and retries those past their own worker's
		// Timeout. Deliveries take deliveryTimeout, so a delivery of a dead
		// replica is sent again RescueAfter after it; maintenance takes
		// jobTimeout (maintenanceWorker.Timeout); executions take their own
		// (executeWorker.Timeout), and the sweeper deals with their rows
		// much sooner (sweep.go, stranded.go).
		JobTimeout:           q.deliveryTimeout(),
		RescueStuckJobsAfter: q.deliveryTimeout() + opts.RescueAfter,
		MaxAttempts:          5,
		Logger:               quiet(opts.Logger),
		PeriodicJobs: []*river.PeriodicJob{
			river.NewPeriodicJob(river.PeriodicInterval(opts.MaintenanceInterval),
				func() (river.JobArgs, *river.InsertOpts) { return maintenanceArgs{}, nil },
				&river.PeriodicJobOpts{RunOnStart: true, ID: "maintenance"}),
		},
	})
	if err != nil {
		q.Close()
		return nil, fmt.Errorf("jobs: %w", err)
	}
	q.client = client
	return q, nil
}

// Close releases the listener pool; call it after Stop. The store stays
// open: it is the caller's.
func (q *Queue) Close() {
	if q.listener != nil {
		q.listener.Close()
	}
}

// newDriver picks River's driver for the store's database.
func newDriver(db *store.DB) (riverdriver.Driver[*sql.Tx], error) {
	switch db.Driver() {
	case store.DriverSQLite:
		return riversqlite.New(db.Writer()), nil
	case store.DriverPostgres:
		return riverdatabasesql.New(db.Writer()), nil
	}
	return nil, fmt.Errorf("jobs: unknown store driver %q", db.Driver())
}

// Migrate creates or upgrades the queue's tables in the store's database;
// New does it too. For `kadu migrate`.
func Migrate(ctx context.Context, db *store.DB, log *slog.Logger) error {
	driver, err := newDriver(db)
	if err != nil {
		return err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return migrate(ctx, driver, log)
}

func migrate(ctx context.Context, driver riverdriver.Driver[*sql.Tx], log *slog.Logger) error {
	migrator, err := rivermigrate.New(driver, &rivermigrate.Config{Logger: quiet(log)})
	if err != nil {
		return fmt.Errorf("jobs: %w", err)
	}
	if _, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("jobs: migrating the queue's tables: %w", err)
	}
	return nil
}

// quiet keeps River's own chatter at warn and above.
func quiet(l *slog.Logger) *slog.Logger {
	return slog.New(levelFloor{l.Handler(), slog.LevelWarn})
}

type levelFloor struct {
	slog.Handler
	min slog.Level
}

func (h levelFloor) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h levelFloor) WithAttrs(as []slog.Attr) slog.Handler {
	return levelFloor{h.Handler.WithAttrs(as), h.min}
}

func (h levelFloor) WithGroup(name string) slog.Handler {
	return levelFloor{h.Handler.WithGroup(name), h.min}
}

// Start begins working jobs, and looking for executions whose replica
// died (sweep.go), until Stop.
func (q *Queue) Start(ctx context.Context) error {
	if err := q.client.Start(ctx); err != nil {
		return err
	}
	q.sweeper.start(q)
	return nil
}

// Stop stops fetching, lets running jobs finish until ctx is done, then
// cancels them. An execution interrupted that way stays running, its lease
// is handed back, and its job is retried, on any replica, from the start
// of its current run.
func (q *Queue) Stop(ctx context.Context) error {
	q.sweeper.stop()
	err := q.client.Stop(ctx)
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return q.client.StopAndCancel(context.Background())
	}
	return err
}

// EnqueueExecution inserts the job that runs execution id inside tx, so the
// job exists exactly when the transaction that made the execution queued
// commits.
func (q *Queue) EnqueueExecution(ctx context.Context, tx *store.Tx, orgID, executionID string) error {
	_, err := q.client.InsertTx(ctx, tx.SQL(), executeArgs{OrgID: orgID, ExecutionID: executionID}, nil)
	if err != nil {
		return fmt.Errorf("enqueueing execution %s: %w", executionID, err)
	}
	return nil
}

// EnqueueResume inserts, inside tx, the job that resumes execution id
// (just moved from waiting_input back to queued) with the answer.
func (q *Queue) EnqueueResume(ctx context.Context, tx *store.Tx, orgID, executionID string, r ResumeAnswer) error {
	_, err := q.client.InsertTx(ctx, tx.SQL(), executeArgs{OrgID: orgID, ExecutionID: executionID, Resume: &r}, nil)
	if err != nil {
		return fmt.Errorf("enqueueing execution %s: %w", executionID, err)
	}
	return nil
}

// CancelRunning is a no-op hook: a running execution polls its own status
// every CancelCheck and stops within about that long once it reads
// cancelling, on whichever replica runs it.
func (q *Queue) CancelRunning(ctx context.Context, orgID, executionID string) error { return nil }
