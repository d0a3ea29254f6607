// Package blob keeps the contents of Kadu's files (docs/files-webhooks-limits.md#files-presigned-urls-never-bytes-in-a-tool) on
// gocloud.dev/blob and hands out the presigned URLs clients upload and
// download them through.
//
// It owns: opening the bucket named by files.url (fileblob for a local
// directory, the embedded default; s3blob for any S3-compatible store), the
// mapping of the bucket's errors onto fs.ErrNotExist, the validation of
// keys, and, for local buckets, its own HMAC-SHA256 URL scheme and the
// http.Handler that serves those URLs. A local URL binds the method, the key
// and the expiry, plus the exact Content-Type and size of an upload or the
// attachment filename of a download; the handler refuses everything else
// before it writes a byte. S3 URLs are the store's native presigned URLs,
// with the content type and length among the signed headers. Either way an
// upload URL stores at most one body and never replaces stored content:
// locally an O_EXCL claim per key (claim.go), on S3 a signed
// If-None-Match: *.
//
// It must not: know organisations, files rows or their states (core/api
// decides what a key is and when a file is ready; keys here are opaque),
// authenticate callers (a valid signature is the only authority a signed
// URL carries), or log a signature or a whole signed URL.
//
// Wiring, once per process:
//
//	b, err := blob.Open(ctx, blob.Options{URL: cfg.FilesURL(),
//		PublicURL: publicBase + "/blobs", SigningKey: key, Logger: log})
//	defer b.Close()
//	if b.Local() {
//		e.Any("/blobs/*", echo.WrapHandler(b.Handler()))
//	}
//
// and hand b to core/api as its Blobs.
package blob
