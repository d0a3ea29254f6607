// Package pgtest starts a throwaway PostgreSQL server for tests: a fresh
// cluster in a temporary directory, on a free loopback port, with durability
// switched off (fsync, synchronous_commit, full_page_writes), and a new
// database per test.
//
// It owns: finding the server binaries (PGTEST_BINDIR, then
// /usr/lib/postgresql/15/bin, then pg_config --bindir, then PATH), running
// initdb and postgres as the postgres user when the test runs as root
// (initdb refuses root), waiting (bounded) until the server accepts
// connections, and removing everything at Stop. The postmaster is tied to
// the test process (Linux: parent-death signal), so a test binary killed by
// -timeout or a signal does not leave a server behind; its directory is
// removed by the next Start.
//
// PGTEST_DSN (a postgres:// URL of a role that may CREATE DATABASE) makes
// Start use that server instead of starting one. No KADU_* variable is read.
//
// It must not: be imported by production code, or skip when the binaries
// are missing (New fails the test with what to install; CI has them).
//
// Typical use: one cluster per test process (Shared, stopped by Run from
// TestMain), one database per test:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }
//
//	func TestPostgres(t *testing.T) {
//		dsn := pgtest.Shared(t).NewDatabase(t) // dropped by t.Cleanup
//		…
//	}
//
// and one cluster for a whole go test run: the withcluster command starts
// one and runs go test with PGTEST_DSN naming it (go tool task test does).
// New starts a cluster of the test's own, for a test that needs one.
package pgtest
