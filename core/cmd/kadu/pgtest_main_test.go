package main

import (
	"fmt"
	"os"
	"testing"

	"github.com/kobana/kadu/core/store/pgtest"
)

// TestMain gives the tests a directory for the binaries they build (see
// buildKadu), removed with it, and stops the PostgreSQL cluster they share
// (pgtest.Shared) once they are done.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "kadu-cmd-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	builds.dir = dir
	code := pgtest.Run(m)
	_ = os.RemoveAll(dir)
	os.Exit(code)
}
