package main

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/kobana/kadu/core/app"
)

func TestMigrateCallsApp(t *testing.T) {
	t.Parallel()
	f := &fake{}
	out, _, err := execute(t, f, "migrate", "--config", emptyConfig(t))
	if err != nil || f.migrateCalls != 1 || !strings.HasPrefix(out, "migrated sqlite database ") {
		t.Fatalf("migrate: out %q, err %v, calls %d", out, err, f.migrateCalls)
	}
}

// TestMigrateForReal migrates a fresh SQLite database twice: the second
// run finds nothing to do and succeeds.
func TestMigrateForReal(t *testing.T) {
	real := deps{version: "test", run: app.Run, mint: app.MintDevToken, migrate: app.Migrate}
	cfg := emptyConfig(t)
	for range 2 {
		root := newRootCmd(real)
		root.SetOut(io.Discard)
		root.SetErr(io.Discard)
		root.SetArgs([]string{"migrate", "--config", cfg})
		if err := root.ExecuteContext(context.Background()); err != nil {
			t.Fatalf("migrate: %v", err)
		}
	}
}
