package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// File is the record of a file (docs/reference/rest.md#wire-forms, docs/files-webhooks-limits.md#files-presigned-urls-never-bytes-in-a-tool): an input a person uploaded
// or an output an execution wrote. Its content is a blob that core/blob
// keeps under BlobKey; the store never reads or deletes blobs. It is not a
// wire type: core/api renders it. Values returned by the store belong to
// the caller.
type File struct {
	ID          string
	OrgID       string
	Filename    string
	ContentType string
	SizeBytes   int64
	// SHA256 is lowercase hex: the digest declared at creation ("" if none)
	// while pending_upload, the digest measured from the content once ready.
	SHA256         string
	Purpose        FilePurpose
	Status         FileStatus
	RejectedReason string // set when rejected: what differed between declaration and upload
	ExecutionID    string // the execution that wrote an output file; "" for inputs
	CreatedBy      string // the subject that created it (the launcher, for outputs); may delete it
	CreatedAt      time.Time
	UpdatedAt      time.Time
	// ExpiresAt is, while pending_upload, when the unconfirmed upload
	// expires (ExpireUploads), and once expired, when it did; nil otherwise.
	ExpiresAt *time.Time
}

// BlobKey is where the file's content is kept: "<org_id>/<file_id>". It is
// never shown to clients.
func (f File) BlobKey() string { return f.OrgID + "/" + f.ID }

// FilePurpose says where a file comes from.
type FilePurpose string

// File purposes.
const (
	FileInput  FilePurpose = "input"  // uploaded through POST /files, read by executions
	FileOutput FilePurpose = "output" // written by an execution
)

// Valid reports whether p is one of the purposes above.
func (p FilePurpose) Valid() bool { return p == FileInput || p == FileOutput }

// FileStatus is where a file is in its life:
//
//	pending_upload ──confirm──► ready
//	      │           └───────► rejected   (the upload differs from the declaration)
//	      └──1 h unconfirmed──► expired
//
// ready, rejected and expired are final.
type FileStatus string

// File statuses.
const (
	FilePendingUpload FileStatus = "pending_upload"
	FileReady         FileStatus = "ready"
	FileRejected      FileStatus = "rejected"
	FileExpired       FileStatus = "expired"
)

// FileStatuses returns every file status, in the order of the diagram.
func FileStatuses() []FileStatus {
	return []FileStatus{FilePendingUpload, FileReady, FileRejected, FileExpired}
}

// Valid reports whether s is one of the statuses above.
func (s FileStatus) Valid() bool { return slices.Contains(FileStatuses(), s) }

// maxFilesByID bounds FilesByID's list (an execution has at most 20 input
// files).
const maxFilesByID = 100

const fileColumns = `id, org_id, filename, content_type, size_bytes, sha256, purpose, status, rejected_reason,
	execution_id, created_by, created_at, updated_at, expires_at`

func scanFile(s scanner) (File, error) {
	var f File
	err := s.Scan(&f.ID, &f.OrgID, &f.Filename, &f.ContentType, &f.SizeBytes, nullStringCol{&f.SHA256},
		&f.Purpose, &f.Status, nullStringCol{&f.RejectedReason}, nullStringCol{&f.ExecutionID}, &f.CreatedBy,
		timeCol{&f.CreatedAt}, timeCol{&f.UpdatedAt}, nullTimeCol{&f.ExpiresAt})
	return f, err
}

