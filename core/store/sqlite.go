package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// sqliteBusyTimeout (milliseconds) is how long a connection waits for a
// lock held by another process (a second kadu on the same file, the sqlite3
// shell) before failing with SQLITE_BUSY. Within one process the single
// writer connection already serialises writes.
const sqliteBusyTimeout = "10000"

// openSQLite opens the file at opts.DSN twice: one writer connection (WAL,
// BEGIN IMMEDIATE, foreign keys) and a query-only reader pool. WAL lets the
// readers run while the writer commits; BEGIN IMMEDIATE takes the write lock
// at BEGIN, so a transaction that reads and then writes cannot fail halfway
// with SQLITE_BUSY.
func openSQLite(ctx context.Context, opts Options) (writer, reader *sql.DB, err error) {
	path, extra, err := sqliteTarget(opts.DSN)
	if err != nil {
		return nil, nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, nil, fmt.Errorf("store: sqlite directory: %w", err)
	}
	if err := privateSQLiteFiles(path, opts.Logger); err != nil {
		return nil, nil, err
	}

	// The driver's shorthand keys, so that a _pragma in the DSN can still
	// tune busy_timeout or synchronous (the driver applies _busy_timeout
	// before the _pragma list, the other keys after it). WAL, foreign keys
	// and BEGIN IMMEDIATE are not negotiable; the aliases are dropped
	// because the driver lets an alias win over its key.
	w := withDefaults(extra, map[string]string{"_busy_timeout": sqliteBusyTimeout, "_synchronous": "NORMAL"})
	w.Del("_journal")
	w.Set("_journal_mode", "WAL")
	w.Del("_fk")
	w.Set("_foreign_keys", "1")
	w.Set("_txlock", "immediate")
	writer, err = sql.Open("sqlite", sqliteURI(path, w))
	if err != nil {
		return nil, nil, fmt.Errorf("store: opening sqlite writer: %w", err)
	}
	writer.SetMaxOpenConns(1)
	writer.SetMaxIdleConns(1)
	writer.SetConnMaxLifetime(0)
	writer.SetConnMaxIdleTime(0)
	if err := writer.PingContext(ctx); err != nil {
		writer.Close()
		return nil, nil, fmt.Errorf("store: opening sqlite database %s: %w", path, err)
	}

	// query_only rather than mode=ro: a mode=ro connection cannot create the
	// WAL index (-shm) if the writer's connection is ever the last one to
	// close and SQLite removes it. query_only is applied after the DSN's keys
	// and pragmas, so a journal mode in the DSN is dropped here: a reader
	// would switch the whole database out of WAL.
	r := withDefaults(extra, map[string]string{"_busy_timeout": sqliteBusyTimeout})
	r.Del("_journal")
	r.Del("_journal_mode")
	r["_pragma"] = slices.DeleteFunc(r["_pragma"], func(p string) bool {
		return strings.HasPrefix(strings.ToLower(strings.TrimSpace(p)), "journal_mode")
	})
	r.Del("_fk")
	r.Set("_foreign_keys", "1")
	r.Set("_query_only", "1")
	reader, err = sql.Open("sqlite", sqliteURI(path, r))
	if err != nil {
		writer.Close()
		return nil, nil, fmt.Errorf("store: opening sqlite readers: %w", err)
	}
	reader.SetMaxOpenConns(opts.MaxConns)
	reader.SetMaxIdleConns(opts.MaxConns)
	if err := reader.PingContext(ctx); err != nil {
		reader.Close()
		writer.Close()
		return nil, nil, fmt.Errorf("store: opening sqlite readers %s: %w", path, err)
	}
	return writer, reader, nil
}

// sqliteTarget splits a SQLite DSN, a file path or a file: URI, either with
// an optional ?query of driver parameters, into an absolute path and the
// parameters. In-memory databases are refused: the writer and each reader
// would get their own empty database.
func sqliteTarget(dsn string) (path string, params url.Values, err error) {
	var query string
	if strings.HasPrefix(dsn, "file:") {
		u, err := url.Parse(dsn)
		if err != nil {
			return "", nil, fmt.Errorf("store: sqlite DSN %q: %w", dsn, err)
		}
		path, query = u.Path, u.RawQuery
		if u.Opaque != "" { // file:relative/kadu.db
			path, err = url.PathUnescape(u.Opaque)
			if err != nil {
				return "", nil, fmt.Errorf("store: sqlite DSN %q: %w", dsn, err)
			}
		}
	} else {
		path, query, _ = strings.Cut(dsn, "?")
	}
	params, err = url.ParseQuery(query)
	if err != nil {
		return "", nil, fmt.Errorf("store: sqlite DSN %q: %w", dsn, err)
	}
	if path == "" || path == ":memory:" || params.Get("mode") == "memory" {
		return "", nil, fmt.Errorf("store: sqlite DSN %q: need a database file (an in-memory database would not be shared by the writer and the readers)", dsn)
	}
	path, err = filepath.Abs(filepath.FromSlash(path))
	if err != nil {
		return "", nil, fmt.Errorf("store: sqlite path %q: %w", dsn, err)
	}
	return path, params, nil
}

// withDefaults returns a copy of params with each default key set unless
// params has it or its alias already.
func withDefaults(params url.Values, defaults map[string]string) url.Values {
	aliases := map[string]string{"_busy_timeout": "_timeout", "_synchronous": "_sync"}
	out := url.Values{}
	for k, vs := range params {
		out[k] = append([]string(nil), vs...)
	}
	for k, v := range defaults {
		if !out.Has(k) && !out.Has(aliases[k]) {
			out.Set(k, v)
		}
	}
	return out
}

// sqliteURI builds a file: URI, escaping the path, so a path with '?', '#'
// or '%' names the right file.
func sqliteURI(path string, q url.Values) string {
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(path), RawQuery: q.Encode()}
	return u.String()
}

// privateSQLiteFiles makes the database file, before SQLite opens it, and
// its -wal, -shm and -journal companions readable by the owner only: they
// hold every organisation's data. SQLite creates the companions with the
// database file's mode, so creating that one 0600 is enough for a new
// database; files of an older start (made 0644 under the usual umask) are
// tightened, with a warning.
func privateSQLiteFiles(path string, log *slog.Logger) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		if err := f.Close(); err != nil {
			return fmt.Errorf("store: creating sqlite database %s: %w", path, err)
		}
	} else if !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("store: creating sqlite database %s: %w", path, err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
		fi, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("store: sqlite file %s: %w", p, err)
		}
		if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o077 == 0 {
			continue
		}
		if err := os.Chmod(p, fi.Mode().Perm()&0o600); err != nil {
			return fmt.Errorf("store: sqlite file %s is readable by others (%v) and could not be restricted: %w", p, fi.Mode().Perm(), err)
		}
		log.Warn("store: sqlite file was readable by other users; restricted to its owner",
			slog.String("file", p), slog.String("was", fi.Mode().Perm().String()), slog.String("now", (fi.Mode().Perm()&0o600).String()))
	}
	return nil
}
