package pgtest

import (
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { os.Exit(Run(m)) }

// TestShared: every caller in the process gets the one cluster, and each
// database taken from it is usable and its own.
func TestShared(t *testing.T) {
	a, b := Shared(t), Shared(t)
	if a != b {
		t.Fatal("two calls of Shared gave two clusters")
	}
	dsn1, dsn2 := a.NewDatabase(t), b.NewDatabase(t)
	if dsn1 == dsn2 {
		t.Fatalf("two databases with one DSN %s", dsn1)
	}
	conn, err := pgx.Connect(t.Context(), dsn1)
	if err != nil {
		t.Fatalf("connecting to a database of the shared cluster: %v", err)
	}
	defer conn.Close(t.Context())
	var one int
	if err := conn.QueryRow(t.Context(), `SELECT 1`).Scan(&one); err != nil || one != 1 {
		t.Fatalf("SELECT 1 = %d, %v", one, err)
	}
}
