package store

import (
	"database/sql"
	"net/url"
	"os"
	"path/filepath"
	"testing"
)

// TestSQLitePools checks the shape of the SQLite connections: one writer in
// WAL mode, readers that cannot write.
func TestSQLitePools(t *testing.T) {
	ctx := t.Context()
	db, err := Open(ctx, Options{Driver: DriverSQLite, DSN: filepath.Join(t.TempDir(), "kadu.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	if n := db.writer.Stats().MaxOpenConnections; n != 1 {
		t.Errorf("writer has %d connections, want 1", n)
	}
	var mode string
	if err := db.reader.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v; want wal", mode, err)
	}
	var fk int
	if err := db.writer.QueryRowContext(ctx, `PRAGMA foreign_keys`).Scan(&fk); err != nil || fk != 1 {
		t.Errorf("foreign_keys = %d, %v; want 1", fk, err)
	}
	if _, err := db.reader.ExecContext(ctx, `INSERT INTO orgs (id, plan, created_at) VALUES ('o', 'p', 't')`); err == nil {
		t.Errorf("the read pool accepted a write")
	}
	if _, err := db.writer.ExecContext(ctx, `INSERT INTO usage_months VALUES ('o', '2026-11', 'lots', 0)`); err == nil {
		t.Errorf("a STRICT table accepted text in an INTEGER column")
	}
}

// TestSQLiteDSN opens files named by path and by file: URI, with
// parameters and URI metacharacters, and refuses in-memory databases.
func TestSQLiteDSN(t *testing.T) {
	root := t.TempDir()
	odd := filepath.Join(root, "odd #%& dir")
	uriDir := filepath.Join(root, "uri ?# dir")
	tests := []struct {
		name, dsn, path string
		wantTimeout     int // busy_timeout: ours, or the DSN's
	}{
		{"plain path", filepath.Join(odd, "kadu.db"), filepath.Join(odd, "kadu.db"), 10000},
		{"path with parameters", filepath.Join(root, "p.db") + "?_pragma=cache_size(-2000)", filepath.Join(root, "p.db"), 10000},
		{"file URI", (&url.URL{Scheme: "file", Path: filepath.Join(uriDir, "kadu.db"), RawQuery: "_pragma=busy_timeout(20000)&_pragma=journal_mode(DELETE)&_fk=0&_journal_mode=DELETE"}).String(),
			filepath.Join(uriDir, "kadu.db"), 20000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db, err := Open(t.Context(), Options{Driver: DriverSQLite, DSN: tt.dsn})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := os.Stat(tt.path); err != nil {
				t.Errorf("database not at %s: %v", tt.path, err)
			}
			if dir := filepath.Dir(tt.path); dir != root {
				if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
					t.Errorf("created directory %s: %v, %v; want mode 0700", dir, fi, err)
				}
			}
			for name, pool := range map[string]*sql.DB{"writer": db.writer, "reader": db.reader} {
				var timeout int
				if err := pool.QueryRowContext(t.Context(), `PRAGMA busy_timeout`).Scan(&timeout); err != nil || timeout != tt.wantTimeout {
					t.Errorf("%s busy_timeout = %d, %v; want %d", name, timeout, err, tt.wantTimeout)
				}
				var mode string
				var fk int
				if err := pool.QueryRowContext(t.Context(), `SELECT journal_mode, foreign_keys FROM pragma_journal_mode, pragma_foreign_keys`).Scan(&mode, &fk); err != nil || mode != "wal" || fk != 1 {
					t.Errorf("%s journal_mode, foreign_keys = %s, %d, %v; want wal, 1", name, mode, fk, err)
				}
			}
		})
	}
	if _, _, err := sqliteTarget("file:rel/kadu.db?_pragma=x"); err != nil {
		t.Errorf("relative file: URI: %v", err)
	}
	for _, dsn := range []string{":memory:", "file::memory:", "file:x?mode=memory&cache=shared", ""} {
		if _, err := Open(t.Context(), Options{Driver: DriverSQLite, DSN: dsn}); err == nil {
			t.Errorf("Open(%q) succeeded, want an error", dsn)
		}
	}
}
