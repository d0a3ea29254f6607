-- Shared rate-limit state (docs/reference/limits.md#rate-limits, core/ratelimit): one row per limited key
-- ("org:<id>", "ip:<addr>"), holding the GCRA theoretical arrival time (TAT)
-- in microseconds since the Unix epoch. The limit itself is not stored: each
-- check passes it, so a plan change applies to the next request.
--
-- UNLOGGED: the rows are seconds of history that matter only while they are
-- in the future; losing them in a crash (or on a promoted standby) resets
-- every key to a full burst, which is harmless, and skipping the WAL makes
-- the write every request does much cheaper. No index besides the key, and a
-- fillfactor below 100, so the update every check does stays HOT (no index
-- entry to write). Rows whose TAT is in the past mean the same as no row:
-- ratelimit.(*Limiter).Purge deletes them.

-- +goose Up
CREATE UNLOGGED TABLE rate_limits (
    key     text COLLATE "C" PRIMARY KEY,
    tat     bigint  NOT NULL, -- theoretical arrival time, µs since 1970-01-01 UTC
    allowed boolean NOT NULL  -- outcome of the latest check: RETURNING sees only the new row
) WITH (fillfactor = 70);

-- +goose Down
DROP TABLE rate_limits;
