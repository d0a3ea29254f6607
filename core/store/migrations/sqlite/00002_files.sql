-- Files (docs/reference/rest.md#wire-forms, docs/files-webhooks-limits.md#files-presigned-urls-never-bytes-in-a-tool), SQLite. Keep in step with ../postgres/00002_files.sql:
-- same columns and indexes; only the types differ. Conventions as in
-- 00001_init.sql (STRICT, fixed-width UTC text times).
--
-- The row is the record of a file; its content is a blob under
-- "<org_id>/<id>" that core/blob keeps. The store never touches blobs: the
-- purge lists rows, the caller deletes their blobs, then the rows.

-- +goose Up
CREATE TABLE files (
    id              TEXT    NOT NULL PRIMARY KEY,
    org_id          TEXT    NOT NULL,
    filename        TEXT    NOT NULL,
    content_type    TEXT    NOT NULL,
    size_bytes      INTEGER NOT NULL,
    sha256          TEXT, -- hex; declared at create (NULL if not), measured once ready
    purpose         TEXT    NOT NULL CHECK (purpose IN ('input', 'output')),
    status          TEXT    NOT NULL CHECK (status IN ('pending_upload', 'ready', 'rejected', 'expired')),
    rejected_reason TEXT,
    execution_id    TEXT, -- no foreign key: purging an execution keeps its output files
    created_by      TEXT    NOT NULL, -- the subject that created it (the launcher for outputs)
    created_at      TEXT    NOT NULL,
    updated_at      TEXT    NOT NULL,
    expires_at      TEXT, -- while pending_upload: when the unconfirmed upload expires
    deleted_at      TEXT
) STRICT;
CREATE INDEX files_org_id ON files (org_id, id) WHERE deleted_at IS NULL;
CREATE INDEX files_org_execution ON files (org_id, execution_id, id) WHERE deleted_at IS NULL;
CREATE INDEX files_pending ON files (expires_at) WHERE status = 'pending_upload';
CREATE INDEX files_deleted_at ON files (deleted_at) WHERE deleted_at IS NOT NULL;
CREATE INDEX files_dead ON files (updated_at) WHERE status IN ('expired', 'rejected');

-- +goose Down
DROP TABLE files;
