package app

import (
	"os"
	"testing"

	"github.com/kobana/kadu/core/store/pgtest"
)

// TestMain stops the PostgreSQL cluster the tests of this package share
// (pgtest.Shared) once they are done.
func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }
