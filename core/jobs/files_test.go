package jobs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/kobana/kadu/core/agent"
	"github.com/kobana/kadu/core/store"
)

// memBlobs is an in-memory Blobs. core/blob's bucket and its signed URLs
// are tested in core/blob and core/app.
type memBlobs struct {
	mu      sync.Mutex
	objects map[string]memObject // guarded by mu
	deleted []string             // guarded by mu
}

type memObject struct {
	contentType string
	data        []byte
}

var _ Blobs = (*memBlobs)(nil)

func newMemBlobs() *memBlobs { return &memBlobs{objects: map[string]memObject{}} }

func (b *memBlobs) NewReader(_ context.Context, key string) (io.ReadCloser, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	o, ok := b.objects[key]
	if !ok {
		return nil, fmt.Errorf("blob %s: %w", key, fs.ErrNotExist)
	}
	return io.NopCloser(bytes.NewReader(o.data)), nil
}

func (b *memBlobs) SignedDownload(_ context.Context, key, filename string, expires time.Time) (string, error) {
	return fmt.Sprintf("https://blobs.test/get/%s?filename=%s&expires=%d", key, filename, expires.Unix()), nil
}

func (b *memBlobs) WriteAll(_ context.Context, key, contentType string, data []byte) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.objects[key] = memObject{contentType: contentType, data: bytes.Clone(data)}
	return nil
}

func (b *memBlobs) Delete(_ context.Context, key string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.objects, key)
	b.deleted = append(b.deleted, key)
	return nil
}

func (b *memBlobs) get(key string) (memObject, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	o, ok := b.objects[key]
	return o, ok
}

func (b *memBlobs) deletedKeys() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.deleted)
}

