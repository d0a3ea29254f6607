package store_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/kobana/kadu/core/store"
)

type recordingObserver struct {
	mu  sync.Mutex
	ops []string
}

func (r *recordingObserver) Start(ctx context.Context, op string) (context.Context, func(error)) {
	return ctx, func(error) {
		r.mu.Lock()
		r.ops = append(r.ops, op)
		r.mu.Unlock()
	}
}

func TestObserverSeesEveryStatementByOperation(t *testing.T) {
	ctx := context.Background()
	obs := &recordingObserver{}
	db, err := store.Open(ctx, store.Options{
		Driver:   store.DriverSQLite,
		DSN:      filepath.Join(t.TempDir(), "kadu.db"),
		Observer: obs,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, _, err := db.EnsureOrg(ctx, "org_a", "developer"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.GetOrg(ctx, "org_a"); err != nil {
		t.Fatal(err)
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if !slices.Contains(obs.ops, "select orgs") {
		t.Errorf("operations %q lack %q", obs.ops, "select orgs")
	}
	for _, op := range obs.ops {
		if op == "" || len(op) > 64 {
			t.Errorf("operation %q: want a short verb and table", op)
		}
	}
}

func TestObserversCombinesInOrder(t *testing.T) {
	if store.Observers(nil, nil) != nil {
		t.Fatal("Observers of nothing: want nil")
	}
	var got []string
	mk := func(name string) store.Observer {
		return observerFunc(func(ctx context.Context, op string) (context.Context, func(error)) {
			got = append(got, "start "+name)
			return ctx, func(err error) { got = append(got, "done "+name+" "+err.Error()) }
		})
	}
	_, done := store.Observers(mk("a"), nil, mk("b")).Start(context.Background(), "select t")
	done(errors.New("x"))
	want := []string{"start a", "start b", "done b x", "done a x"}
	if !slices.Equal(got, want) {
		t.Fatalf("calls %q, want %q", got, want)
	}
}

type observerFunc func(ctx context.Context, op string) (context.Context, func(error))

func (f observerFunc) Start(ctx context.Context, op string) (context.Context, func(error)) {
	return f(ctx, op)
}
