package store_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/kobana/kadu/core/blob"
	"github.com/kobana/kadu/core/store"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{name: "postgres disk_full", err: &pgconn.PgError{Code: "53100", Message: "could not extend file"}, want: store.KindDiskFull},
		{name: "postgres disk_full wrapped", err: fmt.Errorf("creating task: %w", &pgconn.PgError{Code: "53100"}), want: store.KindDiskFull},
		{name: "postgres out_of_memory", err: &pgconn.PgError{Code: "53200"}, want: store.KindResources},
		{name: "postgres too_many_connections", err: &pgconn.PgError{Code: "53300"}, want: store.KindResources},
		{name: "postgres connection_failure", err: &pgconn.PgError{Code: "08006"}, want: store.KindUnreachable},
		{name: "postgres io_error", err: &pgconn.PgError{Code: "58030"}, want: store.KindIO},
		{name: "postgres connect error", err: &pgconn.ConnectError{}, want: store.KindUnreachable},
		{name: "postgres unique violation", err: &pgconn.PgError{Code: "23505"}, want: ""},
		{name: "ENOSPC from a blob write", err: &fs.PathError{Op: "write", Path: "/blobs/x", Err: syscall.ENOSPC}, want: store.KindDiskFull},
		{name: "EDQUOT", err: fmt.Errorf("writing: %w", syscall.EDQUOT), want: store.KindDiskFull},
		{name: "EIO", err: syscall.EIO, want: store.KindIO},
		{name: "not found", err: store.ErrNotFound, want: ""},
		{name: "cancelled", err: fmt.Errorf("x: %w", errors.Join(context.Canceled, syscall.ENOSPC)), want: ""},
		{name: "nil", err: nil, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := store.Classify(tt.err); got != tt.want {
				t.Fatalf("Classify(%v) = %q, want %q", tt.err, got, tt.want)
			}
			if got := store.Unavailable(tt.err); got != (tt.want != "") {
				t.Fatalf("Unavailable(%v) = %v", tt.err, got)
			}
		})
	}
}

func TestClassifyText(t *testing.T) {
	tests := []struct{ text, want string }{
		{"database or disk is full (13)", store.KindDiskFull},
		{`ERROR: could not extend file "base/16384/16385": No space left on device (SQLSTATE 53100)`, store.KindDiskFull},
		{"write /blobs/x: no space left on device", store.KindDiskFull},
		{"disk I/O error (778)", store.KindIO},
		{"failed to connect to `user=kadu database=kadu`: dial error", store.KindUnreachable},
		{"UNIQUE constraint failed: tasks.id", ""},
	}
	for _, tt := range tests {
		if got := store.ClassifyText(tt.text); got != tt.want {
			t.Errorf("ClassifyText(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

// TestSQLiteFull fills a real SQLite file (max_page_count pinned at its
// size: the SQLITE_FULL a full disk gives) and checks that the store's
// error says unavailable, that Ready reports it, and that Ready clears
// once there is room again.
func TestSQLiteFull(t *testing.T) {
	ctx := context.Background()
	db := openSQLite(t)
	if err := db.Ready(ctx); err != nil {
		t.Fatalf("Ready on a fresh store: %v", err)
	}
	var pages int
	if err := db.Writer().QueryRowContext(ctx, `PRAGMA page_count`).Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Writer().ExecContext(ctx, fmt.Sprintf(`PRAGMA max_page_count = %d`, pages)); err != nil {
		t.Fatal(err)
	}
	var err error
	for i := 0; i < 1000 && err == nil; i++ {
		_, err = db.CreateTask(ctx, "org_full", store.Task{Name: fmt.Sprintf("t%d", i), Instructions: strings.Repeat("x", 4000)})
	}
	if store.Classify(err) != store.KindDiskFull {
		t.Fatalf("writing into a full file: %v (kind %q); want disk_full", err, store.Classify(err))
	}
	if err := db.Ready(ctx); !errors.Is(err, store.ErrUnavailable) || !strings.Contains(err.Error(), "disk_full") {
		t.Fatalf("Ready while full = %v; want ErrUnavailable naming disk_full", err)
	}
	if _, err := db.Writer().ExecContext(ctx, `PRAGMA max_page_count = 1073741823`); err != nil {
		t.Fatal(err)
	}
	waitReady(t, db)
	if _, err := db.CreateTask(ctx, "org_full", store.Task{Name: "after", Instructions: "x"}); err != nil {
		t.Fatalf("writing after space came back: %v", err)
	}
}

// waitReady polls Ready (it probes at most once a second).
func waitReady(t *testing.T, db *store.DB) {
	t.Helper()
	var err error
	for range 100 {
		if err = db.Ready(context.Background()); err == nil {
			return
		}
		sleep()
	}
	t.Fatalf("Ready still failing after space came back: %v", err)
}

// TestThrottleHandler lets through one line per message and kind of
// storage failure, counts the rest, and leaves other lines alone.
func TestThrottleHandler(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(store.ThrottleHandler(slog.NewJSONHandler(&buf, nil), 0))
	full := fmt.Errorf("creating task: %w", &pgconn.PgError{Code: "53100"})
	for range 50 {
		log.Error("api: storage unavailable", slog.Any("error", full))
		// River logs its errors as text.
		log.Error("producer: Error fetching jobs", slog.String("err", "database or disk is full (13)"))
		log.Error("api: internal error", slog.Any("error", errors.New("boom")))
		log.Info("api: storage unavailable", slog.Any("error", full)) // below warn: untouched
	}
	out := buf.String()
	for msg, want := range map[string]int{
		`"msg":"api: storage unavailable"`:      1 + 50,
		`"msg":"producer: Error fetching jobs"`: 1,
		`"msg":"api: internal error"`:           50,
	} {
		if got := strings.Count(out, msg); got != want {
			t.Errorf("%s: %d lines, want %d", msg, got, want)
		}
	}
}

// TestSQLiteFileModes: the database and its WAL files are the owner's
// only, in a data directory that already existed, and a database file
// left readable by an older version is tightened at start.
func TestSQLiteFileModes(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "kadu.db")
	db, err := store.Open(context.Background(), store.Options{Driver: store.DriverSQLite, DSN: path})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateTask(context.Background(), "org_modes", store.Task{Name: "t"}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", filepath.Base(f), fi.Mode().Perm())
		}
	}
	db.Close()

	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	db, err = store.Open(context.Background(), store.Options{Driver: store.DriverSQLite, DSN: path, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("a 0644 database file is still %v after Open", fi.Mode().Perm())
	}
	if !strings.Contains(logs.String(), "restricted to its owner") {
		t.Errorf("no warning logged when tightening the file: %q", logs.String())
	}
}

func sleep() { time.Sleep(100 * time.Millisecond) }

// TestBlobDiskFull writes a local blob into a real full file system (a
// 1 MiB tmpfs; mounting needs root, as in CI) and checks that the error
// core/blob returns classifies as disk_full, so the API answers 503.
func TestBlobDiskFull(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root (CI runs as root)")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", dir).Run() })
	ctx := context.Background()
	b, err := blob.Open(ctx, blob.Options{URL: "file://" + dir, PublicURL: "http://127.0.0.1:1/blobs",
		SigningKey: []byte("0123456789abcdef0123456789abcdef")})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	err = b.WriteAll(ctx, "org_full/file_1", "text/csv", bytes.Repeat([]byte("x"), 2<<20))
	if store.Classify(err) != store.KindDiskFull {
		t.Fatalf("writing 2 MiB into a 1 MiB file system: %v (kind %q); want disk_full", err, store.Classify(err))
	}
}
