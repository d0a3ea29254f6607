package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/kobana/kadu/core/store"
)

// auditTests cover the audit trail (docs/audit.md).
var auditTests = []suiteTest{
	{"AuditAppendGet", testAuditAppendGet},
	{"AuditListFilters", testAuditListFilters},
	{"AuditPagination", testAuditPagination},
	{"AuditWithAudit", testAuditWithAudit},
	{"AuditNamesCreated", testAuditNamesCreated},
	{"AuditConcurrentAppends", testAuditConcurrentAppends},
	{"AuditExportChains", testAuditExportChains},
	{"AuditInTx", testAuditInTx},
}

// auditRecord returns a complete record of orgID's chain.
func auditRecord(orgID, subject string) store.AuditRecord {
	return store.AuditRecord{
		OrgID: orgID, Action: store.AuditRESTWrite, Surface: store.SurfaceREST,
		Issuer: "https://issuer.test", Subject: subject, Role: "admin", Scopes: []string{"kadu.admin", "kadu.run"},
		ClientID: "client-1", ClientName: "Claude", Route: "POST /api/v1/tasks", ResourceID: "tsk_1",
		ArgsDigest: "sha256:00", Outcome: store.OutcomeSucceeded, Status: 201, Detail: "created",
		RequestID: "req_1", TraceID: "4bf92f3577b34da6a3ce929d0e0e4736",
	}
}

// appendAudit appends rec and fails the test on error.
func appendAudit(t *testing.T, db interface {
	AppendAudit(ctx context.Context, rec store.AuditRecord) (store.AuditEvent, error)
}, rec store.AuditRecord) store.AuditEvent {
	t.Helper()
	e, err := db.AppendAudit(t.Context(), rec)
	wantOK(t, "AppendAudit", err)
	return e
}

// auditCount returns how many events orgID's chain holds, by listing it.
func auditCount(t *testing.T, db *store.DB, orgID string) int {
	t.Helper()
	n, before := 0, ""
	for {
		page, err := db.ListAudit(t.Context(), orgID, store.AuditFilter{}, store.ListParams{Limit: store.MaxListLimit, Before: before})
		wantOK(t, "ListAudit", err)
		n += len(page.Items)
		if !page.More {
			return n
		}
		before = page.Items[len(page.Items)-1].ID
	}
}

func testAuditAppendGet(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org, other := newOrg(t, db), newOrg(t, db)
	// Nanoseconds and a zone: stored as UTC microseconds, as hashed.
	at := time.Date(2026, 3, 1, 12, 30, 0, 123456789, time.FixedZone("BRT", -3*3600))
	rec := auditRecord(org, "user-1")
	rec.OccurredAt = at
	first := appendAudit(t, db, rec)
	if !store.ValidID(store.PrefixAudit, first.ID) || first.Seq != 1 || first.PrevHash != "" || len(first.Hash) != 64 ||
		!first.OccurredAt.Equal(at.Truncate(time.Microsecond)) || first.OccurredAt.Location() != time.UTC {
		t.Errorf("first event = %+v", first)
	}
	second := appendAudit(t, db, auditRecord(org, "user-2"))
	if second.Seq != 2 || second.PrevHash != first.Hash || second.Hash == first.Hash {
		t.Errorf("second event seq %d prev %s, want 2 and %s", second.Seq, second.PrevHash, first.Hash)
	}
	if d := time.Since(second.OccurredAt); d < -time.Minute || d > time.Minute {
		t.Errorf("an event without a time got %v, want about now", second.OccurredAt)
	}
	// Chains are per organisation, and the installation has its own.
	o := appendAudit(t, db, auditRecord(other, "user-1"))
	inst := appendAudit(t, db, store.AuditRecord{OrgID: store.InstallationChain, Action: store.AuditBundleLoaded,
		Surface: store.SurfaceSystem, ResourceID: "boletos", Outcome: store.OutcomeSucceeded, Detail: "v1.2.0"})
	if o.Seq != 1 || o.PrevHash != "" || inst.Seq != 1 {
		t.Errorf("other chains start at seq %d and %d, want 1 and 1", o.Seq, inst.Seq)
	}

	got, err := db.GetAudit(ctx, org, first.ID)
	wantOK(t, "GetAudit", err)
	sameJSON(t, "event read back", got, first)
	got, err = db.GetAudit(ctx, store.InstallationChain, inst.ID)
	wantOK(t, "GetAudit of the installation chain", err)
	sameJSON(t, "installation event read back", got, inst)

	// Existence never leaks across chains.
	_, err = db.GetAudit(ctx, other, first.ID)
	wantErr(t, "GetAudit from another organisation", err, store.ErrNotFound)
	_, err = db.GetAudit(ctx, store.InstallationChain, first.ID)
	wantErr(t, "GetAudit of an organisation's event from the installation chain", err, store.ErrNotFound)
	_, err = db.GetAudit(ctx, org, store.NewID(store.PrefixAudit))
	wantErr(t, "GetAudit of an unknown id", err, store.ErrNotFound)

	// A record without what makes it readable is refused, and takes no seq.
	for _, bad := range []store.AuditRecord{{OrgID: org, Surface: "rest", Outcome: "succeeded"},
		{OrgID: org, Action: "rest.write", Surface: "rest"}, {OrgID: org, Action: "rest.write", Outcome: "failed"}} {
		if _, err := db.AppendAudit(ctx, bad); err == nil {
			t.Errorf("AppendAudit accepted %+v", bad)
		}
	}
	if third := appendAudit(t, db, auditRecord(org, "user-3")); third.Seq != 3 {
		t.Errorf("after refused records, seq = %d, want 3", third.Seq)
	}
}

