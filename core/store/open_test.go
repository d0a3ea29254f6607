package store_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kobana/kadu/core/store"
)

// testMigrate checks that Migrate and Open migrate once: a second run
// applies nothing and an Open on a migrated database is quiet.
func testMigrate(t *testing.T, opts store.Options) {
	ctx := t.Context()
	var log logCounter
	opts.Logger = slog.New(&log)
	if err := store.Migrate(ctx, opts); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	want := migrationFiles(t, opts.Driver)
	if log.count() != want {
		t.Errorf("first Migrate applied %d migrations, want %d", log.count(), want)
	}
	if err := store.Migrate(ctx, opts); err != nil {
		t.Fatalf("Migrate again: %v", err)
	}
	db, err := store.Open(ctx, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer db.Close()
	if log.count() != want {
		t.Errorf("Migrate again and Open applied %d more migrations, want 0", log.count()-want)
	}
	if db.Driver() != opts.Driver {
		t.Errorf("Driver() = %q, want %q", db.Driver(), opts.Driver)
	}
}

// migrationFiles counts the migrations of driver: one file each.
func migrationFiles(t *testing.T, driver string) int {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("migrations", driver, "*.sql"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no migrations for %s: %v", driver, err)
	}
	return len(files)
}

func TestSQLiteMigrate(t *testing.T) {
	testMigrate(t, store.Options{Driver: store.DriverSQLite, DSN: filepath.Join(t.TempDir(), "kadu.db")})
}

func TestOpenErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	tests := []struct {
		name string
		opts store.Options
		want string
	}{
		{"no driver", store.Options{DSN: "x"}, "no driver"},
		{"unknown driver", store.Options{Driver: "mysql", DSN: "x"}, `unknown driver "mysql"`},
		{"no DSN", store.Options{Driver: store.DriverSQLite}, "empty DSN"},
		{"bad postgres DSN", store.Options{Driver: store.DriverPostgres, DSN: "postgres://u:secret@host:notaport/db"}, "does not parse"},
		{"postgres down", store.Options{Driver: store.DriverPostgres, DSN: "postgres://u:secret@127.0.0.1:1/db?connect_timeout=2"}, "connecting to postgres 127.0.0.1:1/db"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db, err := store.Open(ctx, tt.opts)
			if err == nil {
				db.Close()
				t.Fatalf("Open succeeded")
			}
			if !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "secret") {
				t.Errorf("Open error = %q, want it to contain %q and no password", err, tt.want)
			}
		})
	}
}

// logCounter counts "migration applied" records.
type logCounter struct {
	mu sync.Mutex
	n  int
}

func (l *logCounter) Enabled(context.Context, slog.Level) bool { return true }
func (l *logCounter) Handle(_ context.Context, r slog.Record) error {
	if strings.Contains(r.Message, "migration applied") {
		l.mu.Lock()
		l.n++
		l.mu.Unlock()
	}
	return nil
}
func (l *logCounter) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logCounter) WithGroup(string) slog.Handler      { return l }
func (l *logCounter) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n
}
