package storetest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/kobana/kadu/core/store"
)

// fileTests are the tests of files (docs/reference/rest.md#wire-forms, docs/files-webhooks-limits.md#files-presigned-urls-never-bytes-in-a-tool).
var fileTests = []suiteTest{
	{"FileCreateGet", testFileCreateGet},
	{"FileSettle", testFileSettle},
	{"FileSettleConcurrent", testFileSettleConcurrent},
	{"FileListFilters", testFileListFilters},
	{"FilePagination", testFilePagination},
	{"FilesByID", testFilesByID},
	{"FileSoftDelete", testFileSoftDelete},
	{"FileExpireUploads", testFileExpireUploads},
	{"FilePurge", testFilePurge},
	{"FileOrgIsolation", testFileOrgIsolation},
}

// newFile records a pending input file of org that expires in an hour.
func newFile(t *testing.T, db *store.DB, org, name string) store.File {
	t.Helper()
	return createFile(t, db, org, store.File{Filename: name, ContentType: "text/csv", SizeBytes: 12,
		Purpose: store.FileInput, CreatedBy: "usr_1"}, time.Now().Add(time.Hour))
}

func createFile(t *testing.T, db *store.DB, org string, f store.File, expires time.Time) store.File {
	t.Helper()
	f.ExpiresAt = &expires
	created, err := db.CreateFile(t.Context(), org, f)
	if err != nil {
		t.Fatalf("CreateFile: %v", err)
	}
	return created
}

// readyFile records an input file of org and settles it ready.
func readyFile(t *testing.T, db *store.DB, org, name string) store.File {
	t.Helper()
	f := newFile(t, db, org, name)
	f, err := db.SettleFile(t.Context(), org, f.ID, store.FileSettlement{Status: store.FileReady, SHA256: digestOf(name), SizeBytes: 12})
	if err != nil {
		t.Fatalf("SettleFile: %v", err)
	}
	return f
}

func digestOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func fileID(f store.File) string { return f.ID }

func testFileCreateGet(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org := newOrg(t, db)
	expires := time.Now().Add(time.Hour)
	declared := digestOf("declared")
	in := store.File{
		ID: "file_ignored", Status: store.FileReady, RejectedReason: "ignored", // the store sets these
		Filename: "extrato março.csv", ContentType: "text/csv; charset=utf-8", SizeBytes: 1234,
		SHA256: declared, Purpose: store.FileInput, CreatedBy: "usr_1",
	}
	created := createFile(t, db, org, in, expires)
	if !store.ValidID(store.PrefixFile, created.ID) || created.OrgID != org || created.Status != store.FilePendingUpload ||
		created.RejectedReason != "" || created.CreatedAt.IsZero() || !created.CreatedAt.Equal(created.UpdatedAt) {
		t.Fatalf("CreateFile = %+v", created)
	}
	if created.ExpiresAt == nil || !created.ExpiresAt.Equal(expires.UTC().Truncate(time.Microsecond)) {
		t.Errorf("ExpiresAt = %v, want %v", created.ExpiresAt, expires)
	}
	if created.BlobKey() != org+"/"+created.ID {
		t.Errorf("BlobKey = %q", created.BlobKey())
	}
	got, err := db.GetFile(ctx, org, created.ID)
	wantOK(t, "GetFile", err)
	sameJSON(t, "GetFile", got, created)

	// An output file names its execution; no sha256 declared reads back as "".
	exe := execIn(t, db, org, store.StatusRunning)
	out := createFile(t, db, org, store.File{Filename: "out.csv", ContentType: "text/csv", SizeBytes: 3,
		Purpose: store.FileOutput, ExecutionID: exe.ID, CreatedBy: "usr_1"}, expires)
	got, err = db.GetFile(ctx, org, out.ID)
	wantOK(t, "GetFile output", err)
	if got.ExecutionID != exe.ID || got.Purpose != store.FileOutput || got.SHA256 != "" {
		t.Errorf("output file = %+v", got)
	}

	_, err = db.CreateFile(ctx, org, store.File{Filename: "x", Purpose: "scratch", ExpiresAt: &expires})
	if err == nil {
		t.Errorf("CreateFile with purpose scratch: no error")
	}
	_, err = db.CreateFile(ctx, org, store.File{Filename: "x", Purpose: store.FileInput})
	if err == nil {
		t.Errorf("CreateFile without ExpiresAt: no error")
	}
	_, err = db.GetFile(ctx, org, store.NewID(store.PrefixFile))
	wantErr(t, "GetFile of a missing file", err, store.ErrNotFound)
}

