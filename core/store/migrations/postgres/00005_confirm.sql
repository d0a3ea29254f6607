-- Confirmation of destructive tools (docs/reference/confirmation.md), PostgreSQL 15. Keep in step
-- with ../sqlite/00005_confirm.sql: same tables, columns and indexes; only
-- the types differ.
--
-- approvals: a destructive call waiting for its person on the approval page,
-- and, once decided, its outcome. principal is who made the call (issuer,
-- subject, organisation, role, scopes, OAuth client): never a token.
-- confirm_states: the nonces of in-chat confirmations (sealed requestState)
-- that were answered, so that each is accepted once across replicas.

-- +goose Up
CREATE TABLE approvals (
    id          text COLLATE "C" PRIMARY KEY,
    org_id      text COLLATE "C" NOT NULL,
    tool        text        NOT NULL,
    tool_title  text        NOT NULL,
    arguments   json        NOT NULL, -- object, as the client sent it
    principal   json        NOT NULL, -- {iss, sub, org_id, role, scopes, client_id}
    client_id   text,                 -- the OAuth client of the token
    client_name text,                 -- clientInfo.name as the client reported it (era 2026)
    status      text        NOT NULL CHECK (status IN ('pending', 'approved', 'cancelled', 'expired', 'failed')),
    outcome     json,                 -- CallToolResult; NULL until the call ran
    created_at  timestamptz NOT NULL,
    expires_at  timestamptz NOT NULL,
    decided_at  timestamptz,
    updated_at  timestamptz NOT NULL
);
CREATE INDEX approvals_expires_at ON approvals (expires_at);

CREATE TABLE confirm_states (
    nonce      text COLLATE "C" PRIMARY KEY,
    org_id     text COLLATE "C" NOT NULL,
    status     text        NOT NULL CHECK (status IN ('accepted', 'declined')),
    outcome    json, -- NULL while the accepted call runs, and for declined
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL
);
CREATE INDEX confirm_states_expires_at ON confirm_states (expires_at);

-- +goose Down
DROP TABLE confirm_states;
DROP TABLE approvals;
