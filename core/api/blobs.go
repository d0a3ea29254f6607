package api

import (
	"context"
	"io"
	"time"
)

// Blobs keeps the contents of files and signs URLs to them; core/blob
// implements it over gocloud.dev/blob. Keys are opaque to it ("<org_id>/<file_id>").
// Errors for a key that holds nothing wrap fs.ErrNotExist.
// Implementations are safe for concurrent use.
type Blobs interface {
	// SignedUpload returns a URL that accepts one PUT of exactly size bytes
	// with Content-Type contentType until expires, and the headers the
	// client must send with it. Once content is stored under key the URL
	// never replaces it, so what confirm measured is what executions read.
	SignedUpload(ctx context.Context, key, contentType string, size int64, expires time.Time) (url string, headers map[string]string, err error)

	// SignedDownload returns a URL that GETs the blob as an attachment
	// named filename until expires.
	SignedDownload(ctx context.Context, key, filename string, expires time.Time) (url string, err error)

	// Attributes reports the size and content type of what is stored.
	Attributes(ctx context.Context, key string) (size int64, contentType string, err error)

	// NewReader reads the blob; the caller closes it.
	NewReader(ctx context.Context, key string) (io.ReadCloser, error)

	// WriteAll stores data under key (output files written by executions).
	WriteAll(ctx context.Context, key, contentType string, data []byte) error

	// Delete removes the blob; a key that holds nothing is not an error.
	Delete(ctx context.Context, key string) error
}
