package blob

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"syscall"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
)

// refusal is an answer the handler gives instead of doing what was asked,
// rendered as {"error":{"code":…,"message":…}}. Messages speak to whoever
// holds the URL, often a model: what went wrong and what to do next.
type refusal struct {
	status  int
	code    string
	message string
	allow   string // Allow header of a 405
}

var (
	refuseNotFound = refusal{http.StatusNotFound, "not_found",
		"Nothing is served at this address. Use the exact URL you were given.", ""}
	refuseSignature = refusal{http.StatusForbidden, "signature_invalid",
		"The URL's signature is missing or does not match it. Use the exact URL you were given, unchanged; if it was cut or edited, ask for a new one.", ""}
	refuseExpired = refusal{http.StatusForbidden, "url_expired",
		"This URL has expired. Ask for a new one (kadu_files_create for an upload, kadu_files_download for a download) and use it right away.", ""}
	refuseGone = refusal{http.StatusNotFound, "not_found",
		"Nothing is stored under this URL: the upload was never completed or the file was deleted.", ""}
	refuseInternal = refusal{http.StatusInternalServerError, "internal_error",
		"The file could not be stored or read. Nothing was saved; try again in a moment.", ""}
	refuseStorageFull = refusal{http.StatusServiceUnavailable, "unavailable",
		"The file storage is full for now; nothing was stored and the URL can be used again. Retry after the Retry-After seconds.", ""}
	refuseCompleted = refusal{http.StatusConflict, "upload_already_completed",
		"This URL already received the file's content, which is never replaced; nothing was stored. Confirm the file (kadu_files_confirm) to check what was received. To send other content, create a new file with kadu_files_create.", ""}
	refuseInProgress = refusal{http.StatusConflict, "upload_in_progress",
		"Another upload to this URL is still in progress; nothing was stored. Wait for it to finish, then confirm the file (kadu_files_confirm). If that upload failed, send the file again; if it never finishes, create a new file with kadu_files_create.", ""}
)

// Handler serves the local signed URLs: PUT to upload, GET to download.
// Mount it at PublicURL's path without stripping the prefix; it reads the
// key from the full request path. A bucket that is not Local (or a nil
// Bucket) gets a handler that answers 404 to everything.
//
// A PUT is checked, in this order: signature (403 signature_invalid),
// expiry (403 url_expired), method (405 with Allow), Content-Type (415
// content_type_mismatch), Content-Length (413 size_mismatch), then that
// the URL has not been used (409 upload_already_completed, or 409
// upload_in_progress while another PUT streams), then the body's real
// length (413 size_mismatch). Each URL stores at most one body, ever:
// of concurrent PUTs exactly one proceeds (an O_EXCL claim file, see
// claims), and content once stored is never replaced. A refused or cut
// upload stores nothing and frees the URL for another try.
func (b *Bucket) Handler() http.Handler {
	if !b.Local() {
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { writeRefusal(w, refuseNotFound) })
	}
	return http.HandlerFunc(b.serveHTTP)
}

func (b *Bucket) serveHTTP(w http.ResponseWriter, r *http.Request) {
	key, ok := strings.CutPrefix(r.URL.Path, b.local.prefix)
	if !ok {
		b.refuse(r, w, refuseNotFound, "")
		return
	}
	g, err := b.local.signer.verify(key, r.URL.RawQuery)
	if err != nil {
		b.refuse(r, w, refuseSignature, "")
		return
	}
	if !b.now().Before(g.expires) {
		b.refuse(r, w, refuseExpired, g.key)
		return
	}
	if r.Method != g.method {
		b.refuse(r, w, refusal{http.StatusMethodNotAllowed, "method_not_allowed",
			fmt.Sprintf("This URL accepts %s only; send the request with method %s.", g.method, g.method), g.method}, g.key)
		return
	}
	switch g.method {
	case http.MethodPut:
		b.receive(w, r, g)
	case http.MethodGet:
		b.send(w, r, g)
	}
}

