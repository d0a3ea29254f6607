-- Run leases, PostgreSQL. Keep in step with ../sqlite/00006_run_lease.sql:
-- same columns and indexes; only the types differ.
--
-- The replica running an execution holds its lease: run_owner names the
-- replica, heartbeat_at is when it last renewed it, run_deadline is when the
-- task's timeout_seconds ends the current run. A running or cancelling
-- execution whose lease is not renewed is given up by any replica's sweeper
-- (core/jobs/sweep.go), so a crash never strands it. All three are NULL
-- outside running and cancelling;
-- run_owner is '' for a run handed back by a stopping replica.

-- +goose Up
ALTER TABLE executions ADD COLUMN run_owner text COLLATE "C";
ALTER TABLE executions ADD COLUMN heartbeat_at timestamptz;
ALTER TABLE executions ADD COLUMN run_deadline timestamptz;
CREATE INDEX executions_active ON executions (status) WHERE status IN ('running', 'cancelling');
-- Runs of the version before leases: handed back, so that the retry of their
-- job (River's, for a process that died) runs them again rather than the
-- sweeper failing them at the first start of this version.
UPDATE executions SET run_owner = '' WHERE status IN ('running', 'cancelling');

-- +goose Down
DROP INDEX executions_active;
ALTER TABLE executions DROP COLUMN run_deadline;
ALTER TABLE executions DROP COLUMN heartbeat_at;
ALTER TABLE executions DROP COLUMN run_owner;
