-- Kadu API schema, SQLite. Keep in step with ../postgres/00001_init.sql:
-- same tables, columns and indexes; only the types differ.
--
-- STRICT tables refuse a value of the wrong type instead of storing it.
-- Times are TEXT, UTC, fixed width ('2006-01-02T15:04:05.000000Z'), so text
-- order is time order. JSON columns are TEXT holding the caller's JSON.

-- +goose Up
CREATE TABLE orgs (
    id         TEXT NOT NULL PRIMARY KEY,
    plan       TEXT NOT NULL,
    created_at TEXT NOT NULL
) STRICT;

CREATE TABLE tasks (
    id              TEXT    NOT NULL PRIMARY KEY,
    org_id          TEXT    NOT NULL,
    name            TEXT    NOT NULL,
    description     TEXT    NOT NULL,
    instructions    TEXT    NOT NULL,
    search_text     TEXT    NOT NULL, -- lower(name || '\n' || description), lowered in Go (Unicode)
    input_schema    TEXT,
    playbook        TEXT,
    launch_policy   TEXT    NOT NULL,
    destinations    TEXT    NOT NULL,
    max_cost_cents  INTEGER NOT NULL,
    timeout_seconds INTEGER NOT NULL,
    version         INTEGER NOT NULL,
    created_at      TEXT    NOT NULL,
    updated_at      TEXT    NOT NULL,
    deleted_at      TEXT
) STRICT;
CREATE INDEX tasks_org_id ON tasks (org_id, id) WHERE deleted_at IS NULL;
CREATE INDEX tasks_deleted_at ON tasks (deleted_at) WHERE deleted_at IS NOT NULL;

CREATE TABLE executions (
    id                    TEXT    NOT NULL PRIMARY KEY,
    org_id                TEXT    NOT NULL,
    task_id               TEXT    NOT NULL, -- no foreign key: purging a task keeps its executions
    task_version          INTEGER NOT NULL,
    status                TEXT    NOT NULL CHECK (status IN ('queued', 'running', 'waiting_input', 'cancelling',
                                                             'succeeded', 'failed', 'cancelled', 'expired')),
    launched_by           TEXT    NOT NULL,
    input                 TEXT,
    input_file_ids        TEXT    NOT NULL,
    previous_execution_id TEXT,
    output                TEXT,
    pending_input         TEXT,
    pending_expires_at    TEXT, -- pending_input.expires_at, for ExpireWaiting
    failure               TEXT,
    cost_cents            INTEGER NOT NULL,
    max_cost_cents        INTEGER NOT NULL,
    runner_state          TEXT,
    created_at            TEXT    NOT NULL,
    started_at            TEXT,
    finished_at           TEXT,
    updated_at            TEXT    NOT NULL,
    deleted_at            TEXT
) STRICT;
CREATE INDEX executions_org_id ON executions (org_id, id) WHERE deleted_at IS NULL;
CREATE INDEX executions_org_task ON executions (org_id, task_id, id) WHERE deleted_at IS NULL;
CREATE INDEX executions_org_status ON executions (org_id, status);
CREATE INDEX executions_waiting ON executions (pending_expires_at) WHERE status = 'waiting_input';
CREATE INDEX executions_deleted_at ON executions (deleted_at) WHERE deleted_at IS NOT NULL;

CREATE TABLE steps (
    id           TEXT    NOT NULL PRIMARY KEY,
    org_id       TEXT    NOT NULL,
    execution_id TEXT    NOT NULL REFERENCES executions (id) ON DELETE CASCADE,
    position     INTEGER NOT NULL,
    name         TEXT    NOT NULL,
    kind         TEXT    NOT NULL,
    status       TEXT    NOT NULL,
    summary      TEXT    NOT NULL,
    cost_cents   INTEGER NOT NULL,
    started_at   TEXT    NOT NULL,
    finished_at  TEXT,
    data         TEXT,
    UNIQUE (execution_id, position)
) STRICT;

CREATE TABLE idempotency_keys (
    org_id          TEXT NOT NULL,
    key             TEXT NOT NULL,
    method          TEXT NOT NULL,
    route           TEXT NOT NULL,
    digest          TEXT NOT NULL,
    state           TEXT NOT NULL CHECK (state IN ('in_flight', 'completed')),
    response_status INTEGER,
    response_body   BLOB,
    created_at      TEXT NOT NULL,
    PRIMARY KEY (org_id, key)
) STRICT;
CREATE INDEX idempotency_keys_created_at ON idempotency_keys (created_at);

-- Cost and launches per organisation and UTC calendar month ('2026-11'),
-- kept apart from executions so that deleting or purging an execution does
-- not give its cost back.
CREATE TABLE usage_months (
    org_id     TEXT    NOT NULL,
    month      TEXT    NOT NULL,
    cost_cents INTEGER NOT NULL,
    executions INTEGER NOT NULL,
    PRIMARY KEY (org_id, month)
) STRICT;

-- +goose Down
DROP TABLE usage_months;
DROP TABLE idempotency_keys;
DROP TABLE steps;
DROP TABLE executions;
DROP TABLE tasks;
DROP TABLE orgs;