func testAuditListFilters(t *testing.T, db *store.DB) {
	ctx := t.Context()
	org := newOrg(t, db)
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	var all []store.AuditEvent
	for i := range 6 {
		rec := auditRecord(org, fmt.Sprintf("user-%d", i%2))
		rec.OccurredAt = base.Add(time.Duration(i) * time.Hour)
		if i%3 == 0 {
			rec.Action, rec.Surface, rec.Tool, rec.Route = store.AuditToolCall, store.SurfaceMCP, "kadu_tasks_delete", ""
		}
		if i == 5 {
			rec.Outcome = store.OutcomeFailed
		}
		all = append(all, appendAudit(t, db, rec))
	}
	appendAudit(t, db, auditRecord(newOrg(t, db), "user-0")) // another chain: never listed
	seqs := func(f store.AuditFilter) []int64 {
		page, err := db.ListAudit(ctx, org, f, store.ListParams{})
		wantOK(t, "ListAudit", err)
		out := []int64{}
		for _, e := range page.Items {
			out = append(out, e.Seq)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		f    store.AuditFilter
		want []int64
	}{
		{"all, newest first", store.AuditFilter{}, []int64{6, 5, 4, 3, 2, 1}},
		{"since inclusive, until exclusive", store.AuditFilter{Since: base.Add(time.Hour), Until: base.Add(3 * time.Hour)}, []int64{3, 2}},
		{"subject", store.AuditFilter{Subject: "user-1"}, []int64{6, 4, 2}},
		{"tool", store.AuditFilter{Tool: "kadu_tasks_delete"}, []int64{4, 1}},
		{"route", store.AuditFilter{Route: "POST /api/v1/tasks"}, []int64{6, 5, 3, 2}},
		{"action", store.AuditFilter{Action: store.AuditToolCall}, []int64{4, 1}},
		{"outcome", store.AuditFilter{Outcome: store.OutcomeFailed}, []int64{6}},
		{"combined", store.AuditFilter{Subject: "user-0", Route: "POST /api/v1/tasks"}, []int64{5, 3}},
		{"nothing", store.AuditFilter{Subject: "nobody"}, []int64{}},
	} {
		if got := seqs(tc.f); fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: seqs %v, want %v", tc.name, got, tc.want)
		}
	}
	page, err := db.ListAudit(ctx, org, store.AuditFilter{}, store.ListParams{Limit: 1})
	wantOK(t, "ListAudit", err)
	sameJSON(t, "newest event listed", page.Items[0], all[5])
}

func testAuditPagination(t *testing.T, db *store.DB) {
	org := newOrg(t, db)
	const n = 7
	for i := range n {
		appendAudit(t, db, auditRecord(org, fmt.Sprintf("user-%d", i)))
	}
	var seqs []int64
	before := ""
	for pages := 0; ; pages++ {
		if pages > n {
			t.Fatal("pagination does not end")
		}
		page, err := db.ListAudit(t.Context(), org, store.AuditFilter{}, store.ListParams{Limit: 3, Before: before})
		wantOK(t, "ListAudit", err)
		for _, e := range page.Items {
			seqs = append(seqs, e.Seq)
		}
		if !page.More {
			break
		}
		before = page.Items[len(page.Items)-1].ID
	}
	if fmt.Sprint(seqs) != "[7 6 5 4 3 2 1]" {
		t.Errorf("pages gave seqs %v, want 7 down to 1", seqs)
	}
	page, err := db.ListAudit(t.Context(), org, store.AuditFilter{}, store.ListParams{Before: store.NewID(store.PrefixAudit)})
	wantOK(t, "ListAudit with an unknown cursor", err)
	if len(page.Items) != 0 || page.More {
		t.Errorf("an unknown cursor listed %d events", len(page.Items))
	}
}

