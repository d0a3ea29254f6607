package blob

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestMissingKeyIsNotExist(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	const key = "org_1/file_never"
	if _, _, err := f.bucket.Attributes(ctx, key); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Attributes of a missing key = %v, want fs.ErrNotExist", err)
	}
	if _, err := f.bucket.NewReader(ctx, key); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("NewReader of a missing key = %v, want fs.ErrNotExist", err)
	}
	if err := f.bucket.Delete(ctx, key); err != nil {
		t.Errorf("Delete of a missing key = %v, want nil", err)
	}
}

func TestWriteReadDelete(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	const key = "org_1/file_out"
	data := []byte(`{"total_cents":1234}`)
	if err := f.bucket.WriteAll(ctx, key, "application/json", data); err != nil {
		t.Fatalf("WriteAll: %v", err)
	}
	size, ct, err := f.bucket.Attributes(ctx, key)
	if err != nil || size != int64(len(data)) || ct != "application/json" {
		t.Errorf("Attributes = %d, %q, %v; want %d, application/json, nil", size, ct, err, len(data))
	}
	r, err := f.bucket.NewReader(ctx, key)
	if err != nil {
		t.Fatalf("NewReader: %v", err)
	}
	got, err := io.ReadAll(r)
	_ = r.Close()
	if err != nil || string(got) != string(data) {
		t.Errorf("read %q, %v; want %q", got, err, data)
	}
	if err := f.bucket.Delete(ctx, key); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, _, err := f.bucket.Attributes(ctx, key); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Attributes after Delete = %v, want fs.ErrNotExist", err)
	}
	if left := f.files(t); len(left) != 0 {
		t.Errorf("Delete left files behind: %v", left)
	}
}

// TestSigningRefusals checks that bad arguments are refused when a URL is
// signed, with an error that names what is wrong.
func TestSigningRefusals(t *testing.T) {
	f := newFixture(t)
	later := t0.Add(15 * time.Minute)
	upload := func(key, ct string, size int64, exp time.Time) error {
		_, _, err := f.bucket.SignedUpload(t.Context(), key, ct, size, exp)
		return err
	}
	download := func(key, name string, exp time.Time) error {
		_, err := f.bucket.SignedDownload(t.Context(), key, name, exp)
		return err
	}
	tests := []struct {
		name    string
		err     error
		wantMsg string
	}{
		{"upload: bad key", upload("../etc/passwd", "text/csv", 1, later), `".."`},
		{"upload: empty content type", upload("o/f", "", 1, later), "content type is empty"},
		{"upload: not a media type", upload("o/f", "csv", 1, later), "not a media type"},
		{"upload: header injection", upload("o/f", "text/csv\r\nX-Evil: 1", 1, later), "control"},
		{"upload: empty file", upload("o/f", "text/csv", 0, later), "size is 0"},
		{"upload: negative size", upload("o/f", "text/csv", -5, later), "size is -5"},
		{"upload: expiry now", upload("o/f", "text/csv", 1, t0), "expiry"},
		{"upload: expiry past", upload("o/f", "text/csv", 1, t0.Add(-time.Hour)), "expiry"},
		{"download: bad key", download("/abs", "a.csv", later), `starts with "/"`},
		{"download: empty filename", download("o/f", "", later), "filename is empty"},
		{"download: newline in filename", download("o/f", "a\nb.csv", later), "control character"},
		{"download: invalid UTF-8", download("o/f", "a\xffb", later), "UTF-8"},
		{"download: expiry past", download("o/f", "a.csv", t0.Add(-time.Second)), "expiry"},
	}
	for _, tt := range tests {
		if tt.err == nil || !strings.Contains(tt.err.Error(), tt.wantMsg) {
			t.Errorf("%s: error = %v, want one mentioning %q", tt.name, tt.err, tt.wantMsg)
		}
	}
	if err := upload("../x", "text/csv", 1, later); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("bad key error = %v, want ErrInvalidKey", err)
	}
}

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	good := Options{URL: "file://" + filepath.Join(dir, "a", "blobs"), PublicURL: "http://127.0.0.1:8080/blobs/", SigningKey: testSigningKey}
	tests := []struct {
		name    string
		mutate  func(o *Options)
		wantMsg string // "" : opens
	}{
		{name: "file bucket", mutate: func(*Options) {}},
		{name: "empty URL", mutate: func(o *Options) { o.URL = "" }, wantMsg: "files.url is empty"},
		{name: "unsupported scheme", mutate: func(o *Options) { o.URL = "gs://bucket" }, wantMsg: `files.url: scheme "gs" is not supported`},
		{name: "relative directory", mutate: func(o *Options) { o.URL = "file://blobs" }, wantMsg: "files.url: a file bucket needs an absolute directory"},
		{name: "query on file URL", mutate: func(o *Options) { o.URL += "?create_dir=1" }, wantMsg: "files.url: a file bucket takes no query parameters"},
		{name: "s3 without bucket", mutate: func(o *Options) { o.URL = "s3://?region=us-east-1" }, wantMsg: "files.url: an S3 URL names the bucket"},
		{name: "s3 unknown parameter", mutate: func(o *Options) { o.URL = "s3://b?colour=blue" }, wantMsg: "files.url: opening S3 bucket"},
		{name: "short signing key", mutate: func(o *Options) { o.SigningKey = testSigningKey[:31] }, wantMsg: "SigningKey is 31 bytes"},
		{name: "no public URL", mutate: func(o *Options) { o.PublicURL = "" }, wantMsg: "PublicURL is empty"},
		{name: "relative public URL", mutate: func(o *Options) { o.PublicURL = "/blobs" }, wantMsg: "absolute http or https URL"},
		{name: "public URL with query", mutate: func(o *Options) { o.PublicURL = "http://h/blobs?x=1" }, wantMsg: "no user, query or fragment"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := good
			tt.mutate(&o)
			b, err := Open(t.Context(), o)
			if tt.wantMsg == "" {
				if err != nil {
					t.Fatalf("Open = %v", err)
				}
				_ = b.Close()
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Fatalf("Open error = %v, want one containing %q", err, tt.wantMsg)
			}
		})
	}
}

func TestOpenCreatesPrivateDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data", "blobs")
	b, err := Open(t.Context(), Options{URL: "file://" + dir, PublicURL: "http://127.0.0.1:8080/blobs", SigningKey: testSigningKey})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer b.Close()
	if !b.Local() {
		t.Error("Local() = false for a file bucket")
	}
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatalf("the bucket directory was not created: %v", err)
	}
	if perm := fi.Mode().Perm(); perm != 0o700 {
		t.Errorf("bucket directory mode = %o, want 700", perm)
	}
}

// TestPublicURLTrailingSlash checks that "…/blobs" and "…/blobs/" sign the
// same URLs, with one "/" between the prefix and the key.
func TestPublicURLTrailingSlash(t *testing.T) {
	var urls []string
	for _, pub := range []string{"https://files.example.com/blobs", "https://files.example.com/blobs/"} {
		b, err := Open(t.Context(), Options{URL: "file://" + t.TempDir(), PublicURL: pub, SigningKey: testSigningKey, Now: func() time.Time { return t0 }})
		if err != nil {
			t.Fatal(err)
		}
		u, err := b.SignedDownload(t.Context(), "org 1/ação", "a.csv", t0.Add(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		_ = b.Close()
		urls = append(urls, u)
	}
	if urls[0] != urls[1] || !strings.HasPrefix(urls[0], "https://files.example.com/blobs/org%201/a%C3%A7%C3%A3o?") {
		t.Errorf("signed URLs = %q, want equal and under /blobs/ with the key path-escaped", urls)
	}
}
