package blob

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"gocloud.dev/blob"
)

// signS3Upload presigns a PutObject whose Content-Type, Content-Length and
// If-None-Match: * are signed headers: S3 refuses a PUT that sends other
// values, which is the check the local handler makes itself, and refuses
// with 412 a PUT to a key that already holds an object (conditional
// writes), so content once stored is never replaced through the URL. The content type goes through
// BeforeSign, not SignedURLOptions.ContentType, because s3blob refuses the
// latter (the v2 SDK cannot enforce it that way).
func signS3Upload(ctx context.Context, b *blob.Bucket, key, contentType string, size int64, ttl time.Duration) (string, error) {
	return b.SignedURL(ctx, key, &blob.SignedURLOptions{
		Method: http.MethodPut,
		Expiry: ttl,
		BeforeSign: func(as func(any) bool) error {
			var in *s3.PutObjectInput
			if !as(&in) {
				return errors.New("s3blob did not expose its PutObjectInput; cannot sign content type and length")
			}
			in.ContentType = aws.String(contentType)
			in.ContentLength = aws.Int64(size)
			in.IfNoneMatch = aws.String(s3CreateOnly)
			return nil
		},
	})
}

// s3CreateOnly is the If-None-Match value of an upload: write only if no
// object exists under the key.
const s3CreateOnly = "*"

// signS3Download presigns a GetObject whose response carries the
// attachment filename and forbids caching, as the local handler does.
func signS3Download(ctx context.Context, b *blob.Bucket, key, filename string, ttl time.Duration) (string, error) {
	return b.SignedURL(ctx, key, &blob.SignedURLOptions{
		Method: http.MethodGet,
		Expiry: ttl,
		BeforeSign: func(as func(any) bool) error {
			var in *s3.GetObjectInput
			if !as(&in) {
				return errors.New("s3blob did not expose its GetObjectInput; cannot sign the attachment filename")
			}
			in.ResponseContentDisposition = aws.String(contentDisposition(filename))
			in.ResponseCacheControl = aws.String("private, no-store")
			return nil
		},
	})
}