// CreateFile records a new file of orgID awaiting its content, from f's
// Filename, ContentType, SizeBytes, SHA256 (declared, may be ""), Purpose,
// ExecutionID, CreatedBy and ExpiresAt (required: when the upload expires
// if nobody settles it). The store sets ID, OrgID, Status (pending_upload),
// CreatedAt and UpdatedAt, and returns the stored file. core/api validates
// the fields; the store only refuses an unknown purpose or a missing
// ExpiresAt.
//
// The blob goes after the row and SettleFile after the blob, so that a
// crash at any point leaves a pending row that ExpireUploads finds, never
// a blob nobody knows of.
func (o *ops) CreateFile(ctx context.Context, orgID string, f File) (File, error) {
	if err := checkOrg(orgID); err != nil {
		return File{}, err
	}
	if !f.Purpose.Valid() {
		return File{}, fmt.Errorf("store: file purpose %q: want input or output", f.Purpose)
	}
	if f.ExpiresAt == nil {
		return File{}, errors.New("store: a pending upload needs ExpiresAt")
	}
	now := o.clock()
	exp := f.ExpiresAt.UTC().Truncate(time.Microsecond)
	f.ID = NewID(PrefixFile)
	f.OrgID = orgID
	f.Status = FilePendingUpload
	f.RejectedReason = ""
	f.CreatedAt, f.UpdatedAt = now, now
	f.ExpiresAt = &exp
	noteCreated(ctx, f.ID) // before the write: its transaction appends the record
	_, err := o.write.ExecContext(ctx, `INSERT INTO files (id, org_id, filename, content_type, size_bytes, sha256,
		purpose, status, execution_id, created_by, created_at, updated_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11, $12)`,
		f.ID, orgID, f.Filename, f.ContentType, f.SizeBytes, nullStringArg(f.SHA256), string(f.Purpose),
		string(f.Status), nullStringArg(f.ExecutionID), f.CreatedBy, o.d.timeArg(now), o.d.timeArg(exp))
	if err != nil {
		if o.d.isUniqueViolation(err) {
			return File{}, fmt.Errorf("creating file %s: %w", f.ID, ErrConflict)
		}
		return File{}, fmt.Errorf("creating file: %w", err)
	}
	return f, nil
}

// GetFile returns the file id of orgID.
func (o *ops) GetFile(ctx context.Context, orgID, id string) (File, error) {
	if err := checkOrg(orgID); err != nil {
		return File{}, err
	}
	return getFile(ctx, o.read, orgID, id)
}