// receive stores the body of an upload whose signature, expiry and method
// already hold.
func (b *Bucket) receive(w http.ResponseWriter, r *http.Request, g grant) {
	if cts := r.Header.Values("Content-Type"); len(cts) != 1 || cts[0] != g.contentType {
		b.refuse(r, w, refusal{http.StatusUnsupportedMediaType, "content_type_mismatch",
			fmt.Sprintf("This URL accepts Content-Type %q exactly; send that header with the upload.", g.contentType), ""}, g.key)
		return
	}
	sizeMismatch := func(detail string) refusal {
		return refusal{http.StatusRequestEntityTooLarge, "size_mismatch",
			fmt.Sprintf("This URL accepts exactly %d bytes with Content-Length: %d; %s Nothing was stored. Send the whole file again.", g.size, g.size, detail), ""}
	}
	switch {
	case r.ContentLength < 0 || len(r.Header.Values("Content-Length")) == 0:
		b.refuse(r, w, sizeMismatch("the request had no Content-Length."), g.key)
		return
	case r.ContentLength != g.size:
		b.refuse(r, w, sizeMismatch(fmt.Sprintf("the request declared %d.", r.ContentLength)), g.key)
		return
	}

	// One body per URL: the claim is taken before a byte is read and kept
	// once the blob is committed; any failure below releases it.
	state, err := b.local.claims.take(g.key, g.expires)
	switch {
	case err != nil:
		b.fail(r, w, g.key, "claiming", err)
		return
	case state == claimDone:
		b.refuse(r, w, refuseCompleted, g.key)
		return
	case state == claimBusy:
		b.refuse(r, w, refuseInProgress, g.key)
		return
	}
	committed := false
	defer func() {
		if !committed {
			if err := b.local.claims.release(g.key); err != nil {
				b.log.ErrorContext(r.Context(), "blob upload claim not released", "key", g.key, "err", err)
			}
		}
	}()
	// Content that got there without a claim (stored before claims
	// existed, or by WriteAll) is not replaced either.
	if _, err := b.bucket.Attributes(r.Context(), g.key); err == nil {
		committed = true
		b.markDone(r, g)
		b.refuse(r, w, refuseCompleted, g.key)
		return
	} else if gcerrors.Code(err) != gcerrors.NotFound {
		b.fail(r, w, g.key, "checking for earlier content", err)
		return
	}

	// Cancelling ctx makes the writer's Close discard the temporary file,
	// so nothing is renamed into place unless the body matched.
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	wr, err := b.bucket.NewWriter(ctx, g.key, &blob.WriterOptions{ContentType: g.contentType})
	if err != nil {
		b.fail(r, w, g.key, "opening writer", err)
		return
	}
	abort := func() {
		cancel()
		_ = wr.Close()
	}
	// At most size+1 bytes: one more than allowed is enough to know the
	// body is too long, and no more is ever read or stored.
	body := &countingReader{r: io.LimitReader(r.Body, g.size+1)}
	buf := b.local.bufs.Get().(*[]byte)
	n, err := io.CopyBuffer(writerOnly{wr}, body, *buf)
	b.local.bufs.Put(buf)
	switch {
	case errors.Is(body.err, io.ErrUnexpectedEOF): // Content-Length promised more
		abort()
		b.refuse(r, w, sizeMismatch(fmt.Sprintf("the body ended after %d bytes.", body.n)), g.key)
		return
	case body.err != nil: // the client went away or broke the framing
		abort()
		b.refuse(r, w, refusal{http.StatusBadRequest, "body_unreadable",
			"The upload's body could not be read to the end. Nothing was stored. Send the whole file again.", ""}, g.key)
		return
	case err != nil:
		abort()
		b.fail(r, w, g.key, "writing", err)
		return
	case n != g.size: // net/http enforces Content-Length; this guards any other server stack
		abort()
		what := fmt.Sprintf("the body ended after %d bytes.", n)
		if n > g.size {
			what = "the body was longer."
		}
		b.refuse(r, w, sizeMismatch(what), g.key)
		return
	}
	if err := wr.Close(); err != nil {
		b.fail(r, w, g.key, "committing", err)
		return
	}
	// The blob is in place: from here the claim stays.
	committed = true
	b.markDone(r, g)
	b.log.DebugContext(r.Context(), "blob uploaded", "key", g.key, "size_bytes", n)
	writeJSON(w, http.StatusOK, struct {
		SizeBytes int64 `json:"size_bytes"`
	}{n})
}

