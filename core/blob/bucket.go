package blob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
	"gocloud.dev/blob/s3blob"
	"gocloud.dev/gcerrors"
)

// configKey is the configuration key Options.URL comes from; errors about
// the URL name it so an operator knows what to fix.
const configKey = "files.url"

// Options configures Open.
type Options struct {
	// URL of the bucket: "file:///abs/dir" (the local default; the
	// directory is created 0700 if missing) or "s3://bucket?region=…"
	// (any S3-compatible store: add &endpoint=…&use_path_style=true;
	// credentials from the AWS default chain). Required.
	URL string

	// PublicURL is the origin and path prefix where Handler is mounted,
	// e.g. "http://127.0.0.1:8080/blobs". Required for file buckets,
	// ignored for S3.
	PublicURL string

	// SigningKey signs local URLs with HMAC-SHA256: at least
	// MinSigningKeyLen bytes, the same on every replica that serves the
	// directory. Required for file buckets, ignored for S3. Open copies it.
	SigningKey []byte

	// Now tells the time for signing and expiry. Default time.Now.
	Now func() time.Time

	// Logger receives refusals (debug) and storage failures (error).
	// Default: discard.
	Logger *slog.Logger
}

// Bucket keeps file contents and signs URLs to them. It implements
// core/api's Blobs.
//
// A Bucket is safe for concurrent use. Close closes the underlying
// gocloud bucket; Handler must not be serving when it is called, and no
// method may be called after it. The zero value is not usable: use Open.
type Bucket struct {
	// fixed at creation
	bucket *blob.Bucket
	local  *local // nil for S3
	now    func() time.Time
	log    *slog.Logger
}

// local is what a file bucket needs to sign and serve its own URLs.
type local struct {
	signer *signer
	base   string // PublicURL without a trailing "/"
	prefix string // path of PublicURL with a trailing "/": where keys start
	claims claims // makes each upload URL accept one body

	// bufs holds the *[]byte uploads are copied through: blob.Writer's own
	// ReadFrom allocates 1 MiB per upload; pooled buffers of copyBufSize
	// are as fast (BenchmarkUpload) and allocate nothing once warm.
	bufs sync.Pool
}

// copyBufSize is the size of the buffers in local.bufs.
const copyBufSize = 262144

// Open opens the bucket opts.URL names. It does not reach the network: a
// wrong S3 endpoint or missing credentials show on first use.
func Open(ctx context.Context, opts Options) (*Bucket, error) {
	b := &Bucket{now: opts.Now, log: opts.Logger}
	if b.now == nil {
		b.now = time.Now
	}
	if b.log == nil {
		b.log = slog.New(slog.DiscardHandler)
	}
	u, err := url.Parse(opts.URL)
	if err != nil {
		return nil, fmt.Errorf("%s: not a URL (want file:///absolute/dir or s3://bucket?region=…): %w", configKey, err)
	}
	switch u.Scheme {
	case "file":
		b.local, err = newLocal(opts)
		if err != nil {
			return nil, err
		}
		b.local.claims = claims{dir: filepath.Join(filepath.Clean(u.Path), claimsDirName)}
		b.bucket, err = openFile(u)
	case s3blob.Scheme:
		b.bucket, err = openS3(ctx, u)
	case "":
		return nil, fmt.Errorf("%s is empty or has no scheme; want file:///absolute/dir or s3://bucket?region=…", configKey)
	default:
		return nil, fmt.Errorf("%s: scheme %q is not supported; want file:///absolute/dir or s3://bucket?region=…", configKey, u.Scheme)
	}
	if err != nil {
		return nil, err
	}
	return b, nil
}

func openFile(u *url.URL) (*blob.Bucket, error) {
	switch {
	case u.Host != "":
		return nil, fmt.Errorf("%s: a file bucket needs an absolute directory with no host, e.g. file:///var/lib/kadu/blobs (got host %q)", configKey, u.Host)
	case !filepath.IsAbs(u.Path):
		return nil, fmt.Errorf("%s: a file bucket needs an absolute directory, e.g. file:///var/lib/kadu/blobs", configKey)
	case u.RawQuery != "":
		return nil, fmt.Errorf("%s: a file bucket takes no query parameters; remove %q", configKey, "?"+u.RawQuery)
	}
	// NoTempDir: uploads are written next to their final name and renamed
	// into place, so the data directory may live on another filesystem
	// than os.TempDir (a rename across mounts fails).
	b, err := fileblob.OpenBucket(filepath.Clean(u.Path), &fileblob.Options{
		CreateDir:   true,
		DirFileMode: 0o700,
		NoTempDir:   true,
	})
	if err != nil {
		return nil, fmt.Errorf("%s: opening directory %s: %w", configKey, u.Path, err)
	}
	return b, nil
}

