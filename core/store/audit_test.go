package store_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/kobana/kadu/core/store"
	"github.com/kobana/kadu/core/store/pgtest"
)

// auditBackend opens databases of one back-end with the keys given, so that
// a test can reopen the same database under other keys.
type auditBackend struct {
	name   string
	newDSN func(t testing.TB) string
	driver string
}

func auditBackends(t *testing.T) []auditBackend {
	return []auditBackend{
		{name: "sqlite", driver: store.DriverSQLite, newDSN: func(t testing.TB) string { return filepath.Join(t.TempDir(), "kadu.db") }},
		{name: "postgres", driver: store.DriverPostgres, newDSN: func(t testing.TB) string { return pgtest.Shared(t).NewDatabase(t) }},
	}
}

func openWith(t testing.TB, driver, dsn string, keys *store.SecretKeys) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), store.Options{Driver: driver, DSN: dsn, SecretKeys: keys, MaxConns: 8})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return db
}

func testKeys(t testing.TB, seeds ...byte) *store.SecretKeys {
	t.Helper()
	var masters [][]byte
	for _, s := range seeds {
		masters = append(masters, bytes.Repeat([]byte{s}, 32))
	}
	k, err := store.NewSecretKeys(masters...)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func auditRec(org string, i int) store.AuditRecord {
	return store.AuditRecord{OrgID: org, Action: store.AuditRESTWrite, Surface: store.SurfaceREST,
		Subject: "user-" + strconv.Itoa(i), Scopes: []string{"kadu.admin"}, Route: "POST /api/v1/tasks",
		Outcome: store.OutcomeSucceeded, Status: 201, Detail: "event " + strconv.Itoa(i)}
}

// appendN appends n events to org's chain, occurring one minute apart from
// start, in one transaction.
func appendN(t testing.TB, db *store.DB, org string, n int, start time.Time) {
	t.Helper()
	err := db.InTx(context.Background(), func(tx *store.Tx) error {
		for i := range n {
			rec := auditRec(org, i)
			rec.OccurredAt = start.Add(time.Duration(i) * time.Minute)
			if _, err := tx.AppendAudit(context.Background(), rec); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("appending %d events: %v", n, err)
	}
}

func execSQL(t *testing.T, db *store.DB, query string, args ...any) {
	t.Helper()
	if _, err := db.Writer().ExecContext(t.Context(), query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

// TestAuditTamper edits, deletes and reorders rows behind the store's back
// and checks that VerifyAudit names the first broken link and why.
func TestAuditTamper(t *testing.T) {
	const org = "org_tamper"
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	// swap exchanges the places (seq) of the events 4 and 5.
	swap := func(t *testing.T, db *store.DB) {
		execSQL(t, db, `UPDATE audit_events SET seq = -4 WHERE org_id = $1 AND seq = 4`, org)
		execSQL(t, db, `UPDATE audit_events SET seq = 4 WHERE org_id = $1 AND seq = 5`, org)
		execSQL(t, db, `UPDATE audit_events SET seq = 5 WHERE org_id = $1 AND seq = -4`, org)
	}
	tests := []struct {
		name    string
		tamper  func(t *testing.T, db *store.DB)
		seq     int64
		reason  string
		withRow bool // the break names an existing row's id
	}{
		{"edited", func(t *testing.T, db *store.DB) {
			execSQL(t, db, `UPDATE audit_events SET detail = 'nothing to see' WHERE org_id = $1 AND seq = 4`, org)
		}, 4, store.AuditReasonHash, true},
		{"edited outcome", func(t *testing.T, db *store.DB) {
			execSQL(t, db, `UPDATE audit_events SET outcome = 'failed', status = 500 WHERE org_id = $1 AND seq = 7`, org)
		}, 7, store.AuditReasonHash, true},
		{"edited and rehashed", func(t *testing.T, db *store.DB) {
			// Whoever recomputes the edited row's hash breaks the next link.
			execSQL(t, db, `UPDATE audit_events SET hash = 'ff' WHERE org_id = $1 AND seq = 4`, org)
		}, 4, store.AuditReasonHash, true},
		{"deleted", func(t *testing.T, db *store.DB) {
			execSQL(t, db, `DELETE FROM audit_events WHERE org_id = $1 AND seq = 4`, org)
		}, 4, store.AuditReasonMissing, false},
		{"deleted first", func(t *testing.T, db *store.DB) {
			execSQL(t, db, `DELETE FROM audit_events WHERE org_id = $1 AND seq = 1`, org)
		}, 1, store.AuditReasonMissing, false},
		{"reordered", swap, 4, store.AuditReasonPrevHash, true},
		{"renumbered", func(t *testing.T, db *store.DB) {
			// Rows moved up by one with the gap closed: seq 4 now holds 5's row.
			execSQL(t, db, `DELETE FROM audit_events WHERE org_id = $1 AND seq = 4`, org)
			for s := 5; s <= 10; s++ {
				execSQL(t, db, `UPDATE audit_events SET seq = $2 WHERE org_id = $1 AND seq = $3`, org, s-1, s)
			}
		}, 4, store.AuditReasonPrevHash, true},
		{"truncated tail", func(t *testing.T, db *store.DB) {
			execSQL(t, db, `DELETE FROM audit_events WHERE org_id = $1 AND seq = 10`, org)
		}, 10, store.AuditReasonTruncated, false},
		{"rewritten head", func(t *testing.T, db *store.DB) {
			execSQL(t, db, `UPDATE audit_heads SET last_hash = 'ff' WHERE org_id = $1`, org)
		}, 10, store.AuditReasonHead, false},
		{"head deleted", func(t *testing.T, db *store.DB) {
			execSQL(t, db, `DELETE FROM audit_heads WHERE org_id = $1`, org)
		}, 10, store.AuditReasonNoHead, false},
		{"head rolled back", func(t *testing.T, db *store.DB) {
			// The head made to name event 5, so that 6–10 could be edited at will.
			execSQL(t, db, `UPDATE audit_heads SET last_seq = 5,
				last_hash = (SELECT hash FROM audit_events WHERE org_id = $1 AND seq = 5) WHERE org_id = $1`, org)
			execSQL(t, db, `UPDATE audit_events SET detail = 'rewritten' WHERE org_id = $1 AND seq = 8`, org)
		}, 6, store.AuditReasonPastHead, false},
	}
	for _, b := range auditBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					db := openWith(t, b.driver, b.newDSN(t), testKeys(t, 1))
					appendN(t, db, org, 10, start)
					appendN(t, db, "org_other", 3, start) // another chain: untouched, still verifies
					if n, brk, err := db.VerifyAudit(t.Context(), org); err != nil || brk != nil || n != 10 {
						t.Fatalf("before tampering: %d checked, break %v, error %v", n, brk, err)
					}
					tc.tamper(t, db)
					_, brk, err := db.VerifyAudit(t.Context(), org)
					if err != nil {
						t.Fatalf("VerifyAudit: %v", err)
					}
					if brk == nil || brk.Seq != tc.seq || brk.Reason != tc.reason || brk.OrgID != org || (brk.ID != "") != tc.withRow {
						t.Fatalf("break = %+v, want seq %d: %s", brk, tc.seq, tc.reason)
					}
					// However it was tampered with, the chain is still one to verify.
					if chains, err := db.AuditChains(t.Context()); err != nil || !slices.Contains(chains, org) {
						t.Errorf("AuditChains after tampering = %v, %v; want %s among them", chains, err, org)
					}
					if _, brk, err := db.VerifyAudit(t.Context(), "org_other"); err != nil || brk != nil {
						t.Errorf("the other chain: break %v, error %v", brk, err)
					}
					// A chain that does not verify is not purged: that would hide the break.
					_, err = db.PurgeAudit(t.Context(), org, start.Add(time.Hour))
					if target := (*store.AuditBreak)(nil); !errors.As(err, &target) {
						t.Errorf("PurgeAudit of a broken chain: %v, want the break", err)
					}
				})
			}
		})
	}
}

