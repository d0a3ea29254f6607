package config

import (
	"net/url"
	"path/filepath"
	"strings"
)

// Store drivers (store.driver).
const (
	DriverSQLite   = "sqlite"
	DriverPostgres = "postgres"
)

var allowedDrivers = []string{DriverSQLite, DriverPostgres}

// Store selects the database behind the Kadu API, the queue and the shared
// limits (docs/operations.md#several-replicas-behind-a-load-balancer).
type Store struct {
	// Driver is sqlite (default; one process, no replicas) or postgres
	// (required for several replicas).
	Driver string `koanf:"driver"`

	// DSN is the connection string. For postgres a URL,
	// postgres://user:password@host:5432/dbname?sslmode=verify-full (a socket
	// directory may replace the host: postgres:///kadu?host=/run/postgresql);
	// required. For sqlite a file path or a file: URI; default empty, which
	// means <data_dir>/kadu.db (see Config.StoreDSN); Load makes a relative
	// path absolute, against the configuration file's directory when the
	// file set it, else the working directory. It may hold a password: it
	// prints redacted (see DSN).
	DSN DSN `koanf:"dsn"`
}

// sqliteFile is the database file under data_dir used when store.driver is
// sqlite and store.dsn is empty.
const sqliteFile = "kadu.db"

// StoreDSN is the connection string to open: store.dsn, or for sqlite with
// store.dsn empty <data_dir>/kadu.db. It may hold a password; log
// RedactDSN(StoreDSN()), never the value itself.
func (c *Config) StoreDSN() string {
	if c.Store.DSN != "" {
		return c.Store.DSN.Reveal()
	}
	if c.Store.Driver == DriverSQLite && c.DataDir != "" {
		return filepath.Join(c.DataDir, sqliteFile)
	}
	return ""
}

// normalize makes a relative SQLite path absolute, against dir (see
// absPath), as data_dir.
func (s *Store) normalize(dir string) {
	dsn := string(s.DSN)
	if s.Driver != DriverSQLite || dsn == "" || dsn == ":memory:" || strings.HasPrefix(dsn, "file:") {
		return
	}
	path, query, hasQuery := strings.Cut(dsn, "?")
	if path = absPath(dir, path); hasQuery {
		path += "?" + query
	}
	s.DSN = DSN(path)
}

// store checks store.driver and store.dsn. Messages show the DSN redacted.
func (p *problems) store(s *Store) {
	const key = "store.dsn"
	p.oneOf("store.driver", s.Driver, allowedDrivers)
	dsn := s.DSN.Reveal()
	switch s.Driver {
	case DriverPostgres:
		p.postgresDSN(key, dsn)
	case DriverSQLite:
		switch {
		case isPostgresURL(dsn):
			p.add(key, "%q is a PostgreSQL URL, but store.driver is sqlite; set store.driver: postgres", RedactDSN(dsn))
		case dsn == ":memory:":
			p.add(key, "an in-memory database is not supported: the store opens a writer and a pool of readers, "+
				"each of which would get its own empty database; give a file path (default <data_dir>/%s)", sqliteFile)
		}
	}
}

const postgresDSNExample = "postgres://user:password@host:5432/dbname, or postgres:///dbname?host=/run/postgresql for a socket directory"

func (p *problems) postgresDSN(key, dsn string) {
	if dsn == "" {
		p.add(key, "is required when store.driver is postgres (want %s)", postgresDSNExample)
		return
	}
	// The raw value and url.Parse's error (which quotes it) are never shown:
	// they may hold the password.
	u, err := url.Parse(dsn)
	switch {
	case !isPostgresURL(dsn):
		p.add(key, "is not a postgres:// URL (want %s; key=value connection strings are not accepted)", postgresDSNExample)
	case err != nil:
		p.add(key, "does not parse as a URL (the port must be a number, and reserved characters in the user name "+
			"or password must be percent-encoded, e.g. \"@\" as %%40)")
	case u.Hostname() == "" && u.Query().Get("host") == "":
		p.add(key, "%q has no host and no socket directory (want %s)", RedactDSN(dsn), postgresDSNExample)
	}
}

func isPostgresURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}
