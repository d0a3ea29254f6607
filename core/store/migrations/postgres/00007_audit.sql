-- The audit trail (docs/audit.md), PostgreSQL. Keep in step with
-- ../sqlite/00007_audit.sql: same tables, columns and indexes; only the
-- types differ.
--
-- Each organisation's events form one hash chain (org_id '' is the
-- installation's chain): seq counts from 1 without gaps, prev_hash is the
-- hash of the event before. audit_heads holds one row per chain, the last
-- seq and hash: an append updates it in its own transaction, which
-- serialises the appends of a chain across replicas and lets verification
-- notice a truncated tail. audit_checkpoints holds, per chain, the last
-- event a purge deleted, signed, so that verification starts from there.
-- Every column of an event is NOT NULL ('' and 0 for none): the hash covers
-- them as stored. Times are timestamptz (microseconds), as the hash needs.

-- +goose Up
CREATE TABLE audit_events (
    id          text COLLATE "C" PRIMARY KEY,
    org_id      text COLLATE "C" NOT NULL,
    seq         bigint      NOT NULL,
    occurred_at timestamptz NOT NULL,
    action      text        NOT NULL,
    surface     text        NOT NULL,
    issuer      text        NOT NULL,
    subject     text        NOT NULL,
    role        text        NOT NULL,
    scopes      text        NOT NULL, -- JSON array, in the order recorded
    client_id   text        NOT NULL,
    client_name text        NOT NULL,
    tool        text        NOT NULL,
    route       text        NOT NULL,
    resource_id text        NOT NULL,
    args_digest text        NOT NULL,
    outcome     text        NOT NULL,
    status      integer     NOT NULL,
    detail      text        NOT NULL,
    request_id  text        NOT NULL,
    trace_id    text        NOT NULL,
    prev_hash   text        NOT NULL,
    hash        text        NOT NULL
);
CREATE UNIQUE INDEX audit_events_chain ON audit_events (org_id, seq);
CREATE INDEX audit_events_occurred_at ON audit_events (org_id, occurred_at);
-- The list's filters that an auditor reaches for first (who, what, which
-- tool), newest first within the chain; a route filter walks the chain.
CREATE INDEX audit_events_subject ON audit_events (org_id, subject, seq);
CREATE INDEX audit_events_action ON audit_events (org_id, action, seq);
CREATE INDEX audit_events_tool ON audit_events (org_id, tool, seq);

CREATE TABLE audit_heads (
    org_id     text COLLATE "C" PRIMARY KEY,
    last_seq   bigint      NOT NULL,
    last_hash  text        NOT NULL,
    updated_at timestamptz NOT NULL
);

CREATE TABLE audit_checkpoints (
    org_id     text COLLATE "C" PRIMARY KEY,
    seq        bigint      NOT NULL,
    hash       text        NOT NULL,
    public_key text        NOT NULL, -- base64url, Ed25519
    signature  text        NOT NULL, -- base64url, Ed25519
    created_at timestamptz NOT NULL
);

-- +goose Down
DROP TABLE audit_checkpoints;
DROP TABLE audit_heads;
DROP TABLE audit_events;
