-- Confirmation of destructive tools (docs/reference/confirmation.md), SQLite. Keep in step with
-- ../postgres/00005_confirm.sql: same tables, columns and indexes; only the
-- types differ.
--
-- approvals: a destructive call waiting for its person on the approval page,
-- and, once decided, its outcome. principal is who made the call (issuer,
-- subject, organisation, role, scopes, OAuth client): never a token.
-- confirm_states: the nonces of in-chat confirmations (sealed requestState)
-- that were answered, so that each is accepted once across replicas.

-- +goose Up
CREATE TABLE approvals (
    id          TEXT NOT NULL PRIMARY KEY,
    org_id      TEXT NOT NULL,
    tool        TEXT NOT NULL,
    tool_title  TEXT NOT NULL,
    arguments   TEXT NOT NULL, -- JSON object, as the client sent it
    principal   TEXT NOT NULL, -- JSON {iss, sub, org_id, role, scopes, client_id}
    client_id   TEXT,          -- the OAuth client of the token
    client_name TEXT,          -- clientInfo.name as the client reported it (era 2026)
    status      TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'cancelled', 'expired', 'failed')),
    outcome     TEXT,          -- JSON CallToolResult; NULL until the call ran
    created_at  TEXT NOT NULL,
    expires_at  TEXT NOT NULL,
    decided_at  TEXT,
    updated_at  TEXT NOT NULL
) STRICT;
CREATE INDEX approvals_expires_at ON approvals (expires_at);

CREATE TABLE confirm_states (
    nonce      TEXT NOT NULL PRIMARY KEY,
    org_id     TEXT NOT NULL,
    status     TEXT NOT NULL CHECK (status IN ('accepted', 'declined')),
    outcome    TEXT, -- JSON; NULL while the accepted call runs, and for declined
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX confirm_states_expires_at ON confirm_states (expires_at);

-- +goose Down
DROP TABLE confirm_states;
DROP TABLE approvals;
