package store

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"time"
)

// probeEvery is the least time between two storage probes: /readyz may be
// polled often, a probe writes.
const probeEvery = time.Second

// probePad is how much a probe writes (and rolls back): enough to need new
// pages in a full SQLite file (4 KiB pages) and a WAL segment's worth of
// work in PostgreSQL, so that a probe does not pass while real writes fail.
const probePad = 64 << 10

// health remembers whether the storage was last seen unavailable (a disk
// full, I/O errors, an unreachable PostgreSQL), for readiness. Every write
// of the store that fails with an Unavailable error marks it degraded; only
// a successful probe clears it, not any write that happens to succeed: an
// UPDATE in place needs no new page and succeeds on a full disk while every
// INSERT fails, and readiness would flap.
//
// A health is safe for concurrent use.
type health struct {
	now func() time.Time

	mu       sync.Mutex // guards the fields below
	failedAt time.Time  // first failure since the last clear; zero: healthy
	kind     string     // Classify of the latest failure
	probedAt time.Time
}

// observe records err if it is an Unavailable error; it returns err.
func (h *health) observe(err error) error {
	kind := Classify(err)
	if kind == "" {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.failedAt.IsZero() {
		h.failedAt = h.now()
	}
	h.kind = kind
	return err
}

// state returns the failure being remembered (zero time: none) and whether
// a probe is due.
func (h *health) state() (since time.Time, kind string, probe bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.failedAt.IsZero() {
		return time.Time{}, "", false
	}
	now := h.now()
	if now.Sub(h.probedAt) < probeEvery {
		return h.failedAt, h.kind, false
	}
	h.probedAt = now
	return h.failedAt, h.kind, true
}

func (h *health) clear() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.failedAt, h.kind = time.Time{}, ""
}

// Ready reports whether the storage takes writes, for the admin /readyz: nil
// while no write has failed with an Unavailable error since the last
// successful probe. After such a failure it probes — a transaction that
// creates a scratch table, writes 64 KiB into it and rolls back, at most
// once a second — and answers an error matching ErrUnavailable, naming the
// kind (disk_full, io_error, …) and since when, until a probe succeeds.
//
// The API does not consult Ready: each request still tries its write, and
// answers 503 only if that write fails.
func (db *DB) Ready(ctx context.Context) error {
	since, kind, probe := db.health.state()
	if since.IsZero() {
		return nil
	}
	if probe {
		err := db.probe(ctx)
		if err == nil {
			db.health.clear()
			return nil
		}
		if k := Classify(err); k != "" {
			kind = k
		}
	}
	return fmt.Errorf("storage %s since %s: %w", kind, since.UTC().Format(time.RFC3339), ErrUnavailable)
}

// probe writes probePad bytes in a transaction it rolls back, through the
// writer, so that it meets the same limits the store's writes meet.
func (db *DB) probe(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	tx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("storage probe: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // the probe never commits
	blob := "BLOB"
	if db.driver == DriverPostgres {
		blob = "bytea"
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE kadu_storage_probe (pad `+blob+`)`); err != nil {
		return fmt.Errorf("storage probe: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO kadu_storage_probe (pad) VALUES ($1)`, probePadBytes()); err != nil {
		return fmt.Errorf("storage probe: %w", err)
	}
	return nil
}

// probePadBytes are not all zero, so that neither a compressing file system
// nor PostgreSQL's TOAST compression shrinks them to nothing.
func probePadBytes() []byte {
	b := make([]byte, probePad)
	x := uint32(2463534242)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}

// trackedWriter is the DB's writer as its single-statement writes see it:
// failures that say the storage is unavailable mark the health.
type trackedWriter struct {
	*sql.DB
	h *health
}

func (w trackedWriter) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	res, err := w.DB.ExecContext(ctx, query, args...)
	return res, w.h.observe(err)
}

func (w trackedWriter) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	rows, err := w.DB.QueryContext(ctx, query, args...)
	return rows, w.h.observe(err)
}