// TestAuditPurge purges in batches, checks the chain verifies from the
// signed checkpoint, that appends continue after it, and that tampering
// with the checkpoint, or a checkpoint signed by another key, is caught.
func TestAuditPurge(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, b := range auditBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			dsn := b.newDSN(t)
			db := openWith(t, b.driver, dsn, testKeys(t, 1))
			const org, total, purged = "org_purge", 2600, 2550
			appendN(t, db, org, total, start)

			// Nothing is older than the first event: nothing to purge.
			n, err := db.PurgeAudit(ctx, org, start)
			if err != nil || n != 0 {
				t.Fatalf("PurgeAudit before the first event: %d, %v", n, err)
			}
			// 2550 events (more than two batches) occurred before the cutoff.
			n, err = db.PurgeAudit(ctx, org, start.Add(purged*time.Minute))
			if err != nil || n != purged {
				t.Fatalf("PurgeAudit: %d, %v; want %d", n, err, purged)
			}
			cp, err := db.GetAuditCheckpoint(ctx, org)
			if err != nil || cp == nil || cp.Seq != purged || len(cp.Signature) == 0 {
				t.Fatalf("checkpoint %+v, %v; want seq 2550, signed", cp, err)
			}
			checked, brk, err := db.VerifyAudit(ctx, org)
			if err != nil || brk != nil || checked != total-purged {
				t.Fatalf("VerifyAudit after the purge: %d checked, %v, %v", checked, brk, err)
			}
			next, err := db.AppendAudit(ctx, auditRec(org, 0))
			if err != nil || next.Seq != total+1 {
				t.Fatalf("append after the purge: seq %d, %v", next.Seq, err)
			}
			page, err := db.ListAudit(ctx, org, store.AuditFilter{}, store.ListParams{Limit: store.MaxListLimit})
			if err != nil || len(page.Items) != total-purged+1 {
				t.Fatalf("listed %d, %v", len(page.Items), err)
			}

			// Everything: the head survives, the chain still verifies and
			// continues.
			n, err = db.PurgeAudit(ctx, org, time.Now().Add(time.Hour))
			if err != nil || n != total-purged+1 {
				t.Fatalf("PurgeAudit of everything: %d, %v", n, err)
			}
			if checked, brk, err := db.VerifyAudit(ctx, org); err != nil || brk != nil || checked != 0 {
				t.Fatalf("VerifyAudit of an emptied chain: %d, %v, %v", checked, brk, err)
			}
			if chains, err := db.AuditChains(ctx); err != nil || fmt.Sprint(chains) != "["+org+"]" {
				t.Errorf("AuditChains = %q, %v", chains, err)
			}
			appendN(t, db, org, 3, start)
			if checked, brk, err := db.VerifyAudit(ctx, org); err != nil || brk != nil || checked != 3 {
				t.Fatalf("VerifyAudit after appending to an emptied chain: %d, %v, %v", checked, brk, err)
			}

			// The checkpoint verifies under a former key (rotation) and not
			// under a stranger's.
			rotated := openWith(t, b.driver, dsn, testKeys(t, 2, 1))
			if _, brk, err := rotated.VerifyAudit(ctx, org); err != nil || brk != nil {
				t.Errorf("VerifyAudit after a key rotation: %v, %v", brk, err)
			}
			stranger := openWith(t, b.driver, dsn, testKeys(t, 3))
			if _, brk, err := stranger.VerifyAudit(ctx, org); err != nil || brk == nil || brk.Reason != store.AuditReasonUntrusted {
				t.Errorf("VerifyAudit under other keys: %v, %v; want %q", brk, err, store.AuditReasonUntrusted)
			}

			// An altered checkpoint.
			execSQL(t, db, `UPDATE audit_checkpoints SET seq = seq + 1 WHERE org_id = $1`, org)
			if _, brk, err := db.VerifyAudit(ctx, org); err != nil || brk == nil || brk.Reason != store.AuditReasonCheckpoint {
				t.Errorf("VerifyAudit of an altered checkpoint: %v, %v", brk, err)
			}
			// A deleted checkpoint: seq 1 is missing.
			execSQL(t, db, `DELETE FROM audit_checkpoints WHERE org_id = $1`, org)
			if _, brk, err := db.VerifyAudit(ctx, org); err != nil || brk == nil || brk.Seq != 1 || brk.Reason != store.AuditReasonMissing {
				t.Errorf("VerifyAudit without its checkpoint: %v, %v", brk, err)
			}

			// Without keys there is nothing to sign with.
			plain := openWith(t, b.driver, b.newDSN(t), nil)
			appendN(t, plain, org, 2, start)
			if _, err := plain.PurgeAudit(ctx, org, time.Now()); err == nil {
				t.Error("PurgeAudit without SecretKeys succeeded")
			}
		})
	}
}