// testFileSettle: pending_upload becomes ready (measured digest and size,
// no expiry) or rejected (declaration kept, reason); a settled file cannot
// be settled again.
func testFileSettle(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org := newOrg(t, db)
	declared := digestOf("declared")
	pending := createFile(t, db, org, store.File{Filename: "a.csv", ContentType: "text/csv", SizeBytes: 10,
		SHA256: declared, Purpose: store.FileInput, CreatedBy: "usr_1"}, time.Now().Add(time.Hour))

	measured := digestOf("measured")
	ready, err := db.SettleFile(ctx, org, pending.ID, store.FileSettlement{Status: store.FileReady, SHA256: measured, SizeBytes: 10})
	wantOK(t, "SettleFile ready", err)
	if ready.Status != store.FileReady || ready.SHA256 != measured || ready.ExpiresAt != nil || ready.UpdatedAt.Before(pending.UpdatedAt) {
		t.Errorf("ready = %+v", ready)
	}
	got, err := db.GetFile(ctx, org, pending.ID)
	wantOK(t, "GetFile", err)
	sameJSON(t, "GetFile after ready", got, ready)

	for _, s := range []store.FileSettlement{
		{Status: store.FileReady, SHA256: measured, SizeBytes: 10},
		{Status: store.FileRejected, RejectedReason: "too late"},
	} {
		_, err := db.SettleFile(ctx, org, pending.ID, s)
		wantErr(t, "settling a ready file as "+string(s.Status), err, store.ErrConflict)
	}

	other := createFile(t, db, org, store.File{Filename: "b.csv", ContentType: "text/csv", SizeBytes: 10,
		SHA256: declared, Purpose: store.FileInput, CreatedBy: "usr_1"}, time.Now().Add(time.Hour))
	rejected, err := db.SettleFile(ctx, org, other.ID, store.FileSettlement{Status: store.FileRejected, RejectedReason: "size_bytes differs"})
	wantOK(t, "SettleFile rejected", err)
	if rejected.Status != store.FileRejected || rejected.RejectedReason != "size_bytes differs" ||
		rejected.SHA256 != declared || rejected.SizeBytes != 10 || rejected.ExpiresAt != nil {
		t.Errorf("rejected = %+v", rejected)
	}
	_, err = db.SettleFile(ctx, org, other.ID, store.FileSettlement{Status: store.FileReady, SHA256: measured, SizeBytes: 10})
	wantErr(t, "settling a rejected file", err, store.ErrConflict)

	// Malformed settlements change nothing.
	third := newFile(t, db, org, "c.csv")
	for _, s := range []store.FileSettlement{
		{Status: store.FileReady, SHA256: "abc", SizeBytes: 10},
		{Status: store.FileRejected},
		{Status: store.FileExpired},
	} {
		if _, err := db.SettleFile(ctx, org, third.ID, s); err == nil {
			t.Errorf("SettleFile(%+v): no error", s)
		}
	}
	got, err = db.GetFile(ctx, org, third.ID)
	wantOK(t, "GetFile", err)
	if got.Status != store.FilePendingUpload {
		t.Errorf("a refused settlement changed the status to %s", got.Status)
	}
	_, err = db.SettleFile(ctx, org, store.NewID(store.PrefixFile), store.FileSettlement{Status: store.FileRejected, RejectedReason: "x"})
	wantErr(t, "settling a missing file", err, store.ErrNotFound)
}

