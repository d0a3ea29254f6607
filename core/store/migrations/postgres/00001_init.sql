-- Kadu API schema, PostgreSQL 15. Keep in step with ../sqlite/00001_init.sql:
-- same tables, columns and indexes; only the types differ.
--
-- Ids and organisation ids use COLLATE "C" so that ORDER BY id is byte
-- order (UUIDv7 time order) whatever the database's locale. JSON columns are
-- json, not jsonb: the store never queries inside them and json keeps the
-- caller's text (key order of an input_schema) as written.

-- +goose Up
CREATE TABLE orgs (
    id         text COLLATE "C" PRIMARY KEY,
    plan       text        NOT NULL,
    created_at timestamptz NOT NULL
);

CREATE TABLE tasks (
    id              text COLLATE "C" PRIMARY KEY,
    org_id          text COLLATE "C" NOT NULL,
    name            text        NOT NULL,
    description     text        NOT NULL,
    instructions    text        NOT NULL,
    search_text     text        NOT NULL, -- lower(name || '\n' || description), lowered in Go (Unicode)
    input_schema    json,
    playbook        json,
    launch_policy   json        NOT NULL,
    destinations    json        NOT NULL,
    max_cost_cents  bigint      NOT NULL,
    timeout_seconds integer     NOT NULL,
    version         integer     NOT NULL,
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL,
    deleted_at      timestamptz
);
CREATE INDEX tasks_org_id ON tasks (org_id, id) WHERE deleted_at IS NULL;
CREATE INDEX tasks_deleted_at ON tasks (deleted_at) WHERE deleted_at IS NOT NULL;

CREATE TABLE executions (
    id                    text COLLATE "C" PRIMARY KEY,
    org_id                text COLLATE "C" NOT NULL,
    task_id               text COLLATE "C" NOT NULL, -- no foreign key: purging a task keeps its executions
    task_version          integer     NOT NULL,
    status                text        NOT NULL CHECK (status IN ('queued', 'running', 'waiting_input', 'cancelling',
                                                                 'succeeded', 'failed', 'cancelled', 'expired')),
    launched_by           text        NOT NULL,
    input                 json,
    input_file_ids        json        NOT NULL,
    previous_execution_id text COLLATE "C",
    output                json,
    pending_input         json,
    pending_expires_at    timestamptz, -- pending_input.expires_at, for ExpireWaiting
    failure               json,
    cost_cents            bigint      NOT NULL,
    max_cost_cents        bigint      NOT NULL,
    runner_state          json,
    created_at            timestamptz NOT NULL,
    started_at            timestamptz,
    finished_at           timestamptz,
    updated_at            timestamptz NOT NULL,
    deleted_at            timestamptz
);
CREATE INDEX executions_org_id ON executions (org_id, id) WHERE deleted_at IS NULL;
CREATE INDEX executions_org_task ON executions (org_id, task_id, id) WHERE deleted_at IS NULL;
CREATE INDEX executions_org_status ON executions (org_id, status);
CREATE INDEX executions_waiting ON executions (pending_expires_at) WHERE status = 'waiting_input';
CREATE INDEX executions_deleted_at ON executions (deleted_at) WHERE deleted_at IS NOT NULL;

CREATE TABLE steps (
    id           text COLLATE "C" PRIMARY KEY,
    org_id       text COLLATE "C" NOT NULL,
    execution_id text COLLATE "C" NOT NULL REFERENCES executions (id) ON DELETE CASCADE,
    position     integer     NOT NULL,
    name         text        NOT NULL,
    kind         text        NOT NULL,
    status       text        NOT NULL,
    summary      text        NOT NULL,
    cost_cents   bigint      NOT NULL,
    started_at   timestamptz NOT NULL,
    finished_at  timestamptz,
    data         json,
    UNIQUE (execution_id, position)
);

CREATE TABLE idempotency_keys (
    org_id          text COLLATE "C" NOT NULL,
    key             text COLLATE "C" NOT NULL,
    method          text        NOT NULL,
    route           text        NOT NULL,
    digest          text        NOT NULL,
    state           text        NOT NULL CHECK (state IN ('in_flight', 'completed')),
    response_status integer,
    response_body   bytea,
    created_at      timestamptz NOT NULL,
    PRIMARY KEY (org_id, key)
);
CREATE INDEX idempotency_keys_created_at ON idempotency_keys (created_at);

-- Cost and launches per organisation and UTC calendar month ('2026-11'),
-- kept apart from executions so that deleting or purging an execution does
-- not give its cost back.
CREATE TABLE usage_months (
    org_id     text COLLATE "C" NOT NULL,
    month      text   NOT NULL,
    cost_cents bigint NOT NULL,
    executions bigint NOT NULL,
    PRIMARY KEY (org_id, month)
);

-- +goose Down
DROP TABLE usage_months;
DROP TABLE idempotency_keys;
DROP TABLE steps;
DROP TABLE executions;
DROP TABLE tasks;
DROP TABLE orgs;