func testAuditWithAudit(t *testing.T, db *store.DB) {
	org := newOrg(t, db)
	boom := errors.New("boom")

	// A rolled-back transaction leaves no event, and the record pending.
	ctx, p := store.WithAudit(t.Context(), auditRecord(org, "rolled-back"))
	err := db.InTx(ctx, func(tx *store.Tx) error {
		if _, err := tx.CreateTask(ctx, org, store.Task{Name: "never"}); err != nil {
			return err
		}
		return boom
	})
	wantErr(t, "InTx returning an error", err, boom)
	if p.Appended() || auditCount(t, db, org) != 0 {
		t.Errorf("rolled back: appended %v, %d events; want false, 0", p.Appended(), auditCount(t, db, org))
	}
	// The next transaction on the context takes it, once.
	err = db.InTx(ctx, func(tx *store.Tx) error {
		_, err := tx.CreateTask(ctx, org, store.Task{Name: "kept"})
		return err
	})
	wantOK(t, "InTx", err)
	newTask(t, db, org, "after") // a later write on another context
	_, err = db.CreateTask(ctx, org, store.Task{Name: "again on the same context"})
	wantOK(t, "CreateTask", err)
	page, err := db.ListAudit(t.Context(), org, store.AuditFilter{}, store.ListParams{})
	wantOK(t, "ListAudit", err)
	if !p.Appended() || len(page.Items) != 1 || page.Items[0].Subject != "rolled-back" {
		t.Fatalf("committed: appended %v, events %+v; want one of subject rolled-back", p.Appended(), page.Items)
	}

	// The request's bookkeeping (provisioning, idempotency) is not the
	// change: it never takes the record.
	ctx, p = store.WithAudit(t.Context(), auditRecord(org, "bookkeeping"))
	_, _, err = db.EnsureOrg(ctx, store.NewID("org_"), "free")
	wantOK(t, "EnsureOrg", err)
	_, err = db.BeginIdempotent(ctx, org, "key-1", "POST", "/api/v1/tasks", "digest", time.Now())
	wantOK(t, "BeginIdempotent", err)
	wantOK(t, "AbandonIdempotent", db.AbandonIdempotent(ctx, org, "key-1"))
	if p.Appended() || auditCount(t, db, org) != 1 {
		t.Errorf("bookkeeping took the record: appended %v, %d events", p.Appended(), auditCount(t, db, org))
	}

	// A single-statement write of DB runs in a transaction with the record.
	ctx, p = store.WithAudit(t.Context(), auditRecord(org, "single"))
	task, err := db.CreateTask(ctx, org, store.Task{Name: "single"})
	wantOK(t, "CreateTask", err)
	if !p.Appended() || auditCount(t, db, org) != 2 {
		t.Errorf("CreateTask with a record: appended %v, %d events; want true, 2", p.Appended(), auditCount(t, db, org))
	}

	// A write that changes nothing (an unknown id) leaves the record to the
	// caller, who appends it as a failure.
	ctx, p = store.WithAudit(t.Context(), auditRecord(org, "nothing"))
	err = db.SoftDeleteTask(ctx, org, store.NewID(store.PrefixTask))
	wantErr(t, "SoftDeleteTask of an unknown task", err, store.ErrNotFound)
	if p.Appended() || auditCount(t, db, org) != 2 {
		t.Errorf("a write that changed nothing: appended %v, %d events; want false, 2", p.Appended(), auditCount(t, db, org))
	}
	rec := p.Record
	rec.Outcome, rec.Status = store.OutcomeFailed, 404
	if e := appendAudit(t, db, rec); e.Seq != 3 { // AppendAudit on the same context appends once
		t.Errorf("AppendAudit of the pending record: seq %d, want 3", e.Seq)
	}
	if p.Appended() || auditCount(t, db, org) != 3 {
		t.Errorf("after AppendAudit: %d events, want 3", auditCount(t, db, org))
	}
	_ = ctx

	ctx, p = store.WithAudit(t.Context(), auditRecord(org, "delete"))
	wantOK(t, "SoftDeleteTask", db.SoftDeleteTask(ctx, org, task.ID))
	if !p.Appended() || auditCount(t, db, org) != 4 {
		t.Errorf("SoftSoftDeleteTask with a record: appended %v, %d events; want true, 4", p.Appended(), auditCount(t, db, org))
	}
}