func getFile(ctx context.Context, q querier, orgID, id string) (File, error) {
	f, err := scanFile(q.QueryRowContext(ctx, `SELECT `+fileColumns+` FROM files
		WHERE org_id = $1 AND id = $2 AND deleted_at IS NULL`, orgID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return File{}, fmt.Errorf("file %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return File{}, fmt.Errorf("getting file %s: %w", id, err)
	}
	return f, nil
}

// FilesByID returns the files of orgID named by ids, in the order of ids,
// leaving out ids that name no file (another organisation's, a deleted
// one, a malformed id). At most 100 ids.
func (o *ops) FilesByID(ctx context.Context, orgID string, ids []string) ([]File, error) {
	if err := checkOrg(orgID); err != nil {
		return nil, err
	}
	if len(ids) > maxFilesByID {
		return nil, fmt.Errorf("store: FilesByID: %d ids, at most %d", len(ids), maxFilesByID)
	}
	out := []File{}
	if len(ids) == 0 {
		return out, nil
	}
	var a args
	orgArg := a.add(orgID)
	marks := make([]string, len(ids))
	for i, id := range ids {
		marks[i] = a.add(id)
	}
	rows, err := o.read.QueryContext(ctx, `SELECT `+fileColumns+` FROM files
		WHERE org_id = `+orgArg+` AND id IN (`+strings.Join(marks, ", ")+`) AND deleted_at IS NULL`, a...)
	if err != nil {
		return nil, fmt.Errorf("getting files: %w", err)
	}
	defer rows.Close()
	byID := make(map[string]File, len(ids))
	for rows.Next() {
		f, err := scanFile(rows)
		if err != nil {
			return nil, fmt.Errorf("getting files: %w", err)
		}
		byID[f.ID] = f
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("getting files: %w", err)
	}
	for _, id := range ids {
		if f, ok := byID[id]; ok {
			out = append(out, f)
		}
	}
	return out, nil
}

// FileFilter narrows ListFiles; zero fields do not filter.
type FileFilter struct {
	Purpose     FilePurpose
	ExecutionID string
	Status      FileStatus
}

// ListFiles returns a page of orgID's files matching f, newest first.
func (o *ops) ListFiles(ctx context.Context, orgID string, f FileFilter, p ListParams) (Page[File], error) {
	if err := checkOrg(orgID); err != nil {
		return Page[File]{}, err
	}
	var a args
	conds := []string{"org_id = " + a.add(orgID), "deleted_at IS NULL"}
	if f.Purpose != "" {
		conds = append(conds, "purpose = "+a.add(string(f.Purpose)))
	}
	if f.ExecutionID != "" {
		conds = append(conds, "execution_id = "+a.add(f.ExecutionID))
	}
	if f.Status != "" {
		conds = append(conds, "status = "+a.add(string(f.Status)))
	}
	if p.Before != "" {
		conds = append(conds, "id < "+a.add(p.Before))
	}
	limit := clampLimit(p.Limit)
	query := `SELECT ` + fileColumns + ` FROM files` + where(conds) + ` ORDER BY id DESC LIMIT ` + a.add(limit+1)
	return listPage(ctx, o.read, query, a, limit, scanFile)
}

// FileSettlement is how a pending upload ends: ready, with the digest and
// size measured from the content, or rejected, with the reason.
type FileSettlement struct {
	Status         FileStatus // FileReady or FileRejected
	SHA256         string     // ready: the measured digest, 64 lowercase hex digits
	SizeBytes      int64      // ready: the measured size
	RejectedReason string     // rejected: what differed, for the client
}

// SettleFile moves the pending_upload file id of orgID to s.Status and
// returns it as stored. It is a compare-and-set on the status: of
// concurrent settlements of one file exactly one succeeds; the others, and
// any settlement of a file that is no longer pending (ready, rejected,
// expired), get ErrConflict. A ready file keeps the measured SHA256 and
// SizeBytes; a rejected one keeps what was declared, and RejectedReason.
// Either way ExpiresAt is cleared. Call it on a Tx to emit file.ready in
// the same transaction.
func (o *ops) SettleFile(ctx context.Context, orgID, id string, s FileSettlement) (File, error) {
	if err := checkOrg(orgID); err != nil {
		return File{}, err
	}
	now := o.d.timeArg(o.clock())
	var query string
	var a []any
	switch s.Status {
	case FileReady:
		if !validSHA256(s.SHA256) || s.SizeBytes < 0 {
			return File{}, fmt.Errorf("store: settling file %s as ready needs a measured sha256 and size", id)
		}
		query = `UPDATE files SET status = $3, sha256 = $4, size_bytes = $5, rejected_reason = NULL,
			expires_at = NULL, updated_at = $6`
		a = []any{orgID, id, string(FileReady), s.SHA256, s.SizeBytes, now}
	case FileRejected:
		if s.RejectedReason == "" {
			return File{}, fmt.Errorf("store: settling file %s as rejected needs a reason", id)
		}
		query = `UPDATE files SET status = $3, rejected_reason = $4, expires_at = NULL, updated_at = $5`
		a = []any{orgID, id, string(FileRejected), s.RejectedReason, now}
	default:
		return File{}, fmt.Errorf("store: settling file %s as %q: want ready or rejected", id, s.Status)
	}
	var out File
	err := o.inTx(ctx, func(q querier) error {
		var err error
		out, err = scanFile(q.QueryRowContext(ctx, query+`
			WHERE org_id = $1 AND id = $2 AND status = 'pending_upload' AND deleted_at IS NULL
			RETURNING `+fileColumns, a...))
		if err == nil {
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("settling file %s: %w", id, err)
		}
		cur, err := getFile(ctx, q, orgID, id)
		if err != nil {
			return err
		}
		return fmt.Errorf("file %s is %s, not pending_upload: %w", id, cur.Status, ErrConflict)
	})
	return out, err
}

func validSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// SoftDeleteFile marks the file id of orgID deleted: from then on it is
// ErrNotFound everywhere. Its blob stays until the purge, after the
// retention window (PurgeableFiles).
func (o *ops) SoftDeleteFile(ctx context.Context, orgID, id string) error {
	if err := checkOrg(orgID); err != nil {
		return err
	}
	now := o.d.timeArg(o.clock())
	res, err := o.write.ExecContext(ctx, `UPDATE files SET deleted_at = $3, updated_at = $3
		WHERE org_id = $1 AND id = $2 AND deleted_at IS NULL`, orgID, id, now)
	return oneRow(res, err, "file", id)
}

// ExpireUploads moves every pending_upload file whose ExpiresAt is at or
// before now to expired, in every organisation, and returns them as
// stored, so that the caller deletes whatever blob a client put there.
// Concurrent calls never expire a file twice. A blob whose deletion fails
// is deleted again by the purge (PurgeableFiles lists expired files).
func (o *ops) ExpireUploads(ctx context.Context, now time.Time) ([]File, error) {
	var expired []File
	err := o.writeOne(ctx, func(q querier) error {
		rows, err := q.QueryContext(ctx, `UPDATE files SET status = 'expired', updated_at = $1
			WHERE status = 'pending_upload' AND expires_at <= $1 AND deleted_at IS NULL
			RETURNING `+fileColumns, o.d.timeArg(now))
		if err != nil {
			return err
		}
		defer rows.Close()
		expired = []File{}
		for rows.Next() {
			f, err := scanFile(rows)
			if err != nil {
				return err
			}
			expired = append(expired, f)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("expiring uploads: %w", err)
	}
	return expired, nil
}

// purgeableFile is the condition PurgeableFiles and PurgeFiles share: soft
// deleted before $1, or dead (expired or rejected, so it has no content
// worth keeping) and unchanged since before $1.
const purgeableFile = `((deleted_at IS NOT NULL AND deleted_at < $1)
	OR (status IN ('expired', 'rejected') AND updated_at < $1))`

// PurgeableFiles returns up to limit files, in every organisation, that the
// purge may remove: soft-deleted before before, or expired or rejected
// before before. Purging is three steps, so that a crash between any two
// loses nothing: list them here, delete their blobs (BlobKey; deleting a
// missing blob is fine), then PurgeFiles with the ids whose blobs are gone.
// A crash before PurgeFiles leaves the rows, and the next run lists them
// again.
func (o *ops) PurgeableFiles(ctx context.Context, before time.Time, limit int) ([]File, error) {
	if limit <= 0 {
		limit = DefaultListLimit
	}
	rows, err := o.read.QueryContext(ctx, `SELECT `+fileColumns+` FROM files WHERE `+purgeableFile+`
		ORDER BY id LIMIT $2`, o.d.timeArg(before), limit)
	if err != nil {
		return nil, fmt.Errorf("listing files to purge: %w", err)
	}
	defer rows.Close()
	out := []File{}
	for rows.Next() {
		f, err := scanFile(rows)
		if err != nil {
			return nil, fmt.Errorf("listing files to purge: %w", err)
		}
		out = append(out, f)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing files to purge: %w", err)
	}
	return out, nil
}

// PurgeFiles removes for good the files among ids that are still purgeable
// with the same before as PurgeableFiles, and returns how many it removed.
// Call it only once their blobs are deleted.
func (o *ops) PurgeFiles(ctx context.Context, before time.Time, ids []string) (int64, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	a := args{o.d.timeArg(before)}
	marks := make([]string, len(ids))
	for i, id := range ids {
		marks[i] = a.add(id)
	}
	res, err := o.write.ExecContext(ctx, `DELETE FROM files WHERE id IN (`+strings.Join(marks, ", ")+`) AND `+purgeableFile, a...)
	n, err := affected(res, err)
	if err != nil {
		return 0, fmt.Errorf("purging files: %w", err)
	}
	return n, nil
}