// testFileSettleConcurrent: of concurrent confirmations exactly one wins.
func testFileSettleConcurrent(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org := newOrg(t, db)
	f := newFile(t, db, org, "contended.csv")
	const n = 8
	errs := make([]error, n)
	concurrently(n, func(i int) {
		s := store.FileSettlement{Status: store.FileReady, SHA256: digestOf(fmt.Sprint(i)), SizeBytes: 12}
		if i%2 == 1 {
			s = store.FileSettlement{Status: store.FileRejected, RejectedReason: fmt.Sprint("reason ", i)}
		}
		_, errs[i] = db.SettleFile(ctx, org, f.ID, s)
	})
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Errorf("settlements %d and %d both won", winner, i)
		case err == nil:
			winner = i
		default:
			wantErr(t, "losing settlement", err, store.ErrConflict)
		}
	}
	if winner < 0 {
		t.Fatalf("no settlement won: %v", errs)
	}
	got, err := db.GetFile(ctx, org, f.ID)
	wantOK(t, "GetFile", err)
	if winner%2 == 0 && (got.Status != store.FileReady || got.SHA256 != digestOf(fmt.Sprint(winner))) ||
		winner%2 == 1 && (got.Status != store.FileRejected || got.RejectedReason != fmt.Sprint("reason ", winner)) {
		t.Errorf("stored %+v, but settlement %d won", got, winner)
	}
}

func testFileListFilters(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org := newOrg(t, db)
	exe := execIn(t, db, org, store.StatusRunning)
	pending := newFile(t, db, org, "pending.csv")
	ready := readyFile(t, db, org, "ready.csv")
	out := createFile(t, db, org, store.File{Filename: "out.csv", ContentType: "text/csv", SizeBytes: 3,
		Purpose: store.FileOutput, ExecutionID: exe.ID, CreatedBy: "usr_1"}, time.Now().Add(time.Hour))
	out, err := db.SettleFile(ctx, org, out.ID, store.FileSettlement{Status: store.FileReady, SHA256: digestOf("out"), SizeBytes: 3})
	wantOK(t, "SettleFile", err)
	deleted := readyFile(t, db, org, "deleted.csv")
	wantOK(t, "SoftDeleteFile", db.SoftDeleteFile(ctx, org, deleted.ID))

	tests := []struct {
		name string
		f    store.FileFilter
		want []store.File
	}{
		{"all", store.FileFilter{}, []store.File{out, ready, pending}},
		{"inputs", store.FileFilter{Purpose: store.FileInput}, []store.File{ready, pending}},
		{"outputs", store.FileFilter{Purpose: store.FileOutput}, []store.File{out}},
		{"of the execution", store.FileFilter{ExecutionID: exe.ID}, []store.File{out}},
		{"ready", store.FileFilter{Status: store.FileReady}, []store.File{out, ready}},
		{"ready inputs", store.FileFilter{Purpose: store.FileInput, Status: store.FileReady}, []store.File{ready}},
		{"pending", store.FileFilter{Status: store.FilePendingUpload}, []store.File{pending}},
		{"expired", store.FileFilter{Status: store.FileExpired}, nil},
		{"another execution", store.FileFilter{ExecutionID: store.NewID(store.PrefixExecution)}, nil},
	}
	for _, tt := range tests {
		page, err := db.ListFiles(ctx, org, tt.f, store.ListParams{})
		wantOK(t, "ListFiles "+tt.name, err)
		if got, want := ids(page.Items, fileID), ids(tt.want, fileID); !slices.Equal(got, want) {
			t.Errorf("ListFiles(%s) = %q, want %q", tt.name, got, want)
		}
		if page.More {
			t.Errorf("ListFiles(%s): More on a short list", tt.name)
		}
	}
	page, err := db.ListFiles(ctx, org, store.FileFilter{}, store.ListParams{})
	wantOK(t, "ListFiles", err)
	sameJSON(t, "listed ready file", page.Items[1], ready)
}

