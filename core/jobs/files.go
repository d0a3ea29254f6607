package jobs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"log/slog"
	"mime"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/kobana/kadu/core/agent"
	"github.com/kobana/kadu/core/store"
)

// Blobs keeps the contents of files (docs/files-webhooks-limits.md#files-presigned-urls-never-bytes-in-a-tool) under the keys
// store.File.BlobKey names; core/blob implements it. Errors for a key that
// holds nothing wrap fs.ErrNotExist. Implementations are safe for
// concurrent use.
type Blobs interface {
	// NewReader reads the blob; the caller closes it.
	NewReader(ctx context.Context, key string) (io.ReadCloser, error)
	// SignedDownload returns a URL that GETs the blob as an attachment
	// named filename until expires.
	SignedDownload(ctx context.Context, key, filename string, expires time.Time) (string, error)
	// WriteAll stores data under key.
	WriteAll(ctx context.Context, key, contentType string, data []byte) error
	// Delete removes the blob; a key that holds nothing is not an error.
	Delete(ctx context.Context, key string) error
}

const (
	// downloadURLTTL is how long a URL handed to the HTTP runner works
	// (docs/files-webhooks-limits.md#files-presigned-urls-never-bytes-in-a-tool: download URLs live 5 minutes).
	downloadURLTTL = 5 * time.Minute

	// outputPendingTTL bounds how long an output file may stay
	// pending_upload: only if this replica died between its row and its
	// blob, and then the maintenance job expires it and deletes the blob.
	outputPendingTTL = time.Hour

	// purgeBatch is how many files one purge round lists; maxPurgeRounds
	// bounds the rounds of one maintenance run (the next run goes on).
	purgeBatch     = 200
	maxPurgeRounds = 10

	maxOutputFilename = 255
)

// inputFiles loads the execution's input files, in input_file_ids order,
// as the runner sees them. problem is set, and files nil, when one cannot
// be used (deleted since the launch, not ready, or no blob storage here):
// the execution then fails with invalid_input and problem as its message.
func (q *Queue) inputFiles(ctx context.Context, exe store.Execution) (files []agent.InputFile, problem string, err error) {
	if len(exe.InputFileIDs) == 0 {
		return nil, "", nil
	}
	if q.opts.Blobs == nil {
		return nil, "input files are not configured on this replica", nil
	}
	found, err := q.opts.Store.FilesByID(ctx, exe.OrgID, exe.InputFileIDs)
	if err != nil {
		return nil, "", fmt.Errorf("loading input files: %w", err)
	}
	byID := make(map[string]store.File, len(found))
	for _, f := range found {
		byID[f.ID] = f
	}
	files = make([]agent.InputFile, 0, len(exe.InputFileIDs))
	for _, id := range exe.InputFileIDs {
		f, ok := byID[id]
		switch {
		case !ok:
			return nil, fmt.Sprintf("input file %s was deleted before the execution could read it", id), nil
		case f.Status != store.FileReady:
			return nil, fmt.Sprintf("input file %s is %s, not ready", id, f.Status), nil
		}
		files = append(files, q.inputFile(f))
	}
	return files, "", nil
}

func (q *Queue) inputFile(f store.File) agent.InputFile {
	blobs, key := q.opts.Blobs, f.BlobKey()
	return agent.InputFile{
		ID:          f.ID,
		Filename:    f.Filename,
		ContentType: f.ContentType,
		Size:        f.SizeBytes,
		Open: func(ctx context.Context) (io.ReadCloser, error) {
			rc, err := blobs.NewReader(ctx, key)
			if err != nil {
				return nil, fmt.Errorf("opening input file %s: %w", f.ID, err)
			}
			return &verifiedReader{rc: rc, h: sha256.New(), id: f.ID, size: f.SizeBytes, want: f.SHA256}, nil
		},
		DownloadURL: func(ctx context.Context) (string, error) {
			u, err := blobs.SignedDownload(ctx, key, f.Filename, q.opts.Now().Add(downloadURLTTL))
			if err != nil {
				return "", fmt.Errorf("signing a download URL for input file %s: %w", f.ID, err)
			}
			return u, nil
		},
	}
}

// errFileChanged: what a reader read is not the content that was confirmed.
var errFileChanged = errors.New("the content changed since the file was confirmed")

// verifiedReader hashes what it reads and, at the end, fails unless it read
// exactly the confirmed content. The upload URL of a file stays valid for a
// while after it is confirmed, and a PUT to it would otherwise change a
// ready file under the runner without anyone noticing.
type verifiedReader struct {
	rc   io.ReadCloser
	h    hash.Hash
	id   string
	n    int64
	size int64
	want string // lowercase hex; "" checks the size only
}

