package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// openPostgres opens a database/sql pool over pgx, so that PostgreSQL and
// SQLite share the *sql.Tx code (and River's riverdatabasesql driver can use
// the same pool).
func openPostgres(ctx context.Context, opts Options) (*sql.DB, error) {
	cfg, err := pgx.ParseConfig(opts.DSN)
	if err != nil {
		// pgx's message can quote the DSN, password included: say only what failed.
		return nil, errors.New("store: postgres DSN does not parse (see pgx.ParseConfig for the accepted forms)")
	}
	db := stdlib.OpenDB(*cfg)
	db.SetMaxOpenConns(opts.MaxConns)
	db.SetMaxIdleConns(opts.MaxConns)
	db.SetConnMaxIdleTime(5 * time.Minute)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: connecting to postgres %s:%d/%s: %w", cfg.Host, cfg.Port, cfg.Database, err)
	}
	return db, nil
}
