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
// Typical use, one cluster per package run and one database per test:
//
//	func TestPostgres(t *testing.T) {
//		cluster := pgtest.New(t) // stopped and removed by t.Cleanup
//		storetest.Run(t, func(t *testing.T) *store.DB {
//			db, err := store.Open(ctx, store.Options{Driver: "postgres", DSN: cluster.NewDatabase(t)})
//			…
//		})
//	}
//
// or Start in TestMain and Stop after m.Run.
package pgtest