// testFilePagination pages through files while others are created: every
// file that existed before the first page appears exactly once, in order.
func testFilePagination(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org := newOrg(t, db)
	var want []string
	for i := range 12 {
		want = append(want, newFile(t, db, org, fmt.Sprintf("f%02d.csv", i)).ID)
	}
	slices.Reverse(want)
	var got []string
	p := store.ListParams{Limit: 5}
	for pages := 0; ; pages++ {
		if pages > 5 {
			t.Fatalf("pagination does not end")
		}
		page, err := db.ListFiles(ctx, org, store.FileFilter{}, p)
		wantOK(t, "ListFiles", err)
		got = append(got, ids(page.Items, fileID)...)
		newFile(t, db, org, "inserted while paging")
		if !page.More {
			break
		}
		p.Before = page.Items[len(page.Items)-1].ID
	}
	if !slices.Equal(got, want) {
		t.Errorf("pages = %q\nwant %q", got, want)
	}
}

func testFilesByID(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org, other := newOrg(t, db), newOrg(t, db)
	a, b := readyFile(t, db, org, "a.csv"), newFile(t, db, org, "b.csv")
	foreign := readyFile(t, db, other, "foreign.csv")
	gone := readyFile(t, db, org, "gone.csv")
	wantOK(t, "SoftDeleteFile", db.SoftDeleteFile(ctx, org, gone.ID))

	got, err := db.FilesByID(ctx, org, []string{b.ID, foreign.ID, "file_bad", gone.ID, a.ID})
	wantOK(t, "FilesByID", err)
	if g, w := ids(got, fileID), []string{b.ID, a.ID}; !slices.Equal(g, w) {
		t.Errorf("FilesByID = %q, want %q (in the order asked, without others' and deleted files)", g, w)
	}
	sameJSON(t, "FilesByID item", got[1], a)
	got, err = db.FilesByID(ctx, org, nil)
	if err != nil || got == nil || len(got) != 0 {
		t.Errorf("FilesByID(nil) = %v, %v; want [], nil", got, err)
	}
	if _, err := db.FilesByID(ctx, org, make([]string, 101)); err == nil {
		t.Errorf("FilesByID with 101 ids: no error")
	}
}

func testFileSoftDelete(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org := newOrg(t, db)
	doomed, kept := readyFile(t, db, org, "doomed.csv"), readyFile(t, db, org, "kept.csv")
	pending := newFile(t, db, org, "pending.csv")
	wantOK(t, "SoftDeleteFile", db.SoftDeleteFile(ctx, org, doomed.ID))
	wantOK(t, "SoftDeleteFile pending", db.SoftDeleteFile(ctx, org, pending.ID))

	_, err := db.GetFile(ctx, org, doomed.ID)
	wantErr(t, "GetFile", err, store.ErrNotFound)
	wantErr(t, "SoftDeleteFile again", db.SoftDeleteFile(ctx, org, doomed.ID), store.ErrNotFound)
	_, err = db.SettleFile(ctx, org, pending.ID, store.FileSettlement{Status: store.FileReady, SHA256: digestOf("x"), SizeBytes: 12})
	wantErr(t, "SettleFile of a deleted upload", err, store.ErrNotFound)
	page, err := db.ListFiles(ctx, org, store.FileFilter{}, store.ListParams{})
	wantOK(t, "ListFiles", err)
	if got := ids(page.Items, fileID); !slices.Equal(got, []string{kept.ID}) {
		t.Errorf("ListFiles = %q, want only %s", got, kept.ID)
	}
	// A deleted upload does not expire: it is no longer anybody's.
	expired, err := db.ExpireUploads(ctx, time.Now().Add(2*time.Hour))
	wantOK(t, "ExpireUploads", err)
	if len(expired) != 0 {
		t.Errorf("ExpireUploads expired deleted files: %q", ids(expired, fileID))
	}
}

