package store_test

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kobana/kadu/core/store"
	"github.com/kobana/kadu/core/store/pgtest"
)

// BenchmarkGetExecution measures GET /executions/{id}'s query on both
// back-ends, idle and while a writer commits small transactions back to back
// (what the job queue does under load). On SQLite the busy-writer case also
// runs reading through the writer connection, as a store without a read pool
// would: that is the difference the read pool makes. p50/p99 are per call.
func BenchmarkGetExecution(b *testing.B) {
	var cluster *pgtest.Cluster // started by the first postgres sub-benchmark
	b.Cleanup(func() {
		if cluster != nil {
			if err := cluster.Stop(); err != nil {
				b.Error(err)
			}
		}
	})
	b.Run("sqlite", func(b *testing.B) {
		db := openSQLite(b)
		benchGet(b, db, db.GetExecution, false)
	})
	b.Run("sqlite-busy-writer", func(b *testing.B) {
		db := openSQLite(b)
		benchGet(b, db, db.GetExecution, true)
	})
	b.Run("sqlite-busy-writer-through-writer", func(b *testing.B) {
		db := openSQLite(b)
		viaWriter := func(ctx context.Context, org, id string) (e store.Execution, err error) {
			err = db.InTx(ctx, func(tx *store.Tx) error {
				e, err = tx.GetExecution(ctx, org, id)
				return err
			})
			return e, err
		}
		benchGet(b, db, viaWriter, true)
	})
	b.Run("postgres", func(b *testing.B) {
		db := pgOnce(b, &cluster)
		benchGet(b, db, db.GetExecution, false)
	})
	b.Run("postgres-busy-writer", func(b *testing.B) {
		db := pgOnce(b, &cluster)
		benchGet(b, db, db.GetExecution, true)
	})
}

// pgOnce opens a database on *cluster, starting the cluster on first use
// (BenchmarkGetExecution stops it), so that -bench=/sqlite starts no server.
func pgOnce(b *testing.B, cluster **pgtest.Cluster) *store.DB {
	b.Helper()
	if *cluster == nil {
		c, err := pgtest.Start(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		*cluster = c
	}
	return openPostgres(b, *cluster)
}

func benchGet(b *testing.B, db *store.DB, get func(ctx context.Context, org, id string) (store.Execution, error), busy bool) {
	ctx := context.Background()
	org := store.NewID("org_")
	if _, _, err := db.EnsureOrg(ctx, org, "free"); err != nil {
		b.Fatal(err)
	}
	task, err := db.CreateTask(ctx, org, store.Task{Name: "bench", InputSchema: json.RawMessage(`{"type":"object"}`)})
	if err != nil {
		b.Fatal(err)
	}
	e, err := db.CreateExecution(ctx, org, store.Execution{TaskID: task.ID, Input: json.RawMessage(`{"month":"2026-11"}`)})
	if err != nil {
		b.Fatal(err)
	}

	if busy {
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				err := db.InTx(ctx, func(tx *store.Tx) error {
					x, err := tx.CreateExecution(ctx, org, store.Execution{TaskID: task.ID})
					if err != nil {
						return err
					}
					if _, err := tx.AppendStep(ctx, org, store.Step{ExecutionID: x.ID, Name: "s"}); err != nil {
						return err
					}
					_, err = tx.AddCost(ctx, org, x.ID, 1)
					return err
				})
				if err != nil {
					b.Error(err)
					return
				}
			}
		})
		b.Cleanup(func() { close(stop); wg.Wait() })
		time.Sleep(50 * time.Millisecond) // let the writer get going
	}

	durations := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		if _, err := get(ctx, org, e.ID); err != nil {
			b.Fatal(err)
		}
		durations = append(durations, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(durations)
	b.ReportMetric(float64(durations[len(durations)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(durations[len(durations)*99/100].Microseconds()), "p99-µs")
}
