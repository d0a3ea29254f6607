package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/kobana/kadu/core/store"
	"github.com/kobana/kadu/core/store/pgtest"
)

// auditBenchBackends runs fn on SQLite and on PostgreSQL (a cluster started
// on first use), so that -bench=/sqlite starts no server.
func auditBenchBackends(b *testing.B, fn func(b *testing.B, db *store.DB)) {
	var cluster *pgtest.Cluster
	b.Cleanup(func() {
		if cluster != nil {
			if err := cluster.Stop(); err != nil {
				b.Error(err)
			}
		}
	})
	b.Run("sqlite", func(b *testing.B) { fn(b, openSQLite(b)) })
	b.Run("postgres", func(b *testing.B) { fn(b, pgOnce(b, &cluster)) })
}

// BenchmarkAppendAudit measures appending one event alone (its own
// transaction): the cost of a refusal or a decline being recorded.
func BenchmarkAppendAudit(b *testing.B) {
	auditBenchBackends(b, func(b *testing.B, db *store.DB) {
		ctx := context.Background()
		for i := 0; b.Loop(); i++ {
			if _, err := db.AppendAudit(ctx, auditRec("org_bench", i)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkCreateTaskAudited measures a single-statement write without and
// with a record on its context: the record turns the statement into a
// transaction that also advances the chain.
func BenchmarkCreateTaskAudited(b *testing.B) {
	for _, audited := range []bool{false, true} {
		name := "plain"
		if audited {
			name = "audited"
		}
		b.Run(name, func(b *testing.B) {
			auditBenchBackends(b, func(b *testing.B, db *store.DB) {
				const org = "org_bench"
				if _, _, err := db.EnsureOrg(context.Background(), org, "free"); err != nil {
					b.Fatal(err)
				}
				for i := 0; b.Loop(); i++ {
					ctx := context.Background()
					if audited {
						ctx, _ = store.WithAudit(ctx, auditRec(org, i))
					}
					if _, err := db.CreateTask(ctx, org, store.Task{Name: "bench"}); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

// BenchmarkVerifyAudit measures verifying a chain of 10 000 events.
func BenchmarkVerifyAudit(b *testing.B) {
	auditBenchBackends(b, func(b *testing.B, db *store.DB) {
		const org, n = "org_bench", 10_000
		for i := 0; i < n; i += 1000 {
			appendN(b, db, org, 1000, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		}
		for b.Loop() {
			checked, brk, err := db.VerifyAudit(context.Background(), org)
			if err != nil || brk != nil || checked != n {
				b.Fatalf("VerifyAudit: %d, %v, %v", checked, brk, err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/n*1000, "ns/event")
	})
}