// markDone marks g's claim done. A failure is logged only: the claim
// still says "busy", which refuses later PUTs as well.
func (b *Bucket) markDone(r *http.Request, g grant) {
	if err := b.local.claims.done(g.key, g.expires); err != nil {
		b.log.ErrorContext(r.Context(), "blob upload claim not marked done", "key", g.key, "err", err)
	}
}

// send streams a blob whose signature, expiry and method already hold.
func (b *Bucket) send(w http.ResponseWriter, r *http.Request, g grant) {
	rd, err := b.bucket.NewReader(r.Context(), g.key, nil)
	if gcerrors.Code(err) == gcerrors.NotFound {
		b.refuse(r, w, refuseGone, g.key)
		return
	}
	if err != nil {
		b.fail(r, w, g.key, "opening reader", err)
		return
	}
	defer rd.Close()
	ct := rd.ContentType()
	if ct == "" {
		ct = "application/octet-stream"
	}
	h := w.Header()
	h.Set("Content-Type", ct)
	h.Set("Content-Length", strconv.FormatInt(rd.Size(), 10))
	h.Set("Content-Disposition", contentDisposition(g.filename))
	setSafetyHeaders(h)
	w.WriteHeader(http.StatusOK)
	if _, err := io.Copy(w, rd); err != nil {
		// The status is sent; the client sees a short body and retries.
		b.log.DebugContext(r.Context(), "blob download cut short", "key", g.key, "err", err)
	}
}

// writerOnly hides blob.Writer's ReadFrom so io.CopyBuffer uses our buffer.
type writerOnly struct{ io.Writer }

// countingReader remembers how much it read and the first error other
// than io.EOF, so a short body is told apart from a failing bucket.
type countingReader struct {
	r   io.Reader
	n   int64
	err error
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if err != nil && err != io.EOF && c.err == nil {
		c.err = err
	}
	return n, err
}

// refuse logs a refusal without the URL (it carries the signature) and
// answers it. key is empty until the signature holds.
func (b *Bucket) refuse(r *http.Request, w http.ResponseWriter, rf refusal, key string) {
	b.log.DebugContext(r.Context(), "blob request refused", "method", r.Method, "key", key, "code", rf.code, "status", rf.status)
	writeRefusal(w, rf)
}

// fail logs a storage failure and answers it: 503 with Retry-After when
// the file system is full (nothing is wrong with the request and a retry
// may succeed once space is back; the process's logger throttles the
// repeats), else 500.
func (b *Bucket) fail(r *http.Request, w http.ResponseWriter, key, op string, err error) {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		b.log.WarnContext(r.Context(), "blob storage full", "method", r.Method, "key", key, "op", op, "err", err)
		w.Header().Set("Retry-After", strconv.Itoa(storageFullRetryAfter))
		writeRefusal(w, refuseStorageFull)
		return
	}
	b.log.ErrorContext(r.Context(), "blob storage failed", "method", r.Method, "key", key, "op", op, "err", err)
	writeRefusal(w, refuseInternal)
}

// storageFullRetryAfter is the Retry-After, in seconds, of a PUT refused
// for a full file system: the same 30 s the API sends for a full store.
const storageFullRetryAfter = 30

func writeRefusal(w http.ResponseWriter, rf refusal) {
	if rf.allow != "" {
		w.Header().Set("Allow", rf.allow)
	}
	type body struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	writeJSON(w, rf.status, struct {
		Error body `json:"error"`
	}{body{rf.code, rf.message}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	buf, _ := json.Marshal(v) // plain structs of strings and ints: cannot fail
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(buf)+1))
	setSafetyHeaders(h)
	w.WriteHeader(status)
	_, _ = w.Write(append(buf, '\n'))
}

// setSafetyHeaders keeps browsers from rendering or caching what passes
// through these URLs: contents are untrusted data (docs/reference/rest.md#conventions).
func setSafetyHeaders(h http.Header) {
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "private, no-store")
	h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
}
