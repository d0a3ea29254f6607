package store

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"log/slog"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

// migrations holds the schema, one directory per dialect. A change to the
// schema is a new numbered file in both directories, never an edit of an
// applied one.
//
//go:embed migrations/sqlite/*.sql migrations/postgres/*.sql
var migrations embed.FS

// migrationsTable is goose's version table.
const migrationsTable = "kadu_migrations"

// migrate applies the pending migrations of d to db. On PostgreSQL it holds
// a session advisory lock meanwhile, so replicas starting together migrate
// once; SQLite's single writer connection serialises by itself.
func migrate(ctx context.Context, d dialect, db *sql.DB, log *slog.Logger) error {
	dir, err := fs.Sub(migrations, "migrations/"+d.name)
	if err != nil {
		return fmt.Errorf("store: migrations for %s: %w", d.name, err)
	}
	opts := []goose.ProviderOption{
		goose.WithDisableGlobalRegistry(true),
		goose.WithTableName(migrationsTable),
	}
	if d.name == DriverPostgres {
		// Try every second for up to five minutes: a replica waits while
		// another one migrates.
		locker, err := lock.NewPostgresSessionLocker(lock.WithLockTimeout(1, 300))
		if err != nil {
			return fmt.Errorf("store: migration lock: %w", err)
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	}
	p, err := goose.NewProvider(d.goose(), db, dir, opts...)
	if err != nil {
		return fmt.Errorf("store: loading migrations: %w", err)
	}
	results, err := p.Up(ctx)
	for _, r := range results {
		log.Info("store: migration applied", "driver", d.name, "version", r.Source.Version, "file", r.Source.Path, "duration", r.Duration)
	}
	if err != nil {
		return fmt.Errorf("store: migrating %s: %w", d.name, err)
	}
	return nil
}
