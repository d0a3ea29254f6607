-- Webhooks, events and deliveries (docs/reference/rest.md#wire-forms, docs/files-webhooks-limits.md#webhooks), PostgreSQL 15. Keep in
-- step with ../sqlite/00003_webhooks.sql: same tables, columns and indexes;
-- only the types differ.
--
-- Secrets are stored as text so that the worker can sign with them: whoever
-- can read the database can read them (no envelope encryption yet).

-- +goose Up
CREATE TABLE webhooks (
    id                         text COLLATE "C" PRIMARY KEY,
    org_id                     text COLLATE "C" NOT NULL,
    url                        text        NOT NULL,
    description                text        NOT NULL,
    event_codes                json        NOT NULL, -- array of event codes
    status                     text        NOT NULL CHECK (status IN ('enabled', 'disabled')),
    disabled_reason            text,
    secret                     text        NOT NULL,
    previous_secret            text,
    previous_secret_expires_at timestamptz,
    failing_since              timestamptz, -- first failed attempt since the last success
    created_at                 timestamptz NOT NULL,
    updated_at                 timestamptz NOT NULL,
    deleted_at                 timestamptz
);
CREATE INDEX webhooks_org_id ON webhooks (org_id, id) WHERE deleted_at IS NULL;
CREATE INDEX webhooks_deleted_at ON webhooks (deleted_at) WHERE deleted_at IS NOT NULL;

CREATE TABLE events (
    id         text COLLATE "C" PRIMARY KEY,
    org_id     text COLLATE "C" NOT NULL,
    event_code text        NOT NULL,
    object     json        NOT NULL, -- the resource's API JSON when the event happened
    created_at timestamptz NOT NULL
);
CREATE INDEX events_created_at ON events (created_at);

CREATE TABLE deliveries (
    id              text COLLATE "C" PRIMARY KEY,
    org_id          text COLLATE "C" NOT NULL,
    webhook_id      text COLLATE "C" NOT NULL, -- no foreign key: a purged webhook's log goes with it, in Go
    event_id        text COLLATE "C" NOT NULL REFERENCES events (id),
    event_code      text        NOT NULL,
    status          text        NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed', 'cancelled')),
    attempts_count  integer     NOT NULL,
    next_attempt_at timestamptz,
    last_attempt    json, -- {at, response_code, duration_ms, error}
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL
);
CREATE INDEX deliveries_org_id ON deliveries (org_id, id);
CREATE INDEX deliveries_org_webhook ON deliveries (org_id, webhook_id, id);
CREATE INDEX deliveries_event_id ON deliveries (event_id);
CREATE INDEX deliveries_pending ON deliveries (webhook_id) WHERE status = 'pending';
CREATE INDEX deliveries_created_at ON deliveries (created_at);

CREATE TABLE delivery_attempts (
    id            text COLLATE "C" PRIMARY KEY,
    org_id        text COLLATE "C" NOT NULL,
    delivery_id   text COLLATE "C" NOT NULL REFERENCES deliveries (id) ON DELETE CASCADE,
    attempted_at  timestamptz NOT NULL,
    url           text        NOT NULL,
    response_code integer, -- NULL: no HTTP response
    duration_ms   bigint      NOT NULL,
    error         text,
    response_body text,    -- truncated, untrusted
    replay        boolean     NOT NULL
);
CREATE INDEX delivery_attempts_delivery_id ON delivery_attempts (delivery_id, id);

-- +goose Down
DROP TABLE delivery_attempts;
DROP TABLE deliveries;
DROP TABLE events;
DROP TABLE webhooks;