func testFileExpireUploads(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org := newOrg(t, db)
	now := time.Now()
	due := createFile(t, db, org, store.File{Filename: "due.csv", ContentType: "text/csv", SizeBytes: 1,
		Purpose: store.FileInput, CreatedBy: "usr_1"}, now.Add(-time.Minute))
	atNow := createFile(t, db, org, store.File{Filename: "now.csv", ContentType: "text/csv", SizeBytes: 1,
		Purpose: store.FileInput, CreatedBy: "usr_1"}, now)
	later := newFile(t, db, org, "later.csv")
	ready := readyFile(t, db, org, "ready.csv")

	var results [4][]store.File
	concurrently(len(results), func(i int) {
		var err error
		results[i], err = db.ExpireUploads(ctx, now)
		if err != nil {
			t.Errorf("ExpireUploads: %v", err)
		}
	})
	var got []string
	for _, r := range results {
		got = append(got, ids(r, fileID)...)
		for _, f := range r {
			if f.Status != store.FileExpired || f.OrgID != org {
				t.Errorf("returned %+v", f)
			}
		}
	}
	slices.Sort(got)
	want := []string{due.ID, atNow.ID}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("expired %q, want each of %q exactly once", got, want)
	}
	for f, status := range map[string]store.FileStatus{due.ID: store.FileExpired, atNow.ID: store.FileExpired,
		later.ID: store.FilePendingUpload, ready.ID: store.FileReady} {
		stored, err := db.GetFile(ctx, org, f)
		wantOK(t, "GetFile", err)
		if stored.Status != status {
			t.Errorf("file %s is %s, want %s", stored.Filename, stored.Status, status)
		}
	}
	stored, err := db.GetFile(ctx, org, due.ID)
	wantOK(t, "GetFile", err)
	if stored.ExpiresAt == nil || !stored.ExpiresAt.Equal(*due.ExpiresAt) {
		t.Errorf("an expired file shows when it expired: %v, want %v", stored.ExpiresAt, due.ExpiresAt)
	}
	_, err = db.SettleFile(ctx, org, due.ID, store.FileSettlement{Status: store.FileReady, SHA256: digestOf("x"), SizeBytes: 1})
	wantErr(t, "confirming an expired upload", err, store.ErrConflict)
}