func openS3(ctx context.Context, u *url.URL) (*blob.Bucket, error) {
	if u.Host == "" {
		return nil, fmt.Errorf("%s: an S3 URL names the bucket as its host, e.g. s3://my-bucket?region=sa-east-1", configKey)
	}
	// An explicit opener, not blob.OpenBucket: the package-global URL mux
	// would also accept schemes we do not support.
	b, err := (&s3blob.URLOpener{}).OpenBucketURL(ctx, u)
	if err != nil {
		return nil, fmt.Errorf("%s: opening S3 bucket %q: %w", configKey, u.Host, err)
	}
	return b, nil
}

func newLocal(opts Options) (*local, error) {
	if len(opts.SigningKey) < MinSigningKeyLen {
		return nil, fmt.Errorf("blob: SigningKey is %d bytes; a file bucket needs at least %d random bytes, the same on every replica", len(opts.SigningKey), MinSigningKeyLen)
	}
	pu, err := url.Parse(opts.PublicURL)
	switch {
	case opts.PublicURL == "":
		return nil, errors.New("blob: PublicURL is empty; a file bucket needs the origin and path where Handler is mounted, e.g. http://127.0.0.1:8080/blobs")
	case err != nil:
		return nil, fmt.Errorf("blob: PublicURL %q is not a URL: %w", opts.PublicURL, err)
	case pu.Scheme != "http" && pu.Scheme != "https", pu.Host == "":
		return nil, fmt.Errorf("blob: PublicURL %q must be an absolute http or https URL, e.g. http://127.0.0.1:8080/blobs", opts.PublicURL)
	case pu.RawQuery != "" || pu.Fragment != "" || pu.User != nil:
		return nil, fmt.Errorf("blob: PublicURL %q must have no user, query or fragment", opts.PublicURL)
	}
	pu.Path = strings.TrimSuffix(pu.Path, "/")
	pu.RawPath = ""
	return &local{
		signer: newSigner(opts.SigningKey),
		base:   pu.String(),
		prefix: pu.Path + "/",
		bufs:   sync.Pool{New: func() any { b := make([]byte, copyBufSize); return &b }},
	}, nil
}

// Close closes the bucket.
func (b *Bucket) Close() error {
	if err := b.bucket.Close(); err != nil {
		return fmt.Errorf("closing blob bucket: %w", err)
	}
	return nil
}

// Local reports whether the bucket is a local directory whose signed URLs
// Handler serves; the app mounts Handler only then. A nil Bucket is not
// local.
func (b *Bucket) Local() bool { return b != nil && b.local != nil }

// SignedUpload returns a URL that accepts one PUT of exactly size bytes
// with Content-Type contentType until expires, and the headers the client
// must send. Content, once stored under key, is never replaced through
// the URL: a local bucket's handler answers a later PUT with 409
// upload_already_completed (and a PUT while another is streaming with
// 409 upload_in_progress); an S3 URL carries If-None-Match: * among its
// signed headers, so the store refuses it with 412. A PUT that stored
// nothing (refused, cut short) may be sent again.
func (b *Bucket) SignedUpload(ctx context.Context, key, contentType string, size int64, expires time.Time) (string, map[string]string, error) {
	if err := checkKey(key); err != nil {
		return "", nil, err
	}
	if err := checkContentType(contentType); err != nil {
		return "", nil, fmt.Errorf("signing upload of %q: %w", key, err)
	}
	// Not even an empty file: S3 signs neither Content-Length nor
	// Content-Type for a zero-length PutObject, so it could not be held to
	// them, and an empty file is no input for anything.
	if size < 1 {
		return "", nil, fmt.Errorf("signing upload of %q: size is %d; want the exact byte count, at least 1", key, size)
	}
	ttl, err := b.ttl(expires)
	if err != nil {
		return "", nil, fmt.Errorf("signing upload of %q: %w", key, err)
	}
	headers := map[string]string{
		"Content-Type":   contentType,
		"Content-Length": strconv.FormatInt(size, 10),
	}
	if b.local != nil {
		g := grant{method: http.MethodPut, key: key, expires: expires, contentType: contentType, size: size}
		return b.local.url(g), headers, nil
	}
	u, err := signS3Upload(ctx, b.bucket, key, contentType, size, ttl)
	if err != nil {
		return "", nil, fmt.Errorf("signing upload of %q: %w", key, err)
	}
	headers["If-None-Match"] = s3CreateOnly
	return u, headers, nil
}

