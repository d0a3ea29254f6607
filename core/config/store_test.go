package config

import (
	"os"
	"path/filepath"
	"testing"
)

func TestStoreDSN(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		store Store
		want  string
	}{
		{"sqlite default", Store{Driver: DriverSQLite}, "/var/lib/kadu/kadu.db"},
		{"sqlite path", Store{Driver: DriverSQLite, DSN: "/srv/k.db"}, "/srv/k.db"},
		{"postgres", Store{Driver: DriverPostgres, DSN: "postgres://u:pw@db/kadu"}, "postgres://u:pw@db/kadu"},
		{"postgres without dsn", Store{Driver: DriverPostgres}, ""},
	}
	for _, tt := range tests {
		c := Config{DataDir: "/var/lib/kadu", Store: tt.store}
		if got := c.StoreDSN(); got != tt.want {
			t.Errorf("%s: StoreDSN() = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// Load resolves a relative SQLite path as it does data_dir, and leaves URIs
// and PostgreSQL URLs alone.
func TestLoadStoreDSN(t *testing.T) {
	t.Parallel()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		env  []string
		want string
	}{
		{[]string{"KADU_DATA_DIR=/srv/kadu"}, "/srv/kadu/kadu.db"},
		{[]string{"KADU_STORE__DSN=db/k.db"}, filepath.Join(wd, "db", "k.db")},
		{[]string{"KADU_STORE__DSN=db/k.db?_pragma=foreign_keys(1)"}, filepath.Join(wd, "db", "k.db") + "?_pragma=foreign_keys(1)"},
		{[]string{"KADU_STORE__DSN=file:k.db?mode=rwc"}, "file:k.db?mode=rwc"},
		{[]string{"KADU_STORE__DRIVER=postgres", "KADU_STORE__DSN=postgres://db/k", "KADU_API__SIGNING_KEY=0123456789abcdef0123456789abcdef", "KADU_SINGLE_NODE=true"}, "postgres://db/k"},
	}
	for _, tt := range tests {
		c, err := load(missing(t), false, nil, environ(tt.env...))
		if err != nil {
			t.Fatalf("%q: %v", tt.env, err)
		}
		if got := c.StoreDSN(); got != tt.want {
			t.Errorf("%q: StoreDSN() = %q, want %q", tt.env, got, tt.want)
		}
	}
}
