package api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/internal/fakeclock"
	"github.com/kobana/kadu/core/store"
)

// fakeBlobs is an in-memory Blobs. An upload URL it signs is remembered
// with what it binds (key, content type, size, expiry), so that upload can
// refuse what core/blob's handler refuses. The real bucket and its HTTP
// round trip are tested in core/blob and core/app.
type fakeBlobs struct {
	mu      sync.Mutex
	objects map[string]fakeObject // guarded by mu
	grants  map[string]fakeGrant  // upload URL → what it allows; guarded by mu
	deleted []string              // keys deleted; guarded by mu
}

type fakeObject struct {
	contentType string
	data        []byte
}

type fakeGrant struct {
	key, contentType string
	size             int64
	expires          time.Time
}

var _ Blobs = (*fakeBlobs)(nil)

func newFakeBlobs() *fakeBlobs {
	return &fakeBlobs{objects: map[string]fakeObject{}, grants: map[string]fakeGrant{}}
}

// withFakeBlobs gives the API an empty fakeBlobs.
func withFakeBlobs(o *Options) { o.Blobs = newFakeBlobs() }

func (b *fakeBlobs) SignedUpload(_ context.Context, key, contentType string, size int64, expires time.Time) (string, map[string]string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	u := fmt.Sprintf("https://blobs.test/put/%s?grant=%d", key, len(b.grants))
	b.grants[u] = fakeGrant{key: key, contentType: contentType, size: size, expires: expires}
	return u, map[string]string{"Content-Type": contentType}, nil
}

func (b *fakeBlobs) SignedDownload(_ context.Context, key, filename string, expires time.Time) (string, error) {
	return "https://blobs.test/get/" + key + "?filename=" + url.QueryEscape(filename) +
		"&expires=" + strconv.FormatInt(expires.Unix(), 10), nil
}

func (b *fakeBlobs) Attributes(_ context.Context, key string) (int64, string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	o, ok := b.objects[key]
	if !ok {
		return 0, "", fmt.Errorf("blob %s: %w", key, fs.ErrNotExist)
	}
	return int64(len(o.data)), o.contentType, nil
}

func (b *fakeBlobs) NewReader(_ context.Context, key string) (io.ReadCloser, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	o, ok := b.objects[key]
	if !ok {
		return nil, fmt.Errorf("blob %s: %w", key, fs.ErrNotExist)
	}
	return io.NopCloser(bytes.NewReader(o.data)), nil
}

func (b *fakeBlobs) WriteAll(_ context.Context, key, contentType string, data []byte) error {
	b.put(key, contentType, data)
	return nil
}

func (b *fakeBlobs) Delete(_ context.Context, key string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.objects, key)
	b.deleted = append(b.deleted, key)
	return nil
}

// put stores data under key as is, as a store that checks nothing would.
func (b *fakeBlobs) put(key, contentType string, data []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.objects[key] = fakeObject{contentType: contentType, data: bytes.Clone(data)}
}

// has reports whether key holds a blob.
func (b *fakeBlobs) has(key string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, ok := b.objects[key]
	return ok
}

// upload does what a client does with the "upload" member of POST /files:
// PUT data to its url with its headers, at now. It fails the test if the
// signed URL would refuse it.
func (b *fakeBlobs) upload(t testing.TB, up map[string]any, data []byte, now time.Time) {
	t.Helper()
	if up["method"] != http.MethodPut {
		t.Fatalf("upload method = %v, want PUT", up["method"])
	}
	b.mu.Lock()
	g, ok := b.grants[up["url"].(string)]
	b.mu.Unlock()
	ct, _ := up["headers"].(map[string]any)["Content-Type"].(string)
	switch {
	case !ok:
		t.Fatalf("upload URL %v was never signed", up["url"])
	case ct != g.contentType:
		t.Fatalf("upload headers send Content-Type %q, the URL is signed for %q", ct, g.contentType)
	case int64(len(data)) != g.size:
		t.Fatalf("uploading %d bytes to a URL signed for %d", len(data), g.size)
	case !now.Before(g.expires):
		t.Fatalf("uploading at %v to a URL that expired at %v", now, g.expires)
	}
	b.put(g.key, ct, data)
}

// fileEnv is an API with a fakeBlobs and a clock that moves only when told.
type fileEnv struct {
	*env
	blobs *fakeBlobs
	clock *fakeclock.Clock
}

func newFileEnv(t testing.TB, db *store.DB, mods ...func(*Options)) *fileEnv {
	t.Helper()
	fe := &fileEnv{blobs: newFakeBlobs(), clock: fakeclock.New(time.Now().UTC().Truncate(time.Microsecond))}
	fe.env = newEnv(t, db, func(o *Options) {
		o.Blobs, o.Now = fe.blobs, fe.clock.Now
		for _, mod := range mods {
			mod(o)
		}
	})
	return fe
}

// create registers a file as tok and returns its JSON and its upload.
func (fe *fileEnv) create(tok, filename, contentType string, data []byte) (file, upload map[string]any) {
	fe.t.Helper()
	body := must(fe.t, fe.do(tok, "POST", "/files", map[string]any{
		"filename": filename, "content_type": contentType, "size_bytes": len(data), "sha256": digest(data),
	}), http.StatusCreated)
	return body["file"].(map[string]any), body["upload"].(map[string]any)
}

// readyFile creates, uploads and confirms a file as tok; it returns its id.
func (fe *fileEnv) readyFile(tok, filename string, data []byte) string {
	fe.t.Helper()
	f, up := fe.create(tok, filename, "text/csv", data)
	fe.blobs.upload(fe.t, up, data, fe.clock.Now())
	id := f["id"].(string)
	if got := must(fe.t, fe.do(tok, "POST", "/files/"+id+"/confirm", nil), http.StatusOK); got["status"] != "ready" {
		fe.t.Fatalf("confirm = %v", got)
	}
	return id
}

// fileIn records a ready input file of org created by createdBy, through
// the store, with its blob in the API's fakeBlobs; it returns its id.
func (e *env) fileIn(org, createdBy string) string {
	e.t.Helper()
	ctx := context.Background()
	if _, _, err := e.db.EnsureOrg(ctx, org, "developer"); err != nil {
		e.t.Fatalf("EnsureOrg: %v", err)
	}
	data := []byte("Data;Valor\n01/03/2026;10,00\n")
	expires := time.Now().Add(time.Hour)
	f, err := e.db.CreateFile(ctx, org, store.File{Filename: "extrato.csv", ContentType: "text/csv",
		SizeBytes: int64(len(data)), Purpose: store.FileInput, CreatedBy: createdBy, ExpiresAt: &expires})
	if err != nil {
		e.t.Fatalf("CreateFile: %v", err)
	}
	e.api.blobs.(*fakeBlobs).put(f.BlobKey(), f.ContentType, data)
	if _, err := e.db.SettleFile(ctx, org, f.ID, store.FileSettlement{Status: store.FileReady, SHA256: digest(data), SizeBytes: int64(len(data))}); err != nil {
		e.t.Fatalf("SettleFile: %v", err)
	}
	return f.ID
}

// writer is a member who may create files (kadu.write) and run tasks.
func writer(org string) user {
	return user{org, "member-1", auth.RoleMember, []string{auth.ScopeWrite, auth.ScopeRun}}
}

func digest(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

func (q *testQueue) eventCodes() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	return slices.Clone(q.events)
}

var statement = []byte("Data;Descrição;Valor\n01/03/2026;PIX RECEBIDO ACME LTDA;1.500,00\n02/03/2026;TARIFA;-45,90\n")
