package config

import (
	"strings"
	"testing"
)

// PostgreSQL is the store for several replicas, so what each replica would
// keep to itself is refused there unless single_node says there is one.
func TestValidateReplicaRules(t *testing.T) {
	t.Parallel()
	postgres := func(c *Config) {
		c.Store = Store{Driver: DriverPostgres, DSN: "postgres://kadu@db.example.com/kadu"}
	}
	s3 := func(c *Config) { c.Files.URL = "s3://kadu-files?region=sa-east-1" }
	tests := []struct {
		name     string
		mutate   func(c *Config)
		wantKeys []string
		wantMsgs []string
	}{
		{name: "sqlite with local blobs and the dev issuer", mutate: func(c *Config) {}},
		{name: "postgres, S3 and an external issuer", mutate: func(c *Config) { production(c); postgres(c); s3(c) }},
		{name: "postgres with local blobs", mutate: func(c *Config) { production(c); postgres(c) },
			wantKeys: []string{"files.url"}, wantMsgs: []string{"set files.url to a shared bucket", "single_node: true"}},
		{name: "postgres with a file bucket", mutate: func(c *Config) {
			production(c)
			postgres(c)
			c.Files.URL = "file:///srv/blobs"
		}, wantKeys: []string{"files.url"}, wantMsgs: []string{"file:///srv/blobs"}},
		{name: "postgres with the dev issuer", mutate: func(c *Config) { postgres(c); s3(c) },
			wantKeys: []string{"auth.issuer"}, wantMsgs: []string{"set auth.issuer to your OIDC issuer", "single_node: true"}},
		{name: "postgres with both", mutate: postgres,
			wantKeys: []string{"files.url", "auth.issuer"}},
		{name: "single_node lifts both", mutate: func(c *Config) { postgres(c); c.SingleNode = true }},
		{name: "single_node on sqlite changes nothing", mutate: func(c *Config) { c.SingleNode = true }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := validBase()
			tt.mutate(&c)
			err := c.Validate()
			got := keyErrors(t, err)
			if len(got) != len(tt.wantKeys) {
				t.Fatalf("Validate() = %v, want errors for %q", err, tt.wantKeys)
			}
			for i, ke := range got {
				if ke.Key != tt.wantKeys[i] {
					t.Errorf("error %d names %q, want %q: %v", i, ke.Key, tt.wantKeys[i], ke)
				}
			}
			for _, msg := range tt.wantMsgs {
				if !strings.Contains(err.Error(), msg) {
					t.Errorf("Validate() = %q, want it to say %q", err, msg)
				}
			}
		})
	}
}

// single_node is read from the file and from KADU_SINGLE_NODE.
func TestLoadSingleNode(t *testing.T) {
	t.Parallel()
	env := []string{"KADU_STORE__DRIVER=postgres", "KADU_STORE__DSN=postgres://db/kadu",
		"KADU_API__SIGNING_KEY=0123456789abcdef0123456789abcdef", "KADU_DATA_DIR=/var/lib/kadu"}
	if _, err := load(missing(t), false, nil, environ(env...)); err == nil || !strings.Contains(err.Error(), "single_node: true") {
		t.Fatalf("postgres with local blobs and the dev issuer loaded: %v", err)
	}
	c, err := load(missing(t), false, nil, environ(append(env, "KADU_SINGLE_NODE=true")...))
	if err != nil {
		t.Fatalf("with KADU_SINGLE_NODE=true: %v", err)
	}
	if !c.SingleNode {
		t.Fatal("KADU_SINGLE_NODE=true did not set single_node")
	}
}
