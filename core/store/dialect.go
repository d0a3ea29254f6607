package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pressly/goose/v3"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// dialect is what differs between the back-ends: how to connect, how a time
// is bound, which migrations apply and how a unique violation looks. The SQL
// of the queries is the same for both (see RATIONALE.md).
type dialect struct {
	name string // DriverSQLite or DriverPostgres
}

func dialectFor(driver string) (dialect, error) {
	switch driver {
	case DriverSQLite, DriverPostgres:
		return dialect{name: driver}, nil
	case "":
		return dialect{}, errors.New("store: no driver: want sqlite or postgres")
	default:
		return dialect{}, fmt.Errorf("store: unknown driver %q: want sqlite or postgres", driver)
	}
}

func (d dialect) open(ctx context.Context, opts Options) (writer, reader *sql.DB, err error) {
	if opts.DSN == "" {
		return nil, nil, fmt.Errorf("store: %s: empty DSN", d.name)
	}
	if d.name == DriverSQLite {
		return openSQLite(ctx, opts)
	}
	db, err := openPostgres(ctx, opts)
	return db, db, err
}

func (d dialect) goose() goose.Dialect {
	if d.name == DriverSQLite {
		return goose.DialectSQLite3
	}
	return goose.DialectPostgres
}

// sqliteTime is how SQLite stores a time: UTC, fixed width, so that text
// comparison is time comparison. PostgreSQL stores timestamptz.
const sqliteTime = "2006-01-02T15:04:05.000000Z"

// timeArg returns t as a bind argument for a timestamp column.
func (d dialect) timeArg(t time.Time) any {
	t = t.UTC().Truncate(time.Microsecond)
	if d.name == DriverSQLite {
		return t.Format(sqliteTime)
	}
	return t
}

// nullTimeArg is timeArg for a nullable column: nil is NULL.
func (d dialect) nullTimeArg(t *time.Time) any {
	if t == nil {
		return nil
	}
	return d.timeArg(*t)
}

// isUniqueViolation reports whether err is a unique or primary key
// violation.
func (d dialect) isUniqueViolation(err error) bool {
	if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok {
		return pgErr.Code == "23505"
	}
	if sqlErr, ok := errors.AsType[*sqlite.Error](err); ok {
		return sqlErr.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || sqlErr.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
	}
	return false
}
