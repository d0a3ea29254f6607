package api

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/store"
)

// Files (docs/files-webhooks-limits.md#files-presigned-urls-never-bytes-in-a-tool): no request or response carries a file's bytes. A client
// registers a file (POST /files), PUTs the content to the presigned URL it
// gets back, then confirms (POST /files/{id}/confirm), which measures what
// was stored against what was declared. Downloads go through a short-lived
// signed URL as well.

// File lifetimes (docs/files-webhooks-limits.md#files-presigned-urls-never-bytes-in-a-tool).
const (
	// UploadURLTTL is how long the URL POST /files returns accepts the PUT.
	UploadURLTTL = 15 * time.Minute
	// UploadTTL is how long a registered file may stay unconfirmed before
	// it expires (the maintenance job then deletes whatever was uploaded).
	UploadTTL = time.Hour
	// DownloadURLTTL is how long a download URL works.
	DownloadURLTTL = 5 * time.Minute
)

// Field limits of POST /files.
const (
	maxFilenameLen    = 255
	maxContentTypeLen = 255
)

// EventFileReady is emitted when an upload is confirmed ready.
const EventFileReady = "file.ready"

// fileHandlers are the handlers of the /files routes.
func (a *API) fileHandlers() map[string]handler {
	return map[string]handler{
		"GET /files":               a.listFiles,
		"POST /files":              a.createFile,
		"GET /files/{id}":          a.getFile,
		"POST /files/{id}/confirm": a.confirmFile,
		"GET /files/{id}/download": a.downloadFile,
		"DELETE /files/{id}":       a.deleteFile,
	}
}

// fileJSON is the wire form of a file (docs/reference/rest.md#wire-forms). It never names the
// blob key.
type fileJSON struct {
	ID             string            `json:"id"`
	Filename       string            `json:"filename"`
	ContentType    string            `json:"content_type"`
	SizeBytes      int64             `json:"size_bytes"`
	SHA256         *string           `json:"sha256"`
	Purpose        store.FilePurpose `json:"purpose"`
	Status         store.FileStatus  `json:"status"`
	RejectedReason *string           `json:"rejected_reason"`
	ExecutionID    *string           `json:"execution_id"`
	CreatedAt      string            `json:"created_at"`
	ExpiresAt      *string           `json:"expires_at"`
}

func renderFile(f store.File) fileJSON {
	return fileJSON{
		ID:             f.ID,
		Filename:       f.Filename,
		ContentType:    f.ContentType,
		SizeBytes:      f.SizeBytes,
		SHA256:         strPtr(f.SHA256),
		Purpose:        f.Purpose,
		Status:         f.Status,
		RejectedReason: strPtr(f.RejectedReason),
		ExecutionID:    strPtr(f.ExecutionID),
		CreatedAt:      ts(f.CreatedAt),
		ExpiresAt:      tsPtr(f.ExpiresAt),
	}
}

// FileJSON is the JSON GET /files/{id} answers for f: the object of a
// file.ready event.
func FileJSON(f store.File) json.RawMessage {
	b, err := json.Marshal(renderFile(f))
	if err != nil {
		panic(fmt.Sprintf("api: encoding file: %v", err)) // strings and numbers only
	}
	return b
}

// createdFileJSON answers POST /files.
type createdFileJSON struct {
	File   fileJSON   `json:"file"`
	Upload uploadJSON `json:"upload"`
}

type uploadJSON struct {
	URL       string            `json:"url"`
	Method    string            `json:"method"`
	Headers   map[string]string `json:"headers"`
	ExpiresAt string            `json:"expires_at"`
}

type downloadJSON struct {
	URL       string `json:"url"`
	ExpiresAt string `json:"expires_at"`
}

// errFilesUnavailable answers every /files route when no blob storage is
// configured.
func errFilesUnavailable() *Error {
	e := problem(http.StatusServiceUnavailable, "unavailable", "Service unavailable",
		"File storage is not configured on this server.",
		"Retrying will not help until an operator configures blob storage; meanwhile pass the content in the task's input where its input_schema allows it.")
	e.RetryAfter = 300
	return e
}