func sha256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// newFileQueue builds a queue with blobs on db; it is started when start
// is true, and stopped when the test ends.
func newFileQueue(t *testing.T, db *store.DB, blobs Blobs, start bool) *Queue {
	t.Helper()
	q, err := New(context.Background(), Options{
		Store: db, Runner: agent.NewBuiltinRunner(nil), Plans: testPlans, DefaultPlan: "developer", Blobs: blobs,
		PollInterval: 100 * time.Millisecond, CancelCheck: 50 * time.Millisecond,
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	if !start {
		return q
	}
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := q.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	return q
}

// uploadedFile records a ready input file of org holding data, as POST
// /files, the PUT and the confirm leave it.
func uploadedFile(t *testing.T, db *store.DB, blobs *memBlobs, org, name string, data []byte) store.File {
	t.Helper()
	ctx := context.Background()
	if _, _, err := db.EnsureOrg(ctx, org, "developer"); err != nil {
		t.Fatal(err)
	}
	expires := time.Now().Add(time.Hour)
	f, err := db.CreateFile(ctx, org, store.File{Filename: name, ContentType: "text/csv", SizeBytes: int64(len(data)),
		Purpose: store.FileInput, CreatedBy: "u1", ExpiresAt: &expires})
	if err != nil {
		t.Fatal(err)
	}
	if err := blobs.WriteAll(ctx, f.BlobKey(), f.ContentType, data); err != nil {
		t.Fatal(err)
	}
	f, err = db.SettleFile(ctx, org, f.ID, store.FileSettlement{Status: store.FileReady, SHA256: sha256Hex(data), SizeBytes: int64(len(data))})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// launchWithFiles creates a task with the playbook and an execution of it
// with the input files, and enqueues it, as the API does.
func launchWithFiles(t *testing.T, db *store.DB, q *Queue, org string, pb json.RawMessage, fileIDs ...string) store.Execution {
	t.Helper()
	ctx := context.Background()
	if _, _, err := db.EnsureOrg(ctx, org, "developer"); err != nil {
		t.Fatal(err)
	}
	task, err := db.CreateTask(ctx, org, store.Task{Name: "files", Playbook: pb, TimeoutSeconds: 60})
	if err != nil {
		t.Fatal(err)
	}
	var exe store.Execution
	err = db.InTx(ctx, func(tx *store.Tx) error {
		var err error
		exe, err = tx.CreateExecution(ctx, org, store.Execution{TaskID: task.ID, LaunchedBy: "u1", InputFileIDs: fileIDs})
		if err != nil {
			return err
		}
		return q.EnqueueExecution(ctx, tx, org, exe.ID)
	})
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

const (
	stepParseFile  = `{"id":"statement","type":"parse_statement","params":{"source":{"file_index":0}}}`
	stepWriteTxns  = `{"id":"out","type":"write_output","params":{"content":"transactions","format":"csv","filename":"transacoes.csv"}}`
	stepWriteTotal = `{"id":"json","type":"write_output","params":{"content":"summary","format":"json"}}`
)

// TestInputFileToOutputFile: an execution parses its input file (a CSV
// statement, file_index 0) with the built-in runner and writes output
// files, which then are ready files of purpose output of the execution,
// with their measured digest and size, readable from the blobs.
func TestInputFileToOutputFile(t *testing.T) {
	forEachDB(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		db, blobs := open(t), newMemBlobs()
		q := newFileQueue(t, db, blobs, true)
		ctx := context.Background()
		// A webhook subscribed to file.ready records a delivery per output file.
		hook, err := db.CreateWebhook(ctx, "org_a", store.Webhook{URL: "https://hooks.example.com/kadu",
			EventCodes: []string{store.EventFileReady}, Secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}, -1)
		if err != nil {
			t.Fatal(err)
		}
		in := uploadedFile(t, db, blobs, "org_a", "extrato.csv", []byte(statementCSV))
		exe := launchWithFiles(t, db, q, "org_a", playbook(stepParseFile, stepCategory, stepSummarize, stepWriteTxns, stepWriteTotal), in.ID)

		done := waitStatus(t, db, "org_a", exe.ID, store.StatusSucceeded)
		if done.Output == nil || len(done.Output.FileIDs) != 2 {
			t.Fatalf("output = %+v, want two files", done.Output)
		}
		deliveries, err := db.ListDeliveries(ctx, "org_a", store.DeliveryFilter{WebhookID: hook.ID, EventCode: store.EventFileReady}, store.ListParams{})
		if err != nil || len(deliveries.Items) != 2 {
			t.Errorf("file.ready deliveries = %d (%v), want one per output file", len(deliveries.Items), err)
		}
		page, err := db.ListFiles(ctx, "org_a", store.FileFilter{Purpose: store.FileOutput, ExecutionID: exe.ID}, store.ListParams{})
		if err != nil {
			t.Fatal(err)
		}
		listed := make([]string, 0, len(page.Items))
		for _, f := range page.Items {
			listed = append(listed, f.ID)
		}
		want := slices.Clone(done.Output.FileIDs)
		slices.Reverse(want) // newest first
		if !slices.Equal(listed, want) {
			t.Errorf("output files listed %v, want %v", listed, want)
		}
		out, err := db.GetFile(ctx, "org_a", done.Output.FileIDs[0])
		if err != nil {
			t.Fatal(err)
		}
		blob, ok := blobs.get(out.BlobKey())
		if !ok {
			t.Fatalf("no blob for output file %s", out.ID)
		}
		if out.Purpose != store.FileOutput || out.Status != store.FileReady || out.ExecutionID != exe.ID ||
			out.Filename != "transacoes.csv" || out.CreatedBy != "u1" || out.ExpiresAt != nil ||
			out.SizeBytes != int64(len(blob.data)) || out.SHA256 != sha256Hex(blob.data) || out.ContentType != blob.contentType {
			t.Errorf("output file = %+v; blob %d bytes %s", out, len(blob.data), blob.contentType)
		}
		// The CSV holds the statement's three transactions.
		for _, s := range []string{"ACME", "TARIFA", "ENEL"} {
			if !strings.Contains(string(blob.data), s) {
				t.Errorf("output CSV lacks %s:\n%s", s, blob.data)
			}
		}
		if got, _ := db.GetFile(ctx, "org_a", in.ID); got.Status != store.FileReady || got.Purpose != store.FileInput {
			t.Errorf("input file after the run = %+v", got)
		}
	})
}

// TestInputFileUnusable: an execution whose input file was deleted after
// the launch, or whose content changed since it was confirmed, fails and
// writes nothing.
func TestInputFileUnusable(t *testing.T) {
	forEachDB(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		db, blobs := open(t), newMemBlobs()
		q := newFileQueue(t, db, blobs, true)
		ctx := context.Background()
		pb := playbook(stepParseFile, stepWriteTxns)

		gone := uploadedFile(t, db, blobs, "org_a", "gone.csv", []byte(statementCSV))
		if err := db.SoftDeleteFile(ctx, "org_a", gone.ID); err != nil {
			t.Fatal(err)
		}
		exe := launchWithFiles(t, db, q, "org_a", pb, gone.ID)
		failed := waitStatus(t, db, "org_a", exe.ID, store.StatusFailed)
		if failed.Failure == nil || failed.Failure.Code != agent.FailureInvalidInput || !strings.Contains(failed.Failure.Message, gone.ID) {
			t.Errorf("deleted input file: failure %+v, want invalid_input naming %s", failed.Failure, gone.ID)
		}

		swapped := uploadedFile(t, db, blobs, "org_a", "swapped.csv", []byte(statementCSV))
		tampered := strings.Replace(statementCSV, "1.500,00", "9.500,00", 1) // same size
		if err := blobs.WriteAll(ctx, swapped.BlobKey(), "text/csv", []byte(tampered)); err != nil {
			t.Fatal(err)
		}
		exe = launchWithFiles(t, db, q, "org_a", pb, swapped.ID)
		if failed := waitStatus(t, db, "org_a", exe.ID, store.StatusFailed); failed.Output != nil && len(failed.Output.FileIDs) > 0 {
			t.Errorf("a run on a changed file wrote %v", failed.Output.FileIDs)
		}
		page, err := db.ListFiles(ctx, "org_a", store.FileFilter{Purpose: store.FileOutput}, store.ListParams{})
		if err != nil || len(page.Items) != 0 {
			t.Errorf("output files = %d, %v; want none", len(page.Items), err)
		}
	})
}

// TestInputFileDownloadURL: the HTTP runner's view of an input file is a
// download URL that expires in five minutes.
func TestInputFileDownloadURL(t *testing.T) {
	db := openStore(t, store.Options{Driver: store.DriverSQLite, DSN: t.TempDir() + "/kadu.db"})
	blobs := newMemBlobs()
	q := newFileQueue(t, db, blobs, false)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	q.opts.Now = func() time.Time { return now }
	f := uploadedFile(t, db, blobs, "org_a", "extrato.csv", []byte(statementCSV))
	files, problem, err := q.inputFiles(context.Background(), store.Execution{OrgID: "org_a", InputFileIDs: []string{f.ID}})
	if err != nil || problem != "" || len(files) != 1 {
		t.Fatalf("inputFiles = %v, %q, %v", files, problem, err)
	}
	u, err := files[0].DownloadURL(context.Background())
	want := fmt.Sprintf("https://blobs.test/get/%s?filename=extrato.csv&expires=%d", f.BlobKey(), now.Add(5*time.Minute).Unix())
	if err != nil || u != want {
		t.Errorf("DownloadURL = %q, %v; want %q", u, err, want)
	}
	if files[0].Filename != "extrato.csv" || files[0].Size != int64(len(statementCSV)) || files[0].ContentType != "text/csv" {
		t.Errorf("input file = %+v", files[0])
	}
}

// TestMaintenanceFiles: unconfirmed uploads expire and lose their blob;
// deleted and expired files are purged after the retention, blob first,
// and live files are left alone.
func TestMaintenanceFiles(t *testing.T) {
	forEachDB(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		db, blobs := open(t), newMemBlobs()
		q := newFileQueue(t, db, blobs, false)
		ctx := context.Background()
		if _, _, err := db.EnsureOrg(ctx, "org_a", "developer"); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		expires := start.Add(time.Hour)
		pending, err := db.CreateFile(ctx, "org_a", store.File{Filename: "p.csv", ContentType: "text/csv", SizeBytes: 3,
			Purpose: store.FileInput, CreatedBy: "u1", ExpiresAt: &expires})
		if err != nil {
			t.Fatal(err)
		}
		if err := blobs.WriteAll(ctx, pending.BlobKey(), "text/csv", []byte("abc")); err != nil {
			t.Fatal(err)
		}
		deleted := uploadedFile(t, db, blobs, "org_a", "d.csv", []byte("def"))
		if err := db.SoftDeleteFile(ctx, "org_a", deleted.ID); err != nil {
			t.Fatal(err)
		}
		live := uploadedFile(t, db, blobs, "org_a", "l.csv", []byte("ghi"))

		work := func(at time.Time) {
			t.Helper()
			later := *q
			later.opts.Now = func() time.Time { return at }
			if err := (&maintenanceWorker{q: &later}).Work(ctx, &river.Job[maintenanceArgs]{}); err != nil {
				t.Fatal(err)
			}
		}
		status := func(f store.File) string {
			got, err := db.GetFile(ctx, "org_a", f.ID)
			if err != nil {
				return "gone"
			}
			return string(got.Status)
		}

		// Now: nothing is due.
		work(start)
		if len(blobs.deletedKeys()) != 0 || status(pending) != "pending_upload" {
			t.Fatalf("a run with nothing due deleted %v; pending is %s", blobs.deletedKeys(), status(pending))
		}
		// Two hours on (retention is 1 h): the upload expires and its blob
		// goes; the file deleted two hours ago is purged, blob and row.
		work(start.Add(2 * time.Hour))
		if status(pending) != "expired" {
			t.Errorf("unconfirmed upload is %s, want expired", status(pending))
		}
		if _, ok := blobs.get(pending.BlobKey()); ok {
			t.Errorf("the expired upload's blob is kept")
		}
		if _, ok := blobs.get(deleted.BlobKey()); ok {
			t.Errorf("the purged file's blob is kept")
		}
		if left, _ := db.PurgeableFiles(ctx, start.Add(time.Hour), 10); len(left) != 0 {
			t.Errorf("rows left to purge: %+v", left)
		}
		// Four hours on: the expired upload's row goes too.
		work(start.Add(4 * time.Hour))
		if left, _ := db.PurgeableFiles(ctx, start.Add(10*time.Hour), 10); len(left) != 0 {
			t.Errorf("rows left to purge: %+v", left)
		}
		if status(live) != "ready" {
			t.Errorf("the live file is %s", status(live))
		}
		if _, ok := blobs.get(live.BlobKey()); !ok {
			t.Errorf("the live file's blob was deleted")
		}
		del := blobs.deletedKeys()
		slices.Sort(del)
		want := []string{pending.BlobKey(), pending.BlobKey(), deleted.BlobKey()}
		slices.Sort(want)
		if !slices.Equal(del, want) {
			t.Errorf("deleted blobs %v, want %v (the expired upload's twice: at expiry and at purge)", del, want)
		}
	})
}