func (r *verifiedReader) Read(p []byte) (int, error) {
	n, err := r.rc.Read(p)
	r.h.Write(p[:n])
	r.n += int64(n)
	if r.n > r.size {
		return n, fmt.Errorf("input file %s: more than its %d bytes: %w", r.id, r.size, errFileChanged)
	}
	if errors.Is(err, io.EOF) {
		if r.n != r.size || (r.want != "" && hex.EncodeToString(r.h.Sum(nil)) != r.want) {
			return n, fmt.Errorf("input file %s: %w", r.id, errFileChanged)
		}
	}
	return n, err
}

func (r *verifiedReader) Close() error { return r.rc.Close() }

// writeBlob stores an output file of the execution as a blob with a files
// row (purpose output, ready, execution_id set, digest and size measured).
// The row goes first, pending for outputPendingTTL, then the blob, then
// the row becomes ready: a crash in between leaves a pending row that the
// maintenance job expires, deleting whatever blob was written.
func (s *sink) writeBlob(ctx context.Context, name, contentType string, data []byte) (string, error) {
	if utf8.RuneCountInString(name) > maxOutputFilename || strings.ContainsFunc(name, unicode.IsControl) || strings.Contains(name, `\`) {
		return "", fmt.Errorf("output file name %q is not usable", name)
	}
	if mt, _, err := mime.ParseMediaType(contentType); err != nil || !strings.Contains(mt, "/") {
		contentType = "application/octet-stream"
	}
	st, org := s.q.opts.Store, s.exe.OrgID
	sum := sha256.Sum256(data)
	digest := hex.EncodeToString(sum[:])
	expires := s.q.opts.Now().Add(outputPendingTTL)
	f, err := st.CreateFile(ctx, org, store.File{
		Filename: name, ContentType: contentType, SizeBytes: int64(len(data)), SHA256: digest,
		Purpose: store.FileOutput, ExecutionID: s.exe.ID, CreatedBy: s.exe.LaunchedBy, ExpiresAt: &expires,
	})
	if err != nil {
		return "", fmt.Errorf("recording output file %s: %w", name, err)
	}
	if err := s.q.opts.Blobs.WriteAll(ctx, f.BlobKey(), contentType, data); err != nil {
		return "", fmt.Errorf("storing output file %s: %w", name, err)
	}
	// Ready and file.ready commit together, as the API's confirm does.
	err = st.InTx(ctx, func(tx *store.Tx) error {
		ready, err := tx.SettleFile(ctx, org, f.ID, store.FileSettlement{Status: store.FileReady, SHA256: digest, SizeBytes: int64(len(data))})
		if err != nil {
			return err
		}
		return s.q.Emit(ctx, tx, org, store.EventFileReady, s.q.fileJSON(ready))
	})
	if err != nil {
		return "", fmt.Errorf("recording output file %s: %w", name, err)
	}
	s.addFile(f.ID)
	return f.ID, nil
}

// maintainFiles expires uploads left unconfirmed (deleting what was
// uploaded) and purges files deleted, expired or rejected more than
// retention ago: blobs first, then rows, so that a crash in between leaves
// rows the next run lists again. Without Blobs it only marks expiries.
func (q *Queue) maintainFiles(ctx context.Context, now time.Time, retention time.Duration) error {
	st, blobs := q.opts.Store, q.opts.Blobs
	expired, err := st.ExpireUploads(ctx, now)
	if err != nil {
		return err
	}
	for _, f := range expired {
		q.log.InfoContext(ctx, "upload expired unconfirmed", slog.String("file_id", f.ID), slog.String("org_id", f.OrgID))
		if blobs != nil {
			// A failure is retried by the purge: expired files are purgeable.
			q.deleteBlob(ctx, f)
		}
	}
	if blobs == nil || retention <= 0 {
		return nil
	}
	before := now.Add(-retention)
	for range maxPurgeRounds {
		files, err := st.PurgeableFiles(ctx, before, purgeBatch)
		if err != nil {
			return err
		}
		gone := make([]string, 0, len(files))
		for _, f := range files {
			if q.deleteBlob(ctx, f) {
				gone = append(gone, f.ID)
			}
		}
		if _, err := st.PurgeFiles(ctx, before, gone); err != nil {
			return err
		}
		if len(files) < purgeBatch || len(gone) < len(files) {
			return nil // done, or blobs failing: the next run retries
		}
	}
	return nil
}

// deleteBlob deletes f's blob and reports whether it is gone; a failure is
// logged.
func (q *Queue) deleteBlob(ctx context.Context, f store.File) bool {
	if err := q.opts.Blobs.Delete(ctx, f.BlobKey()); err != nil {
		q.log.WarnContext(ctx, "deleting a file's blob", slog.String("file_id", f.ID), slog.String("org_id", f.OrgID), slog.Any("error", err))
		return false
	}
	return true
}

// fileJSON renders a file as the object of file.ready.
func (q *Queue) fileJSON(f store.File) json.RawMessage {
	if q.opts.FileJSON != nil {
		return q.opts.FileJSON(f)
	}
	b, _ := json.Marshal(map[string]any{"id": f.ID, "object": "file", "status": f.Status, "purpose": f.Purpose, "execution_id": f.ExecutionID})
	return b
}