// testFilePurge: deleted, expired and rejected files are listed for the
// purge once older than the retention; only the listed rows whose blobs
// the caller deleted go, and nothing else.
func testFilePurge(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org, other := newOrg(t, db), newOrg(t, db)
	deleted := readyFile(t, db, org, "deleted.csv")
	wantOK(t, "SoftDeleteFile", db.SoftDeleteFile(ctx, org, deleted.ID))
	expired := createFile(t, db, other, store.File{Filename: "expired.csv", ContentType: "text/csv", SizeBytes: 1,
		Purpose: store.FileInput, CreatedBy: "usr_1"}, time.Now().Add(-time.Minute))
	_, err := db.ExpireUploads(ctx, time.Now())
	wantOK(t, "ExpireUploads", err)
	rejected := newFile(t, db, org, "rejected.csv")
	_, err = db.SettleFile(ctx, org, rejected.ID, store.FileSettlement{Status: store.FileRejected, RejectedReason: "size"})
	wantOK(t, "SettleFile", err)
	ready := readyFile(t, db, org, "ready.csv")
	pending := newFile(t, db, org, "pending.csv")

	listed, err := db.PurgeableFiles(ctx, time.Now().Add(-time.Hour), 10)
	wantOK(t, "PurgeableFiles an hour ago", err)
	if len(listed) != 0 {
		t.Errorf("rows deleted just now are purgeable an hour ago: %q", ids(listed, fileID))
	}
	before := time.Now().Add(time.Second)
	listed, err = db.PurgeableFiles(ctx, before, 10)
	wantOK(t, "PurgeableFiles", err)
	got := ids(listed, fileID)
	want := []string{deleted.ID, expired.ID, rejected.ID}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("PurgeableFiles = %q, want %q", got, want)
	}
	for _, f := range listed {
		if f.BlobKey() != f.OrgID+"/"+f.ID || (f.ID == expired.ID) != (f.OrgID == other) {
			t.Errorf("listed %+v: the caller needs each file's organisation for its blob", f)
		}
	}
	if page, err := db.PurgeableFiles(ctx, before, 2); err != nil || len(page) != 2 {
		t.Errorf("PurgeableFiles(limit 2) = %d files, %v", len(page), err)
	}

	// Only the rows named, and only if still purgeable: a live file named by
	// mistake survives, and a blob whose deletion failed keeps its row.
	n, err := db.PurgeFiles(ctx, before, []string{deleted.ID, expired.ID, ready.ID, pending.ID})
	wantOK(t, "PurgeFiles", err)
	if n != 2 {
		t.Errorf("PurgeFiles removed %d rows, want 2", n)
	}
	listed, err = db.PurgeableFiles(ctx, before, 10)
	wantOK(t, "PurgeableFiles after purge", err)
	if got := ids(listed, fileID); !slices.Equal(got, []string{rejected.ID}) {
		t.Errorf("left to purge %q, want only %s", got, rejected.ID)
	}
	for _, f := range []store.File{ready, pending} {
		if _, err := db.GetFile(ctx, org, f.ID); err != nil {
			t.Errorf("live file %s: %v", f.Filename, err)
		}
	}
	if n, err := db.PurgeFiles(ctx, before, nil); err != nil || n != 0 {
		t.Errorf("PurgeFiles(nil) = %d, %v", n, err)
	}
}

// testFileOrgIsolation: another organisation reaches none of a file's
// methods, and its attempts change nothing.
func testFileOrgIsolation(t *testing.T, db *store.DB) {
	ctx := t.Context()
	a, b := newOrg(t, db), newOrg(t, db)
	pending := newFile(t, db, a, "pending.csv")
	ready := readyFile(t, db, a, "ready.csv")

	notFound := map[string]error{}
	_, notFound["GetFile"] = db.GetFile(ctx, b, ready.ID)
	_, notFound["SettleFile ready"] = db.SettleFile(ctx, b, pending.ID, store.FileSettlement{Status: store.FileReady, SHA256: digestOf("x"), SizeBytes: 1})
	_, notFound["SettleFile rejected"] = db.SettleFile(ctx, b, pending.ID, store.FileSettlement{Status: store.FileRejected, RejectedReason: "x"})
	notFound["SoftDeleteFile"] = db.SoftDeleteFile(ctx, b, ready.ID)
	for method, err := range notFound {
		wantErr(t, method+" from another organisation", err, store.ErrNotFound)
	}
	if got, err := db.FilesByID(ctx, b, []string{pending.ID, ready.ID}); err != nil || len(got) != 0 {
		t.Errorf("FilesByID of B = %v, %v; want none", got, err)
	}
	for _, f := range []store.FileFilter{{}, {Status: store.FileReady}, {Purpose: store.FileInput}} {
		page, err := db.ListFiles(ctx, b, f, store.ListParams{})
		wantOK(t, "ListFiles", err)
		if len(page.Items) != 0 {
			t.Errorf("ListFiles(%+v) of B shows %d of A's files", f, len(page.Items))
		}
	}
	for _, f := range []store.File{pending, ready} {
		got, err := db.GetFile(ctx, a, f.ID)
		wantOK(t, "GetFile", err)
		sameJSON(t, "A's file", got, f)
	}
}