func (a *API) listFiles(c *call) (*reply, error) {
	if a.blobs == nil {
		return nil, errFilesUnavailable()
	}
	q := c.echo.QueryParams()
	var f store.FileFilter
	var v validation
	if s := q.Get("purpose"); s != "" {
		if f.Purpose = store.FilePurpose(s); !f.Purpose.Valid() {
			v.add("purpose", fmt.Sprintf("purpose is %q; want input or output.", s),
				"Use purpose=input for uploaded files, purpose=output for files executions wrote, or leave it out.")
		}
	}
	if s := q.Get("execution_id"); s != "" {
		if !store.ValidID(store.PrefixExecution, s) {
			v.add("execution_id", fmt.Sprintf("execution_id is %q, not an execution id (exe_ followed by 32 hex digits).", s),
				"Use an id from kadu_executions_list, or leave execution_id out.")
		}
		f.ExecutionID = s
	}
	if s := q.Get("status"); s != "" {
		if f.Status = store.FileStatus(s); !f.Status.Valid() {
			names := make([]string, 0, 4)
			for _, st := range store.FileStatuses() {
				names = append(names, string(st))
			}
			v.add("status", fmt.Sprintf("status is %q, not a file status.", s), "Use one of: "+strings.Join(names, ", ")+".")
		}
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	p, err := a.parsePage(q, fmt.Sprintf("files\x00%s\x00%s\x00%s\x00%s", c.org.id, f.Purpose, f.ExecutionID, f.Status))
	if err != nil {
		return nil, err
	}
	pg, err := a.db.ListFiles(c.ctx(), c.org.id, f, store.ListParams{Limit: p.limit, Before: p.after})
	if err != nil {
		return nil, err
	}
	items := make([]fileJSON, 0, len(pg.Items))
	last := ""
	for _, it := range pg.Items {
		items = append(items, renderFile(it))
		last = it.ID
	}
	return ok(makeList(a, p, items, pg.More, last))
}

func (a *API) getFile(c *call) (*reply, error) {
	if a.blobs == nil {
		return nil, errFilesUnavailable()
	}
	f, err := a.file(c)
	if err != nil {
		return nil, err
	}
	return ok(renderFile(f))
}

// file loads the file named by the path: 404 for a malformed id, another
// organisation's file or a deleted one alike.
func (a *API) file(c *call) (store.File, error) {
	id := c.param("id")
	if !store.ValidID(store.PrefixFile, id) {
		return store.File{}, errNotFound("File " + id)
	}
	f, err := a.db.GetFile(c.ctx(), c.org.id, id)
	return f, storeErr(err, "File "+id)
}

// createFile registers an input file and answers 201 with it and the URL
// to PUT its content to. The row goes first: if signing fails, the pending
// row simply expires.
func (a *API) createFile(c *call) (*reply, error) {
	if a.blobs == nil {
		return nil, errFilesUnavailable()
	}
	o := c.body
	o.allow("filename", "content_type", "size_bytes", "sha256")
	f := store.File{Purpose: store.FileInput, CreatedBy: c.p.Subject}
	if o.require("filename", `Send the file's name, e.g. "extrato-2026-03.csv".`) {
		f.Filename, _ = fileName(o)
	}
	if o.require("content_type", `Send the file's media type, e.g. "text/csv" or "application/x-ofx".`) {
		f.ContentType, _ = mediaType(o)
	}
	if o.require("size_bytes", "Send the file's exact size in bytes.") {
		f.SizeBytes, _ = fileSize(o, c.org)
	}
	f.SHA256, _ = declaredSHA256(o)
	if err := o.err(); err != nil {
		return nil, err
	}
	ctx := c.ctx()
	now := a.now()
	expires := now.Add(UploadTTL)
	f.ExpiresAt = &expires
	f, err := a.db.CreateFile(ctx, c.org.id, f)
	if err != nil {
		return nil, err
	}
	urlExpires := now.Add(UploadURLTTL)
	url, headers, err := a.blobs.SignedUpload(ctx, f.BlobKey(), f.ContentType, f.SizeBytes, urlExpires)
	if err != nil {
		return nil, fmt.Errorf("signing the upload URL of file %s: %w", f.ID, err)
	}
	if headers == nil {
		headers = map[string]string{}
	}
	return &reply{
		status:   http.StatusCreated,
		body:     createdFileJSON{File: renderFile(f), Upload: uploadJSON{URL: url, Method: http.MethodPut, Headers: headers, ExpiresAt: ts(urlExpires)}},
		location: location(f.ID),
	}, nil
}

// fileName reads filename: 1 to 255 characters, a bare name.
func fileName(o *object) (string, bool) {
	s, ok := o.str("filename", maxFilenameLen, true)
	if !ok {
		return "", false
	}
	switch {
	case s == "":
		o.fail("filename", "is empty.", `Send the file's name, e.g. "extrato-2026-03.csv".`)
	case strings.ContainsAny(s, `/\`):
		o.fail("filename", `must be a bare file name, without "/" or "\".`, `Send only the last part of the path, e.g. "extrato.csv".`)
	case s == "." || s == "..":
		o.fail("filename", fmt.Sprintf("is %q, which is not a file name.", s), `Send the file's name, e.g. "extrato.csv".`)
	default:
		return s, true
	}
	return "", false
}

// mediaType reads content_type: a media type such as "text/csv", with
// parameters if any. It is kept as sent: the upload must send exactly it.
func mediaType(o *object) (string, bool) {
	s, ok := o.str("content_type", maxContentTypeLen, true)
	if !ok {
		return "", false
	}
	if mt, _, err := mime.ParseMediaType(s); err != nil || !strings.Contains(mt, "/") {
		o.fail("content_type", fmt.Sprintf("is %q, which is not a media type.", s),
			`Send a media type such as "text/csv", "application/x-ofx" or "application/octet-stream".`)
		return "", false
	}
	return s, true
}

// fileSize reads size_bytes: from 1 to the plan's max_file_size_bytes.
func fileSize(o *object, org orgInfo) (int64, bool) {
	var n int64
	if v := o.m["size_bytes"]; json.Unmarshal(v, &n) != nil {
		o.fail("size_bytes", "must be an integer.", "Send the file's exact size in bytes, a whole number.")
		return 0, false
	}
	limit := org.plan.MaxFileSizeBytes
	switch {
	case n < 1:
		o.fail("size_bytes", fmt.Sprintf("is %d; a file must have at least 1 byte.", n), "Send the file's exact size in bytes.")
	case limit > 0 && n > limit:
		o.fail("size_bytes", fmt.Sprintf("is %d; your organisation's plan (%s) accepts files of at most %d bytes (max_file_size_bytes).", n, org.planName, limit),
			"Split the file into smaller ones, or ask an admin to move the organisation to a plan with a larger max_file_size_bytes.")
	default:
		return n, true
	}
	return 0, false
}

// declaredSHA256 reads the optional sha256: 64 hex digits, kept in lower
// case. Null is absent.
func declaredSHA256(o *object) (string, bool) {
	if _, ok := o.raw("sha256"); !ok {
		return "", false
	}
	s, ok := o.str("sha256", 64, true)
	if !ok {
		return "", false
	}
	if b, err := hex.DecodeString(s); err != nil || len(b) != sha256.Size {
		o.fail("sha256", fmt.Sprintf("is %q, not a SHA-256 digest.", s), "Send the 64 hexadecimal digits of the content's SHA-256, or leave sha256 out.")
		return "", false
	}
	return strings.ToLower(s), true
}

// confirmFile checks what was uploaded against the declaration. A match
// makes the file ready (and emits file.ready in the same transaction); a
// mismatch rejects it and deletes the blob; both answer 200 with the file.
// A file already ready or rejected is answered as it is, so confirming is
// idempotent. Nothing uploaded yet, or an expired upload, is 409.
func (a *API) confirmFile(c *call) (*reply, error) {
	if a.blobs == nil {
		return nil, errFilesUnavailable()
	}
	c.body.allow()
	if err := c.body.err(); err != nil {
		return nil, err
	}
	f, err := a.file(c)
	if err != nil {
		return nil, err
	}
	if err := a.confirmable(f); err != nil || f.Status != store.FilePendingUpload {
		return settledReply(f, err)
	}
	ctx := c.ctx()
	s, err := a.inspectUpload(ctx, f)
	if err != nil {
		return nil, err
	}
	var out store.File
	err = a.db.InTx(ctx, func(tx *store.Tx) error {
		var err error
		if out, err = tx.SettleFile(ctx, c.org.id, f.ID, s); err != nil {
			return err
		}
		if out.Status != store.FileReady {
			return nil
		}
		return a.queue.Emit(ctx, tx, c.org.id, EventFileReady, FileJSON(out))
	})
	if errors.Is(err, store.ErrConflict) {
		// Settled meanwhile by another confirm, or expired: answer with
		// what is stored now.
		if f, err = a.file(c); err != nil {
			return nil, err
		}
		return settledReply(f, a.confirmable(f))
	}
	if err != nil {
		return nil, storeErr(err, "File "+f.ID)
	}
	if out.Status == store.FileRejected {
		// The row is final first: a concurrent confirm that found a
		// matching upload must not lose its blob to us.
		a.deleteBlob(ctx, out)
	}
	return ok(renderFile(out))
}

func settledReply(f store.File, err error) (*reply, error) {
	if err != nil {
		return nil, err
	}
	return ok(renderFile(f))
}

// confirmable refuses to confirm an upload that has expired, or whose
// upload window has closed (the maintenance job has not marked it yet).
func (a *API) confirmable(f store.File) error {
	expired := f.Status == store.FileExpired ||
		(f.Status == store.FilePendingUpload && f.ExpiresAt != nil && !a.now().Before(*f.ExpiresAt))
	if !expired {
		return nil
	}
	detail := fmt.Sprintf("File %s was never confirmed and expired", f.ID)
	if f.ExpiresAt != nil {
		detail += " at " + ts(*f.ExpiresAt)
	}
	return errInvalidState(detail+"; its upload can no longer be confirmed.",
		"Create the file again with kadu_files_create, upload it within 15 minutes, then confirm it.")
}

// inspectUpload compares the stored blob of the pending file f with its
// declaration: size, content type, and sha256 when declared. It reads the
// content to measure its SHA-256 only when size and type match.
func (a *API) inspectUpload(ctx context.Context, f store.File) (store.FileSettlement, error) {
	nothing := errInvalidState(fmt.Sprintf("Nothing was uploaded for file %s yet.", f.ID),
		"PUT the content to the upload URL kadu_files_create returned, with the headers it lists, then confirm again. If the URL has expired (15 minutes), create the file again.")
	key := f.BlobKey()
	size, contentType, err := a.blobs.Attributes(ctx, key)
	if errors.Is(err, fs.ErrNotExist) {
		return store.FileSettlement{}, nothing
	}
	if err != nil {
		return store.FileSettlement{}, fmt.Errorf("reading the upload of file %s: %w", f.ID, err)
	}
	var diffs []string
	if size != f.SizeBytes {
		diffs = append(diffs, fmt.Sprintf("size_bytes: %d bytes were declared, %d were uploaded", f.SizeBytes, size))
	}
	if !sameMediaType(contentType, f.ContentType) {
		diffs = append(diffs, fmt.Sprintf("content_type: %q was declared, the upload was sent as %q", f.ContentType, contentType))
	}
	if len(diffs) > 0 {
		return rejection(diffs), nil
	}
	rc, err := a.blobs.NewReader(ctx, key)
	if errors.Is(err, fs.ErrNotExist) {
		return store.FileSettlement{}, nothing
	}
	if err != nil {
		return store.FileSettlement{}, fmt.Errorf("reading the upload of file %s: %w", f.ID, err)
	}
	defer rc.Close()
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(rc, f.SizeBytes+1))
	if err != nil {
		return store.FileSettlement{}, fmt.Errorf("reading the upload of file %s: %w", f.ID, err)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if n != f.SizeBytes {
		diffs = append(diffs, fmt.Sprintf("size_bytes: %d bytes were declared, %d were uploaded", f.SizeBytes, n))
	} else if f.SHA256 != "" && sum != f.SHA256 {
		diffs = append(diffs, fmt.Sprintf("sha256: %s was declared, the uploaded content hashes to %s", f.SHA256, sum))
	}
	if len(diffs) > 0 {
		return rejection(diffs), nil
	}
	return store.FileSettlement{Status: store.FileReady, SHA256: sum, SizeBytes: n}, nil
}

func rejection(diffs []string) store.FileSettlement {
	return store.FileSettlement{Status: store.FileRejected, RejectedReason: strings.Join(diffs, "; ") +
		". The upload was discarded: create the file again with what you will upload, and upload it again."}
}

// sameMediaType compares media types as HTTP does: type, subtype and
// parameter names ignoring case, parameter values ignoring case too
// (charset=UTF-8 is charset=utf-8).
func sameMediaType(a, b string) bool {
	ma, pa, errA := mime.ParseMediaType(a)
	mb, pb, errB := mime.ParseMediaType(b)
	if errA != nil || errB != nil {
		return strings.EqualFold(strings.TrimSpace(a), strings.TrimSpace(b))
	}
	if ma != mb || len(pa) != len(pb) {
		return false
	}
	for k, v := range pa {
		if w, ok := pb[k]; !ok || !strings.EqualFold(v, w) {
			return false
		}
	}
	return true
}

// deleteBlob deletes a rejected upload. A failure is logged: the purge
// deletes it again once the file is past retention.
func (a *API) deleteBlob(ctx context.Context, f store.File) {
	if err := a.blobs.Delete(context.WithoutCancel(ctx), f.BlobKey()); err != nil {
		a.log.WarnContext(ctx, "api: deleting a rejected upload", slog.String("file_id", f.ID),
			slog.String("org_id", f.OrgID), slog.Any("error", err))
	}
}

// downloadFile answers a URL that GETs a ready file's content as an
// attachment for DownloadURLTTL.
func (a *API) downloadFile(c *call) (*reply, error) {
	if a.blobs == nil {
		return nil, errFilesUnavailable()
	}
	f, err := a.file(c)
	if err != nil {
		return nil, err
	}
	if f.Status != store.FileReady {
		return nil, errInvalidState(fmt.Sprintf("File %s is %s; only a ready file can be downloaded.", f.ID, f.Status), notReadyHint(f.Status))
	}
	expires := a.now().Add(DownloadURLTTL)
	url, err := a.blobs.SignedDownload(c.ctx(), f.BlobKey(), f.Filename, expires)
	if err != nil {
		return nil, fmt.Errorf("signing the download URL of file %s: %w", f.ID, err)
	}
	return ok(downloadJSON{URL: url, ExpiresAt: ts(expires)})
}

// notReadyHint says what to do with a file that is not ready.
func notReadyHint(s store.FileStatus) string {
	switch s {
	case store.FilePendingUpload:
		return "Upload its content to the upload URL, then confirm it with kadu_files_confirm."
	case store.FileRejected:
		return "Its upload did not match what was declared (see rejected_reason): create the file again and upload it."
	}
	return "Its upload was never confirmed: create the file again and upload it."
}

// deleteFile soft-deletes a file: its creator or an admin may. The blob
// goes with the purge, after the plan's retention.
func (a *API) deleteFile(c *call) (*reply, error) {
	if a.blobs == nil {
		return nil, errFilesUnavailable()
	}
	c.body.allow()
	if err := c.body.err(); err != nil {
		return nil, err
	}
	f, err := a.file(c)
	if err != nil {
		return nil, err
	}
	if !c.p.Role.AtLeast(auth.RoleAdmin) && (c.p.Subject == "" || c.p.Subject != f.CreatedBy) {
		return nil, problem(http.StatusForbidden, "forbidden_role", "Forbidden",
			"Only the person who created this file, or an admin, may delete it.",
			"Ask the file's creator or an admin of your organisation to delete it.")
	}
	if err := a.db.SoftDeleteFile(c.ctx(), c.org.id, f.ID); err != nil {
		return nil, storeErr(err, "File "+f.ID)
	}
	return ok(deletedJSON{ID: f.ID, Deleted: true})
}

// checkInputFiles records a problem for every entry of input_file_ids (ids
// of the right shape, each once) that does not name a ready file of the
// organisation.
func (a *API) checkInputFiles(ctx context.Context, o *object, orgID string, ids []string) error {
	if a.blobs == nil {
		o.v.add("input_file_ids", "Input files are not configured on this server.",
			"Leave input_file_ids empty and put the content in input instead (for example the statement's CSV text), as the task's input_schema describes.")
		return nil
	}
	files, err := a.db.FilesByID(ctx, orgID, ids)
	if err != nil {
		return err
	}
	byID := make(map[string]store.File, len(files))
	for _, f := range files {
		byID[f.ID] = f
	}
	for i, id := range ids {
		param := fmt.Sprintf("input_file_ids[%d]", i)
		f, found := byID[id]
		switch {
		case !found:
			o.fail(param, fmt.Sprintf("is %s, which names no file of your organisation.", id),
				"Use the id of a ready file (kadu_files_list with status=ready), or upload the file first with kadu_files_create.")
		case f.Status != store.FileReady:
			o.fail(param, fmt.Sprintf("is file %s, which is %s, not ready.", id, f.Status), notReadyHint(f.Status))
		}
	}
	return nil
}