func testAuditConcurrentAppends(t *testing.T, db *store.DB) {
	org := newOrg(t, db)
	const workers, each = 4, 10
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				// Half through a write carrying the record, half alone.
				if i%2 == 0 {
					ctx, _ := store.WithAudit(t.Context(), auditRecord(org, fmt.Sprintf("w%d", w)))
					_, err := db.CreateTask(ctx, org, store.Task{Name: fmt.Sprintf("w%d-%d", w, i)})
					errs <- err
					continue
				}
				_, err := db.AppendAudit(t.Context(), auditRecord(org, fmt.Sprintf("w%d", w)))
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		wantOK(t, "concurrent append", err)
	}
	assertContiguous(t, db, org, workers*each)
}

// assertContiguous checks that orgID's chain holds seqs 1..n, each event
// carrying the hash of the one before.
func assertContiguous(t *testing.T, db *store.DB, orgID string, n int) {
	t.Helper()
	var events []store.AuditEvent
	before := ""
	for {
		page, err := db.ListAudit(t.Context(), orgID, store.AuditFilter{}, store.ListParams{Limit: store.MaxListLimit, Before: before})
		wantOK(t, "ListAudit", err)
		events = append(events, page.Items...)
		if !page.More {
			break
		}
		before = page.Items[len(page.Items)-1].ID
	}
	if len(events) != n {
		t.Fatalf("chain holds %d events, want %d", len(events), n)
	}
	for i, e := range events {
		if want := int64(n - i); e.Seq != want {
			t.Fatalf("event %d of the list has seq %d, want %d", i, e.Seq, want)
		}
		if i+1 < len(events) && e.PrevHash != events[i+1].Hash {
			t.Fatalf("seq %d does not carry the hash of seq %d (a fork)", e.Seq, events[i+1].Seq)
		}
	}
}

func testAuditExportChains(t *testing.T, db *store.DB) {
	ctx := t.Context()
	chains, err := db.AuditChains(ctx)
	wantOK(t, "AuditChains", err)
	if len(chains) != 0 {
		t.Errorf("AuditChains of an empty trail = %q", chains)
	}
	org := newOrg(t, db)
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for i := range 5 {
		rec := auditRecord(org, fmt.Sprintf("user-%d", i))
		rec.OccurredAt = base.Add(time.Duration(i) * time.Hour)
		appendAudit(t, db, rec)
	}
	appendAudit(t, db, store.AuditRecord{OrgID: store.InstallationChain, Action: store.AuditConfigReloaded,
		Surface: store.SurfaceSystem, Outcome: store.OutcomeSucceeded})
	var seqs []int64
	err = db.ExportAudit(ctx, org, base.Add(2*time.Hour), func(e store.AuditEvent) error {
		seqs = append(seqs, e.Seq)
		return nil
	})
	wantOK(t, "ExportAudit", err)
	if fmt.Sprint(seqs) != "[3 4 5]" {
		t.Errorf("export since the third hour: seqs %v, want oldest first [3 4 5]", seqs)
	}
	stop := errors.New("stop")
	n := 0
	err = db.ExportAudit(ctx, org, time.Time{}, func(store.AuditEvent) error { n++; return stop })
	if !errors.Is(err, stop) || n != 1 {
		t.Errorf("an export whose callback fails: %d calls, %v", n, err)
	}
	chains, err = db.AuditChains(ctx)
	wantOK(t, "AuditChains", err)
	if len(chains) != 2 || chains[0] != store.InstallationChain || chains[1] != org {
		t.Errorf("AuditChains = %q, want the installation's and %s", chains, org)
	}
	for _, c := range chains {
		checked, brk, err := db.VerifyAudit(ctx, c)
		if err != nil || brk != nil || checked == 0 {
			t.Errorf("VerifyAudit(%q): %d checked, %v, %v", c, checked, brk, err)
		}
	}
	seq, hash, err := db.AuditHead(ctx, org)
	wantOK(t, "AuditHead", err)
	last, err := db.ListAudit(ctx, org, store.AuditFilter{}, store.ListParams{Limit: 1})
	wantOK(t, "ListAudit", err)
	if seq != 5 || hash != last.Items[0].Hash {
		t.Errorf("AuditHead = %d %s, want 5 and the last event's hash %s", seq, hash, last.Items[0].Hash)
	}
	if seq, hash, err := db.AuditHead(ctx, "org_without_a_chain"); err != nil || seq != 0 || hash != "" {
		t.Errorf("AuditHead of no chain = %d %q %v", seq, hash, err)
	}
	checked, brk, err := db.VerifyAudit(ctx, "org_without_a_chain")
	if err != nil || brk != nil || checked != 0 {
		t.Errorf("VerifyAudit of no chain: %d, %v, %v", checked, brk, err)
	}
}

