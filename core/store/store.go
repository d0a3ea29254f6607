package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"time"
)

// Driver names accepted in Options.Driver and returned by DB.Driver.
const (
	DriverSQLite   = "sqlite"
	DriverPostgres = "postgres"
)

// Options configures Open and Migrate. Only Driver and DSN are required.
type Options struct {
	// Driver is DriverSQLite or DriverPostgres.
	Driver string

	// DSN is, for SQLite, the database file as a path or a file: URI,
	// either with optional driver parameters after '?' (the embedded default
	// is <data_dir>/kadu.db; a missing directory is created 0700; in-memory
	// databases are refused); for PostgreSQL, a URL or keyword/value string
	// pgx understands ("postgres://user@host:5432/kadu?sslmode=disable").
	DSN string

	// MaxConns bounds the PostgreSQL pool, or the SQLite read-only pool (the
	// SQLite writer is always one connection). Default 16 for PostgreSQL,
	// max(4, 2×GOMAXPROCS) for the SQLite readers.
	MaxConns int

	// Logger receives migration progress. Default: discard.
	Logger *slog.Logger

	// SecretKeys encrypts webhook secrets and idempotency records at rest
	// (see SecretKeys); Open encrypts the rows still in clear, and those
	// under a former key, with its first key. core/app always sets it. Nil
	// stores secrets in clear: for tests only.
	SecretKeys *SecretKeys

	// Now is the clock for created_at, updated_at and the like. Times are
	// stored in UTC with microsecond precision. Default time.Now.
	Now func() time.Time

	// Observer sees every statement (metrics, traces); combine several with
	// Observers. Nil: none, at no cost.
	Observer Observer

	// OnTransition is told of every change of an execution's status, by
	// whatever made it (a worker, the API, the sweeper, expiry), once the
	// UPDATE has succeeded inside its transaction: a transaction that then
	// rolls back (its commit failing) has still been told. For counting;
	// it must be cheap and safe for concurrent use. Nil: none.
	OnTransition func(from, to Status)

	// IdempotencyLock is how long an idempotency record may stay in flight
	// before BeginIdempotent presumes its request lost with its replica and
	// takes the key over. It must exceed the longest a request may run:
	// core/app gives http.write_timeout plus a margin. Default
	// IdempotencyLockTimeout.
	IdempotencyLock time.Duration

	// Inspect opens the database as it is: no migration, no resealing of
	// secrets. For commands that read what a server wrote (kadu audit),
	// which must not change the schema or the rows under servers of
	// another version; they fail with a clear error on a schema that is
	// behind.
	Inspect bool
}

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.IdempotencyLock <= 0 {
		o.IdempotencyLock = IdempotencyLockTimeout
	}
	if o.MaxConns <= 0 {
		switch o.Driver {
		case DriverPostgres:
			o.MaxConns = 16
		default:
			o.MaxConns = max(4, 2*runtime.GOMAXPROCS(0))
		}
	}
	return o
}

// DB is an open store. Its methods (promoted from the embedded query set)
// read from a pool of readers and write through the writer.
//
// A DB is safe for concurrent use. Close closes every connection it opened;
// the *sql.DB returned by Writer must not be used afterwards and must not be
// closed by anyone else.
//
// On SQLite the writer is a single connection (WAL, busy_timeout 10 s,
// BEGIN IMMEDIATE) and reads go through a separate query-only pool, so a
// long write transaction never delays an API read. On PostgreSQL both are the
// same pool.
type DB struct {
	ops // every query; reads use reader, writes use writer

	driver string
	writer *sql.DB   // one connection on SQLite
	reader *sql.DB   // == writer on PostgreSQL
	health *health   // storage-unavailable failures of writes, for Ready
	obs    Observer  // nil: statements are not observed
	names  *sync.Map // statement text → operation name, for obs
	// prepared holds the SQLite readers' prepared statements; nil on
	// PostgreSQL (pgx caches them itself).
	prepared *preparedReader
}

// Open connects to the database Options name, applies pending migrations
// (unless Options.Inspect) and returns a ready DB. On error nothing stays
// open.
func Open(ctx context.Context, opts Options) (*DB, error) {
	opts = opts.withDefaults()
	d, err := dialectFor(opts.Driver)
	if err != nil {
		return nil, err
	}
	writer, reader, err := d.open(ctx, opts)
	if err != nil {
		return nil, err
	}
	if !opts.Inspect {
		if err := migrate(ctx, d, writer, opts.Logger); err != nil {
			closeBoth(writer, reader)
			return nil, err
		}
	}
	db := &DB{driver: opts.Driver, writer: writer, reader: reader, health: &health{now: time.Now}, obs: opts.Observer, names: new(sync.Map)}
	var read querier = reader
	if opts.Driver == DriverSQLite {
		db.prepared = newPreparedReader(reader)
		read = db.prepared
	}
	db.ops = ops{
		d:        d,
		now:      opts.Now,
		keys:     opts.SecretKeys,
		moved:    opts.OnTransition,
		idemLock: opts.IdempotencyLock,
		read:     observe(read, db.obs, db.names),
		inTx: func(ctx context.Context, fn func(q querier) error) error {
			return db.withTx(ctx, func(tx *sql.Tx) error { return fn(observe(tx, db.obs, db.names)) })
		},
	}
	// A single-statement write whose context carries an audit record runs
	// in a transaction that appends it (auditedWriter).
	db.ops.write = auditedWriter{querier: observe(trackedWriter{writer, db.health}, db.obs, db.names), inTx: db.ops.inTx}
	if opts.Inspect {
		return db, nil
	}
	if err := db.resealWebhookSecrets(ctx, opts.Logger); err != nil {
		_ = db.Close()
		return nil, err
	}
	return db, nil
}