// SignedDownload returns a URL that GETs the blob as an attachment named
// filename until expires. It does not check that anything is stored.
func (b *Bucket) SignedDownload(ctx context.Context, key, filename string, expires time.Time) (string, error) {
	if err := checkKey(key); err != nil {
		return "", err
	}
	if err := checkFilename(filename); err != nil {
		return "", fmt.Errorf("signing download of %q: %w", key, err)
	}
	ttl, err := b.ttl(expires)
	if err != nil {
		return "", fmt.Errorf("signing download of %q: %w", key, err)
	}
	if b.local != nil {
		return b.local.url(grant{method: http.MethodGet, key: key, expires: expires, filename: filename}), nil
	}
	u, err := signS3Download(ctx, b.bucket, key, filename, ttl)
	if err != nil {
		return "", fmt.Errorf("signing download of %q: %w", key, err)
	}
	return u, nil
}

// ttl is how long a URL expiring at expires lives from now, in whole
// seconds (both schemes count seconds; rounding down never extends a URL).
func (b *Bucket) ttl(expires time.Time) (time.Duration, error) {
	d := expires.Truncate(time.Second).Sub(b.now())
	if d < time.Second {
		return 0, fmt.Errorf("expiry %s is not at least a second in the future", expires.UTC().Format(time.RFC3339))
	}
	return d.Truncate(time.Second), nil
}

// url renders g's signed URL under PublicURL.
func (l *local) url(g grant) string {
	return l.base + "/" + escapeKey(g.key) + "?" + l.signer.query(g)
}

// Attributes reports the size and content type of what is stored.
func (b *Bucket) Attributes(ctx context.Context, key string) (int64, string, error) {
	if err := checkKey(key); err != nil {
		return 0, "", err
	}
	a, err := b.bucket.Attributes(ctx, key)
	if err != nil {
		return 0, "", wrapErr("reading attributes of", key, err)
	}
	return a.Size, a.ContentType, nil
}

// NewReader reads the blob; the caller closes it.
func (b *Bucket) NewReader(ctx context.Context, key string) (io.ReadCloser, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	r, err := b.bucket.NewReader(ctx, key, nil)
	if err != nil {
		return nil, wrapErr("reading", key, err)
	}
	return r, nil
}

// WriteAll stores data under key with contentType, replacing what was
// there. Readers see the old contents or the new, never a part.
func (b *Bucket) WriteAll(ctx context.Context, key, contentType string, data []byte) error {
	if err := checkKey(key); err != nil {
		return err
	}
	if err := checkContentType(contentType); err != nil {
		return fmt.Errorf("writing %q: %w", key, err)
	}
	if err := b.bucket.WriteAll(ctx, key, data, &blob.WriterOptions{ContentType: contentType}); err != nil {
		return wrapErr("writing", key, err)
	}
	return nil
}

// Delete removes the blob; a key that holds nothing is not an error. On a
// local bucket it also removes the key's upload claim once the upload URL
// has expired; until then the claim stays, so the URL cannot store new
// content under a key whose blob was deleted (a rejected upload). The
// purge deletes the key again later and removes the claim then.
func (b *Bucket) Delete(ctx context.Context, key string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	err := b.bucket.Delete(ctx, key)
	if err != nil && gcerrors.Code(err) != gcerrors.NotFound {
		return wrapErr("deleting", key, err)
	}
	if b.local != nil {
		if err := b.local.claims.forget(key, b.now()); err != nil {
			return fmt.Errorf("deleting blob %q: %w", key, err)
		}
	}
	return nil
}

// wrapErr adds the operation and key to err; a missing blob becomes
// fs.ErrNotExist, whatever the back-end called it.
func wrapErr(op, key string, err error) error {
	if gcerrors.Code(err) == gcerrors.NotFound {
		return fmt.Errorf("%s blob %q: %w", op, key, fs.ErrNotExist)
	}
	return fmt.Errorf("%s blob %q: %w", op, key, err)
}
