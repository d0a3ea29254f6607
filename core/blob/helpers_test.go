package blob

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/kobana/kadu/core/internal/fakeclock"
)

// testSigningKey is 32 bytes, the shortest Open accepts.
var testSigningKey = []byte("0123456789abcdef0123456789abcdef")

// t0 is the fixtures' starting time.
var t0 = time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)

// fixture is a local bucket in a temporary directory, served by its
// Handler on a loopback httptest server, as the app mounts it.
type fixture struct {
	bucket *Bucket
	srv    *httptest.Server
	clock  *fakeclock.Clock
	dir    string
	logs   *syncBuffer // everything the bucket logged, at debug level
}

func newFixture(tb testing.TB) *fixture {
	tb.Helper()
	return newFixtureIn(tb, filepath.Join(tb.TempDir(), "blobs"))
}

// newFixtureIn is newFixture with the bucket's directory at dir.
func newFixtureIn(tb testing.TB, dir string) *fixture {
	tb.Helper()
	f := &fixture{clock: fakeclock.New(t0), dir: dir, logs: &syncBuffer{}}
	// Unstarted: the listener (127.0.0.1:0) exists, so PublicURL can name
	// its address before the handler is built.
	f.srv = httptest.NewUnstartedServer(nil)
	b, err := Open(tb.Context(), Options{
		URL:        "file://" + f.dir,
		PublicURL:  "http://" + f.srv.Listener.Addr().String() + "/blobs",
		SigningKey: testSigningKey,
		Now:        f.clock.Now,
		Logger:     slog.New(slog.NewTextHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	// The whole server, not just /blobs/, so requests outside PublicURL's
	// path reach the handler too.
	f.srv.Config.Handler = b.Handler()
	f.srv.Start()
	tb.Cleanup(func() {
		f.srv.Close()
		if err := b.Close(); err != nil {
			tb.Errorf("Close: %v", err)
		}
	})
	f.bucket = b
	return f
}

// signUpload signs an upload valid for 15 minutes, as files_create does.
func (f *fixture) signUpload(tb testing.TB, key, ct string, size int64) (string, map[string]string) {
	tb.Helper()
	u, h, err := f.bucket.SignedUpload(tb.Context(), key, ct, size, f.clock.Now().Add(15*time.Minute))
	if err != nil {
		tb.Fatalf("SignedUpload: %v", err)
	}
	return u, h
}

// signDownload signs a download valid for 5 minutes.
func (f *fixture) signDownload(tb testing.TB, key, filename string) string {
	tb.Helper()
	u, err := f.bucket.SignedDownload(tb.Context(), key, filename, f.clock.Now().Add(5*time.Minute))
	if err != nil {
		tb.Fatalf("SignedDownload: %v", err)
	}
	return u
}

// reply is what a client got back.
type reply struct {
	status int
	header http.Header
	body   []byte
}

// errorCode returns the code of a refusal body, failing on any other shape.
func (r reply) errorCode(tb testing.TB) string {
	tb.Helper()
	var v struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil || v.Error.Code == "" || v.Error.Message == "" {
		tb.Fatalf("body %q is not {\"error\":{\"code\",\"message\"}}: %v", r.body, err)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		tb.Errorf("refusal Content-Type = %q, want application/json", ct)
	}
	return v.Error.Code
}

// do sends req to the fixture's server and reads the whole reply.
func (f *fixture) do(tb testing.TB, req *http.Request) reply {
	tb.Helper()
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		tb.Fatalf("%s: %v", req.Method, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatalf("reading reply: %v", err)
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: body}
}

// put uploads body to u with Content-Type ct and an exact Content-Length.
func (f *fixture) put(tb testing.TB, u, ct string, body []byte) reply {
	tb.Helper()
	req, err := http.NewRequestWithContext(tb.Context(), http.MethodPut, u, bytes.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Content-Type", ct)
	return f.do(tb, req)
}

// get fetches u.
func (f *fixture) get(tb testing.TB, u string) reply {
	tb.Helper()
	req, err := http.NewRequestWithContext(tb.Context(), http.MethodGet, u, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return f.do(tb, req)
}

// stored returns what the bucket holds under key, or nil if nothing.
func (f *fixture) stored(tb testing.TB, key string) []byte {
	tb.Helper()
	r, err := f.bucket.NewReader(tb.Context(), key)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		tb.Fatalf("NewReader(%q): %v", key, err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		tb.Fatalf("reading %q: %v", key, err)
	}
	return b
}

// files lists every regular file under the bucket's directory, so a test
// can see that a refused upload left no temporary file behind.
func (f *fixture) files(tb testing.TB) []string {
	tb.Helper()
	var out []string
	err := filepath.WalkDir(f.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(f.dir, p)
			out = append(out, rel)
		}
		return nil
	})
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		tb.Fatalf("walking %s: %v", f.dir, err)
	}
	return out
}

// syncBuffer is a bytes.Buffer the handler's goroutines may log into.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// payload is n deterministic, not all equal bytes.
func payload(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i/251)
	}
	return b
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// httptestRecorder serves one request through h in memory.
func httptestRecorder(h http.Handler, method, target string) reply {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, target, nil))
	return reply{status: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}
}
