package store

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
)

// MigrationVersions returns the latest schema version this build knows (the
// highest numbered file under migrations/<driver>) and the latest one applied
// to the database, for readiness: a server whose database lags the binary
// (a migration failed or was rolled back) must not take traffic.
func (db *DB) MigrationVersions(ctx context.Context) (applied, latest int64, err error) {
	latest, err = latestMigration(db.driver)
	if err != nil {
		return 0, 0, err
	}
	row := db.reader.QueryRowContext(ctx,
		`SELECT COALESCE(MAX(version_id), 0) FROM `+migrationsTable+` WHERE is_applied`)
	if err := row.Scan(&applied); err != nil {
		return 0, latest, fmt.Errorf("store: reading the applied migration: %w", err)
	}
	return applied, latest, nil
}

// latestMigration is the highest version among the embedded migration
// files of driver ("00006_run_lease.sql" is version 6).
func latestMigration(driver string) (int64, error) {
	entries, err := fs.ReadDir(migrations, "migrations/"+driver)
	if err != nil {
		return 0, fmt.Errorf("store: migrations for %s: %w", driver, err)
	}
	var latest int64
	for _, e := range entries {
		num, _, ok := strings.Cut(path.Base(e.Name()), "_")
		if !ok {
			continue
		}
		if v, err := strconv.ParseInt(num, 10, 64); err == nil && v > latest {
			latest = v
		}
	}
	return latest, nil
}

// Ping checks that the database answers, through the reader pool (on
// SQLite, a file that vanished or a directory made unreadable fails it).
func (db *DB) Ping(ctx context.Context) error {
	var one int
	if err := db.reader.QueryRowContext(ctx, `SELECT 1`).Scan(&one); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	return nil
}
