-- The audit trail (docs/audit.md), SQLite. Keep in step with
-- ../postgres/00007_audit.sql: same tables, columns and indexes; only the
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
-- them as stored.

-- +goose Up
CREATE TABLE audit_events (
    id          TEXT    NOT NULL PRIMARY KEY,
    org_id      TEXT    NOT NULL,
    seq         INTEGER NOT NULL,
    occurred_at TEXT    NOT NULL,
    action      TEXT    NOT NULL,
    surface     TEXT    NOT NULL,
    issuer      TEXT    NOT NULL,
    subject     TEXT    NOT NULL,
    role        TEXT    NOT NULL,
    scopes      TEXT    NOT NULL, -- JSON array, in the order recorded
    client_id   TEXT    NOT NULL,
    client_name TEXT    NOT NULL,
    tool        TEXT    NOT NULL,
    route       TEXT    NOT NULL,
    resource_id TEXT    NOT NULL,
    args_digest TEXT    NOT NULL,
    outcome     TEXT    NOT NULL,
    status      INTEGER NOT NULL,
    detail      TEXT    NOT NULL,
    request_id  TEXT    NOT NULL,
    trace_id    TEXT    NOT NULL,
    prev_hash   TEXT    NOT NULL,
    hash        TEXT    NOT NULL
) STRICT;
CREATE UNIQUE INDEX audit_events_chain ON audit_events (org_id, seq);
CREATE INDEX audit_events_occurred_at ON audit_events (org_id, occurred_at);
-- The list's filters that an auditor reaches for first (who, what, which
-- tool), newest first within the chain; a route filter walks the chain.
CREATE INDEX audit_events_subject ON audit_events (org_id, subject, seq);
CREATE INDEX audit_events_action ON audit_events (org_id, action, seq);
CREATE INDEX audit_events_tool ON audit_events (org_id, tool, seq);

CREATE TABLE audit_heads (
    org_id     TEXT    NOT NULL PRIMARY KEY,
    last_seq   INTEGER NOT NULL,
    last_hash  TEXT    NOT NULL,
    updated_at TEXT    NOT NULL
) STRICT;

CREATE TABLE audit_checkpoints (
    org_id     TEXT    NOT NULL PRIMARY KEY,
    seq        INTEGER NOT NULL,
    hash       TEXT    NOT NULL,
    public_key TEXT    NOT NULL, -- base64url, Ed25519
    signature  TEXT    NOT NULL, -- base64url, Ed25519
    created_at TEXT    NOT NULL
) STRICT;

-- +goose Down
DROP TABLE audit_checkpoints;
DROP TABLE audit_heads;
DROP TABLE audit_events;
