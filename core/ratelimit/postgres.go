package ratelimit

import (
	"context"
	"database/sql"
	"fmt"
)

// dbNow is the database's clock in microseconds, used when Options.Now is
// nil so that every replica measures time on one clock. statement_timestamp
// is fixed for the statement, so the two places that read it agree.
const dbNow = `(extract(epoch FROM statement_timestamp()) * 1000000)::bigint`

// checkSQL is rule.check as one statement, atomic under any concurrency: the
// INSERT creates the row of a key never seen (always allowed: burst ≥ 1);
// on conflict PostgreSQL locks the row, waits for a concurrent check of the
// same key to commit, and evaluates SET on the latest version. SET reads
// the old row throughout, so allowed and tat are decided on the same TAT.
//
//	$1 key   $2 now (µs, NULL: the database's clock)   $3 interval (µs)   $4 tolerance (µs)
//
// EXCLUDED.tat − $3 is now, recovered from the row the INSERT proposed.
// The statement writes even when it refuses (tat unchanged) because
// PostgreSQL 15's RETURNING sees only the new row: the decision has to be in
// it. It returns whether the request is allowed and, when it is not, the
// wait until one request would be (TAT − tolerance − now).
const checkSQL = `
INSERT INTO rate_limits AS r (key, tat, allowed)
VALUES ($1, COALESCE($2::bigint, ` + dbNow + `) + $3::bigint, true)
ON CONFLICT (key) DO UPDATE SET
	tat = CASE WHEN r.tat - (EXCLUDED.tat - $3::bigint) <= $4::bigint
		THEN GREATEST(r.tat, EXCLUDED.tat - $3::bigint) + $3::bigint
		ELSE r.tat END,
	allowed = r.tat - (EXCLUDED.tat - $3::bigint) <= $4::bigint
RETURNING allowed, tat - $4::bigint - COALESCE($2::bigint, ` + dbNow + `)`

// purgeSQL deletes the rows of idle keys: a TAT in the past means the same
// as no row. A check that moves a row's TAT into the future concurrently
// keeps it (the DELETE re-evaluates its condition on the updated row).
//
//	$1 now (µs, NULL: the database's clock)
const purgeSQL = `DELETE FROM rate_limits WHERE tat <= COALESCE($1::bigint, ` + dbNow + `)`

// checkDB runs checkSQL for key. now is nil to use the database's clock.
func checkDB(ctx context.Context, db *sql.DB, key string, r rule, now any) (ok bool, wait int64, err error) {
	err = db.QueryRowContext(ctx, checkSQL, key, now, r.interval, r.tolerance).Scan(&ok, &wait)
	if err != nil {
		return false, 0, fmt.Errorf("ratelimit: checking %s in rate_limits: %w", keyKind(key), err)
	}
	return ok, wait, nil
}

// purgeDB runs purgeSQL and returns how many rows it deleted.
func purgeDB(ctx context.Context, db *sql.DB, now any) (int64, error) {
	res, err := db.ExecContext(ctx, purgeSQL, now)
	if err != nil {
		return 0, fmt.Errorf("ratelimit: purging rate_limits: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("ratelimit: purging rate_limits: %w", err)
	}
	return n, nil
}

// keyKind names the kind of key ("org" or "ip") for logs and errors, which
// must not carry a client's address.
func keyKind(key string) string {
	for i := 0; i < len(key); i++ {
		if key[i] == ':' {
			return key[:i]
		}
	}
	return key
}
