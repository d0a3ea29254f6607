package blob

import (
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// openFakeS3 opens an S3 bucket on an endpoint nothing listens on, with
// static test credentials from the environment and no shared AWS files, so
// signing works and any network call would fail. Its clock stands at t0:
// X-Amz-Expires is counted from it (X-Amz-Date is the SDK's own clock).
func openFakeS3(t *testing.T) *Bucket {
	t.Helper()
	none := filepath.Join(t.TempDir(), "none")
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDTESTKADU")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test-secret-not-real")
	t.Setenv("AWS_SESSION_TOKEN", "")
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_CONFIG_FILE", none)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", none)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	b, err := Open(t.Context(), Options{
		URL: "s3://kadu-files?region=us-east-1&endpoint=http://127.0.0.1:1&use_path_style=true",
		Now: func() time.Time { return t0 },
	})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func TestS3SignedUploadBindsTypeAndLength(t *testing.T) {
	b := openFakeS3(t)
	signed, headers, err := b.SignedUpload(t.Context(), "org_1/file_019a", "text/csv", 1234, t0.Add(15*time.Minute))
	if err != nil {
		t.Fatalf("SignedUpload: %v", err)
	}
	u, err := url.Parse(signed)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	if u.Host != "127.0.0.1:1" || u.Path != "/kadu-files/org_1/file_019a" {
		t.Errorf("URL names %s%s, want the endpoint and /kadu-files/org_1/file_019a", u.Host, u.Path)
	}
	signedHeaders := strings.Split(q.Get("X-Amz-SignedHeaders"), ";")
	for _, h := range []string{"content-length", "content-type", "host", "if-none-match"} {
		if !slices.Contains(signedHeaders, h) {
			t.Errorf("X-Amz-SignedHeaders = %v, want %s among them", signedHeaders, h)
		}
	}
	if got := q.Get("X-Amz-Expires"); got != "900" {
		t.Errorf("X-Amz-Expires = %q, want 900 (15 minutes, whole seconds)", got)
	}
	if got := q.Get("X-Amz-Credential"); !strings.HasPrefix(got, "AKIDTESTKADU/") {
		t.Errorf("X-Amz-Credential = %q, want the access key from the environment", got)
	}
	if headers["Content-Type"] != "text/csv" || headers["Content-Length"] != "1234" || headers["If-None-Match"] != "*" {
		t.Errorf("headers = %v, want the signed Content-Type, Content-Length and If-None-Match: * (never replace content)", headers)
	}
	if strings.Contains(signed, "test-secret-not-real") {
		t.Error("the presigned URL contains the secret key")
	}
}

func TestS3SignedDownloadNamesAttachment(t *testing.T) {
	b := openFakeS3(t)
	signed, err := b.SignedDownload(t.Context(), "org_1/file_019a", "relatório.csv", t0.Add(5*time.Minute))
	if err != nil {
		t.Fatalf("SignedDownload: %v", err)
	}
	u, _ := url.Parse(signed)
	q := u.Query()
	if got, want := q.Get("response-content-disposition"), `attachment; filename*=UTF-8''relat%C3%B3rio.csv`; got != want {
		t.Errorf("response-content-disposition = %q, want %q", got, want)
	}
	if got := q.Get("response-cache-control"); got != "private, no-store" {
		t.Errorf("response-cache-control = %q, want private, no-store", got)
	}
	if got := q.Get("X-Amz-Expires"); got != "300" {
		t.Errorf("X-Amz-Expires = %q, want 300", got)
	}
}
