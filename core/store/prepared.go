package store

import (
	"context"
	"database/sql"
	"errors"
	"sync"
)

// maxPreparedReads bounds how many distinct statements a preparedReader
// keeps. The store's SQL is a bounded set of constant texts (list queries
// vary only in which filters they combine), far fewer than this; a text past
// the bound still runs, unprepared.
const maxPreparedReads = 256

// preparedReader runs the reads of the SQLite reader pool as prepared
// statements, one per distinct query text, reused across calls.
//
// modernc.org/sqlite compiles the SQL of every unprepared query (parse and
// code generation were about 80 % of GET /executions/{id}'s query); a
// *sql.Stmt keeps the compiled statement on each connection of the pool
// that has run it. PostgreSQL needs no such wrapper: pgx already caches
// prepared statements per connection.
//
// It is safe for concurrent use. Close closes the statements, not the pool.
type preparedReader struct {
	db *sql.DB

	mu    sync.RWMutex // guards stmts
	stmts map[string]*sql.Stmt
	// closed: no statement is prepared any more (Close ran).
	closed bool
}

func newPreparedReader(db *sql.DB) *preparedReader {
	return &preparedReader{db: db, stmts: make(map[string]*sql.Stmt)}
}

// stmt returns the prepared statement for query, preparing it on first use,
// or nil when the cache is full or closed, or the text does not prepare
// (the caller then runs it unprepared, so the error it reports is the one
// the query itself gets).
func (p *preparedReader) stmt(ctx context.Context, query string) *sql.Stmt {
	p.mu.RLock()
	s, ok := p.stmts[query]
	p.mu.RUnlock()
	if ok {
		return s
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if s, ok := p.stmts[query]; ok {
		return s
	}
	if p.closed || len(p.stmts) >= maxPreparedReads {
		return nil
	}
	// Preparing under the lock keeps one statement per text; it happens
	// once per text in the life of the process.
	s, err := p.db.PrepareContext(ctx, query)
	if err != nil {
		return nil
	}
	p.stmts[query] = s
	return s
}

func (p *preparedReader) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	// The readers are query-only: nothing to prepare for.
	return p.db.ExecContext(ctx, query, args...)
}

func (p *preparedReader) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if s := p.stmt(ctx, query); s != nil {
		return s.QueryContext(ctx, args...)
	}
	return p.db.QueryContext(ctx, query, args...)
}

func (p *preparedReader) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if s := p.stmt(ctx, query); s != nil {
		return s.QueryRowContext(ctx, args...)
	}
	return p.db.QueryRowContext(ctx, query, args...)
}

// Close closes every prepared statement; later reads run unprepared.
func (p *preparedReader) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	var errs []error
	for q, s := range p.stmts {
		errs = append(errs, s.Close())
		delete(p.stmts, q)
	}
	return errors.Join(errs...)
}
