package ratelimit

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/pressly/goose/v3"
	_ "modernc.org/sqlite" // driver "sqlite"
)

// applyMigration applies this package's migration (and only it) to db with
// goose, as core/store does, so the test depends neither on the other
// migrations nor on their authors' work in progress. dialect is "postgres"
// or "sqlite".
func applyMigration(t testing.TB, db *sql.DB, dialect string) {
	t.Helper()
	const file = "00004_rate_limits.sql"
	text, err := os.ReadFile(filepath.Join("..", "store", "migrations", dialect, file))
	if err != nil {
		t.Fatal(err)
	}
	g := goose.DialectPostgres
	if dialect == "sqlite" {
		g = goose.DialectSQLite3
	}
	p, err := goose.NewProvider(g, db, fstest.MapFS{file: {Data: text}},
		goose.WithDisableGlobalRegistry(true), goose.WithTableName("kadu_migrations"))
	if err != nil {
		t.Fatalf("loading %s/%s: %v", dialect, file, err)
	}
	if _, err := p.Up(context.Background()); err != nil {
		t.Fatalf("applying %s/%s: %v", dialect, file, err)
	}
}

// TestSQLiteMigration: the SQLite twin of the table applies, has the same
// columns, and goes away with Down.
func TestSQLiteMigration(t *testing.T) {
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "kadu.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	applyMigration(t, db, "sqlite")
	if _, err := db.Exec(`INSERT INTO rate_limits (key, tat, allowed) VALUES ('org:org_1', 1800000000000000, 1)`); err != nil {
		t.Fatalf("insert: %v", err)
	}
	if _, err := db.Exec(`INSERT INTO rate_limits (key, tat, allowed) VALUES ('org:org_2', 'soon', 1)`); err == nil {
		t.Errorf("a text TAT was stored: the table is not STRICT")
	}
	if _, err := db.Exec(`INSERT INTO rate_limits (key, tat, allowed) VALUES ('org:org_1', 1, 1)`); err == nil {
		t.Errorf("two rows for one key")
	}
}
