package pgtest

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
)

// The shared cluster: one server per test process, started by the first
// test that asks for it, each test on a database of its own. Starting a
// cluster (initdb, then postgres) costs one to three seconds of two cores;
// a package whose every test started its own spent minutes on it. With
// PGTEST_DSN set (as the withcluster command does for a whole go test run)
// no process starts one.

// shared is this process's cluster. It is package state on purpose: the
// point is that tests which know nothing of each other share it.
var shared struct {
	mu      sync.Mutex
	c       *Cluster
	err     error
	stopped bool
}

// Shared returns the cluster of this test process, starting it on first
// use (or connecting to PGTEST_DSN), and fails tb with what went wrong if
// it cannot. Tests take databases from it with NewDatabase; none may stop
// it. Call Run from TestMain so that it is stopped when the tests end; a
// process that exits without stopping it takes the server with it (the
// parent-death signal), and the next Start removes its directory.
func Shared(tb testing.TB) *Cluster {
	tb.Helper()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.stopped {
		tb.Fatal("pgtest: Shared after Run stopped the shared cluster")
	}
	if shared.c == nil && shared.err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), initdbTimeout+readyTimeout)
		defer cancel()
		shared.c, shared.err = Start(ctx)
	}
	if shared.err != nil {
		tb.Fatalf("pgtest: starting the shared PostgreSQL cluster: %v", shared.err)
	}
	return shared.c
}

// Run runs the tests of m, stops the shared cluster if one was started,
// and returns the exit code for os.Exit. Use it in TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }
func Run(m *testing.M) int {
	code := m.Run()
	if err := stopShared(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

func stopShared() error {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	shared.stopped = true
	if shared.c == nil {
		return nil
	}
	return shared.c.Stop()
}