// TestAuditTwoProcesses has two OS processes append to one chain on one
// PostgreSQL database at once (replicas): no fork, no lost event.
func TestAuditTwoProcesses(t *testing.T) {
	const org, each = "org_replicas", 200
	if dsn := os.Getenv("KADU_AUDIT_CHILD_DSN"); dsn != "" {
		auditChild(t, dsn, org, each)
		return
	}
	if testing.Short() {
		t.Skip("starts PostgreSQL and two processes")
	}
	dsn := pgtest.Shared(t).NewDatabase(t)
	db := openWith(t, store.DriverPostgres, dsn, nil) // migrated before the children start

	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	outputs := make([][]byte, 2)
	errs := make([]error, 2)
	for i := range 2 {
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestAuditTwoProcesses$", "-test.count=1")
		cmd.Env = append(os.Environ(), "KADU_AUDIT_CHILD_DSN="+dsn, "PGTEST_DSN=")
		wg.Go(func() { outputs[i], errs[i] = cmd.CombinedOutput() })
	}
	wg.Wait()
	for i := range 2 {
		if errs[i] != nil {
			t.Fatalf("child %d: %v\n%s", i, errs[i], outputs[i])
		}
	}
	seen := map[int64]bool{}
	err := db.ExportAudit(ctx, org, time.Time{}, func(e store.AuditEvent) error {
		seen[e.Seq] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2*each {
		t.Fatalf("the chain holds %d events, want %d", len(seen), 2*each)
	}
	for s := int64(1); s <= 2*each; s++ {
		if !seen[s] {
			t.Fatalf("seq %d missing: seqs are not 1..%d", s, 2*each)
		}
	}
	if n, brk, err := db.VerifyAudit(ctx, org); err != nil || brk != nil || n != 2*each {
		t.Fatalf("VerifyAudit: %d checked, break %v, error %v", n, brk, err)
	}
}

// auditChild is one process of TestAuditTwoProcesses.
func auditChild(t *testing.T, dsn, org string, n int) {
	db := openWith(t, store.DriverPostgres, dsn, nil)
	var wg sync.WaitGroup
	for w := range 4 { // a replica appends from several requests at once
		wg.Go(func() {
			for i := w; i < n; i += 4 {
				if _, err := db.AppendAudit(t.Context(), auditRec(org, i)); err != nil {
					t.Errorf("append %d: %v", i, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestAuditPurgeWhileAppending purges a chain while requests append to it
// and while it is verified: the chain verifies throughout and at the end.
func TestAuditPurgeWhileAppending(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, b := range auditBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			db := openWith(t, b.driver, b.newDSN(t), testKeys(t, 1))
			const org, old, added = "org_busy", 2500, 100
			appendN(t, db, org, old, start)
			var wg sync.WaitGroup
			wg.Go(func() {
				for i := range added {
					if _, err := db.AppendAudit(ctx, auditRec(org, i)); err != nil {
						t.Errorf("append during the purge: %v", err)
						return
					}
				}
			})
			wg.Go(func() {
				for range 5 {
					if _, brk, err := db.VerifyAudit(ctx, org); err != nil || brk != nil {
						t.Errorf("VerifyAudit during the purge: %v, %v", brk, err)
						return
					}
				}
			})
			n, err := db.PurgeAudit(ctx, org, start.Add(old*time.Minute))
			wg.Wait()
			if err != nil || n != old {
				t.Fatalf("PurgeAudit: %d, %v; want %d", n, err, old)
			}
			if checked, brk, err := db.VerifyAudit(ctx, org); err != nil || brk != nil || checked != added {
				t.Fatalf("VerifyAudit: %d checked, %v, %v; want %d", checked, brk, err, added)
			}
		})
	}
}

// TestAuditBoundsUntrustedText: values a client controls (its reported name,
// a refusal's detail quoting input) are stored on both databases whatever
// bytes they hold — PostgreSQL refuses NUL and invalid UTF-8, which would
// fail the write the event belongs to — and at most 1 KiB of each is kept.
func TestAuditBoundsUntrustedText(t *testing.T) {
	for _, b := range auditBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			db := openWith(t, b.driver, b.newDSN(t), testKeys(t, 1))
			rec := auditRec("org_bounds", 0)
			rec.ClientName = "evil\x00client\xff"
			rec.Detail = strings.Repeat("é", 3000) // 6000 bytes
			rec.Scopes = make([]string, 500)
			for i := range rec.Scopes {
				rec.Scopes[i] = "kadu.read"
			}
			e, err := db.AppendAudit(t.Context(), rec)
			if err != nil {
				t.Fatalf("AppendAudit: %v", err)
			}
			got, err := db.GetAudit(t.Context(), "org_bounds", e.ID)
			if err != nil {
				t.Fatalf("GetAudit: %v", err)
			}
			if got.ClientName != "evil\uFFFDclient\uFFFD" {
				t.Errorf("client name stored as %q, want NUL and the invalid byte replaced by U+FFFD", got.ClientName)
			}
			if len(got.Detail) > 1024 || !strings.HasSuffix(got.Detail, "…") || !utf8.ValidString(got.Detail) {
				t.Errorf("detail of %d bytes stored as %d bytes (valid UTF-8 %v); want at most 1024, cut with …",
					len(rec.Detail), len(got.Detail), utf8.ValidString(got.Detail))
			}
			if len(got.Scopes) != 64 {
				t.Errorf("%d scopes stored, want the first 64", len(got.Scopes))
			}
			if n, brk, err := db.VerifyAudit(t.Context(), "org_bounds"); err != nil || brk != nil || n != 1 {
				t.Errorf("VerifyAudit = %d, %v, %v; want the bounded event to verify", n, brk, err)
			}
		})
	}
}

// TestAuditExportIsContiguous: an event's time need not rise with its seq
// (it is taken before the event waits for the chain's head; replicas'
// clocks differ), and an export from a time is still a run without holes,
// so that it checks line by line.
func TestAuditExportIsContiguous(t *testing.T) {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, b := range auditBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			db := openWith(t, b.driver, b.newDSN(t), testKeys(t, 1))
			for i, minute := range []int{10, 30, 20, 40} { // seq 3 is older than seq 2
				rec := auditRec("org_export", i)
				rec.OccurredAt = base.Add(time.Duration(minute) * time.Minute)
				if _, err := db.AppendAudit(t.Context(), rec); err != nil {
					t.Fatalf("AppendAudit: %v", err)
				}
			}
			var seqs []int64
			err := db.ExportAudit(t.Context(), "org_export", base.Add(25*time.Minute), func(e store.AuditEvent) error {
				seqs = append(seqs, e.Seq)
				return nil
			})
			if err != nil || !slices.Equal(seqs, []int64{2, 3, 4}) {
				t.Errorf("export since minute 25 = %v, %v; want seqs [2 3 4] (from the first event at or after it, no hole)", seqs, err)
			}
		})
	}
}