func testAuditInTx(t *testing.T, db *store.DB) {
	org := newOrg(t, db)
	// A record appended explicitly inside the transaction of a change that
	// carries another: both commit, the explicit one first.
	ctx, p := store.WithAudit(t.Context(), auditRecord(org, "carried"))
	err := db.InTx(ctx, func(tx *store.Tx) error {
		if _, err := tx.CreateTask(ctx, org, store.Task{Name: "t"}); err != nil {
			return err
		}
		e, err := tx.AppendAudit(ctx, auditRecord(org, "explicit"))
		if err == nil && e.Seq != 1 {
			t.Errorf("explicit event seq %d, want 1", e.Seq)
		}
		return err
	})
	wantOK(t, "InTx", err)
	page, err := db.ListAudit(t.Context(), org, store.AuditFilter{}, store.ListParams{})
	wantOK(t, "ListAudit", err)
	if !p.Appended() || len(page.Items) != 2 || page.Items[0].Subject != "carried" || page.Items[1].Subject != "explicit" {
		t.Errorf("appended %v, events %+v", p.Appended(), page.Items)
	}
	// An explicit append rolled back with its transaction leaves nothing.
	boom := errors.New("boom")
	err = db.InTx(t.Context(), func(tx *store.Tx) error {
		if _, err := tx.AppendAudit(t.Context(), auditRecord(org, "rolled back")); err != nil {
			return err
		}
		return boom
	})
	wantErr(t, "InTx", err, boom)
	if e := appendAudit(t, db, auditRecord(org, "next")); e.Seq != 3 {
		t.Errorf("after a rolled back append, seq %d, want 3", e.Seq)
	}
}

// testAuditNamesCreated: a record that names no object (a create route's
// path has no id) takes the id of the object its transaction creates, never
// that of a create that rolled back, and a record that names one keeps it.
func testAuditNamesCreated(t *testing.T, db *store.DB) {
	org := newOrg(t, db)
	latest := func() store.AuditEvent {
		t.Helper()
		page, err := db.ListAudit(t.Context(), org, store.AuditFilter{}, store.ListParams{Limit: 1})
		wantOK(t, "ListAudit", err)
		if len(page.Items) != 1 {
			t.Fatalf("ListAudit: %d events, want 1", len(page.Items))
		}
		return page.Items[0]
	}
	unnamed := auditRecord(org, "creator")
	unnamed.ResourceID = ""

	ctx, p := store.WithAudit(t.Context(), unnamed)
	boom := errors.New("boom")
	err := db.InTx(ctx, func(tx *store.Tx) error {
		if _, err := tx.CreateTask(ctx, org, store.Task{Name: "rolled back"}); err != nil {
			return err
		}
		return boom
	})
	wantErr(t, "InTx returning an error", err, boom)
	task, err := db.CreateTask(ctx, org, store.Task{Name: "kept"})
	wantOK(t, "CreateTask", err)
	if !p.Appended() {
		t.Fatal("the record was not appended with the task's creation")
	}
	if got := latest().ResourceID; got != task.ID {
		t.Errorf("task creation recorded resource %q, want the created task %s (not the rolled-back one)", got, task.ID)
	}

	ctx, _ = store.WithAudit(t.Context(), unnamed)
	hook, err := db.CreateWebhook(ctx, org, store.Webhook{URL: "https://hooks.example.com/a", Secret: secretA}, -1)
	wantOK(t, "CreateWebhook", err)
	if got := latest().ResourceID; got != hook.ID {
		t.Errorf("webhook creation recorded resource %q, want %s", got, hook.ID)
	}

	ctx, _ = store.WithAudit(t.Context(), auditRecord(org, "named")) // names tsk_1
	_, err = db.CreateTask(ctx, org, store.Task{Name: "named"})
	wantOK(t, "CreateTask", err)
	if got := latest().ResourceID; got != "tsk_1" {
		t.Errorf("a record naming its object recorded %q, want tsk_1 kept", got)
	}
}