// Migrate applies pending migrations to the database Options name and
// closes its connections: what `kadu migrate` runs. Open migrates too, so a
// server never needs it; replicas on PostgreSQL serialise on an advisory
// lock.
func Migrate(ctx context.Context, opts Options) error {
	opts = opts.withDefaults()
	d, err := dialectFor(opts.Driver)
	if err != nil {
		return err
	}
	writer, reader, err := d.open(ctx, opts)
	if err != nil {
		return err
	}
	defer closeBoth(writer, reader)
	return migrate(ctx, d, writer, opts.Logger)
}

// Close closes the reader pool and the writer. It waits for queries in
// progress; a transaction still open in InTx keeps the writer until it ends.
func (db *DB) Close() error {
	var err error
	if db.prepared != nil {
		err = db.prepared.Close()
	}
	return errors.Join(err, closeBoth(db.writer, db.reader))
}

func closeBoth(writer, reader *sql.DB) error {
	var err error
	if reader != writer {
		err = reader.Close()
	}
	return errors.Join(err, writer.Close())
}

// Driver returns DriverSQLite or DriverPostgres.
func (db *DB) Driver() string { return db.driver }

// Writer returns the pool writes go through, for the job queue's driver
// (River's riversqlite on SQLite, riverdatabasesql on PostgreSQL). On SQLite
// it has exactly one connection: whoever holds it (an open InTx, a River
// transaction) makes every other writer wait. The DB owns it: do not close it
// or change its limits.
func (db *DB) Writer() *sql.DB { return db.writer }

// InTx runs fn in one transaction on the writer and commits if fn returns
// nil; it rolls back if fn returns an error or panics. The error is fn's, or
// the commit's.
//
// Inside fn use only tx (its methods and tx.SQL()): on SQLite the DB's own
// write methods wait for the writer connection fn is holding, which
// deadlocks until ctx ends. The DB's read methods are fine but do not see
// fn's uncommitted writes. tx must not be used after fn returns.
func (db *DB) InTx(ctx context.Context, fn func(tx *Tx) error) error {
	return db.withTx(ctx, func(sqlTx *sql.Tx) error {
		tx := &Tx{tx: sqlTx}
		tx.ops = ops{
			d:        db.d,
			now:      db.now,
			keys:     db.keys,
			moved:    db.moved,
			idemLock: db.idemLock,
			read:     observe(sqlTx, db.obs, db.names),
			write:    observe(sqlTx, db.obs, db.names),
			inTx: func(_ context.Context, fn func(q querier) error) error {
				return fn(observe(sqlTx, db.obs, db.names))
			},
		}
		return fn(tx)
	})
}

// withTx runs fn in a transaction on the writer; an error that says the
// storage is unavailable marks the DB's health (Ready).
func (db *DB) withTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	if db.obs == nil {
		return db.health.observe(db.runTx(ctx, fn))
	}
	// The transaction is one operation around its statements (a parent
	// span, the time the writer was held).
	ctx, done := db.obs.Start(ctx, "transaction")
	err := db.health.observe(db.runTx(ctx, fn))
	done(err)
	return err
}

func (db *DB) runTx(ctx context.Context, fn func(tx *sql.Tx) error) (err error) {
	sqlTx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		forgetCreated(ctx)
		return fmt.Errorf("beginning transaction: %w", err)
	}
	committed := false
	defer func() {
		if !committed {
			_ = sqlTx.Rollback() // the error worth reporting is fn's or the panic
			forgetCreated(ctx)
		}
	}()
	if err := fn(sqlTx); err != nil {
		return err
	}
	// The audit record the context carries (WithAudit) commits with the
	// change it records, or not at all.
	pending, err := appendPending(ctx, observe(sqlTx, db.obs, db.names), db.d, db.clock)
	if err != nil {
		return fmt.Errorf("appending the audit record: %w", err)
	}
	if err := sqlTx.Commit(); err != nil {
		committed = true // a failed Commit has already ended the transaction
		if pending != nil {
			pending.release()
		}
		forgetCreated(ctx)
		return fmt.Errorf("committing transaction: %w", err)
	}
	committed = true
	if pending != nil {
		pending.committed()
	}
	return nil
}

// Tx is one transaction on the writer, handed to the function given to
// DB.InTx. It has every method of DB; they run inside the transaction and
// see its uncommitted writes.
//
// A Tx is not safe for concurrent use and is valid only until that function
// returns.
type Tx struct {
	ops
	tx *sql.Tx
}

// SQL returns the transaction itself, for code that must write in the same
// transaction (River's InsertTx). Do not commit or roll it back: InTx does.
func (tx *Tx) SQL() *sql.Tx { return tx.tx }

// querier is what *sql.DB and *sql.Tx have in common.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// ops holds every query of the store; DB and Tx embed it, so each method is
// written once and runs either on the pools or inside one transaction.
// An ops is immutable after construction.
type ops struct {
	d     dialect
	now   func() time.Time
	keys  *SecretKeys           // nil: secrets stored in clear (tests)
	moved func(from, to Status) // Options.OnTransition; nil: none
	// idemLock is Options.IdempotencyLock.
	idemLock time.Duration
	read     querier // single reads: the reader pool, or the transaction
	write    querier // single-statement writes: the writer, or the transaction
	// inTx runs fn in a transaction: a new one on the writer for DB, the
	// current one for Tx.
	inTx func(ctx context.Context, fn func(q querier) error) error
}

// clock returns the current time as the store records it.
func (o *ops) clock() time.Time { return o.now().UTC().Truncate(time.Microsecond) }
