-- Shared rate-limit state, kept in step with ../postgres/00004_rate_limits.sql
-- so both schemas hold the same tables. SQLite means a single node, which
-- limits in memory (core/ratelimit), so nothing reads or writes this table
-- today; it is here so the schemas do not drift.

-- +goose Up
CREATE TABLE rate_limits (
    key     TEXT    NOT NULL PRIMARY KEY,
    tat     INTEGER NOT NULL, -- theoretical arrival time, µs since 1970-01-01 UTC
    allowed INTEGER NOT NULL  -- 0 or 1: outcome of the latest check
) STRICT, WITHOUT ROWID;

-- +goose Down
DROP TABLE rate_limits;
