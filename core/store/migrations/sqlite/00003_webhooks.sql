-- Webhooks, events and deliveries (docs/reference/rest.md#wire-forms, docs/files-webhooks-limits.md#webhooks), SQLite. Keep in step
-- with ../postgres/00003_webhooks.sql: same tables, columns and indexes;
-- only the types differ.
--
-- Secrets are stored as text so that the worker can sign with them: whoever
-- can read the database can read them (no envelope encryption yet).

-- +goose Up
CREATE TABLE webhooks (
    id                         TEXT NOT NULL PRIMARY KEY,
    org_id                     TEXT NOT NULL,
    url                        TEXT NOT NULL,
    description                TEXT NOT NULL,
    event_codes                TEXT NOT NULL, -- JSON array of event codes
    status                     TEXT NOT NULL CHECK (status IN ('enabled', 'disabled')),
    disabled_reason            TEXT,
    secret                     TEXT NOT NULL,
    previous_secret            TEXT,
    previous_secret_expires_at TEXT,
    failing_since              TEXT, -- first failed attempt since the last success
    created_at                 TEXT NOT NULL,
    updated_at                 TEXT NOT NULL,
    deleted_at                 TEXT
) STRICT;
CREATE INDEX webhooks_org_id ON webhooks (org_id, id) WHERE deleted_at IS NULL;
CREATE INDEX webhooks_deleted_at ON webhooks (deleted_at) WHERE deleted_at IS NOT NULL;

CREATE TABLE events (
    id         TEXT NOT NULL PRIMARY KEY,
    org_id     TEXT NOT NULL,
    event_code TEXT NOT NULL,
    object     TEXT NOT NULL, -- the resource's API JSON when the event happened
    created_at TEXT NOT NULL
) STRICT;
CREATE INDEX events_created_at ON events (created_at);

CREATE TABLE deliveries (
    id              TEXT    NOT NULL PRIMARY KEY,
    org_id          TEXT    NOT NULL,
    webhook_id      TEXT    NOT NULL, -- no foreign key: a purged webhook's log goes with it, in Go
    event_id        TEXT    NOT NULL REFERENCES events (id),
    event_code      TEXT    NOT NULL,
    status          TEXT    NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed', 'cancelled')),
    attempts_count  INTEGER NOT NULL,
    next_attempt_at TEXT,
    last_attempt    TEXT, -- JSON {at, response_code, duration_ms, error}
    created_at      TEXT    NOT NULL,
    updated_at      TEXT    NOT NULL
) STRICT;
CREATE INDEX deliveries_org_id ON deliveries (org_id, id);
CREATE INDEX deliveries_org_webhook ON deliveries (org_id, webhook_id, id);
CREATE INDEX deliveries_event_id ON deliveries (event_id);
CREATE INDEX deliveries_pending ON deliveries (webhook_id) WHERE status = 'pending';
CREATE INDEX deliveries_created_at ON deliveries (created_at);

CREATE TABLE delivery_attempts (
    id            TEXT    NOT NULL PRIMARY KEY,
    org_id        TEXT    NOT NULL,
    delivery_id   TEXT    NOT NULL REFERENCES deliveries (id) ON DELETE CASCADE,
    attempted_at  TEXT    NOT NULL,
    url           TEXT    NOT NULL,
    response_code INTEGER, -- NULL: no HTTP response
    duration_ms   INTEGER NOT NULL,
    error         TEXT,
    response_body TEXT,    -- truncated, untrusted
    replay        INTEGER NOT NULL CHECK (replay IN (0, 1))
) STRICT;
CREATE INDEX delivery_attempts_delivery_id ON delivery_attempts (delivery_id, id);

-- +goose Down
DROP TABLE delivery_attempts;
DROP TABLE deliveries;
DROP TABLE events;
DROP TABLE webhooks;
