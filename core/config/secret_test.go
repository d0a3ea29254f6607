package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func TestRedactDSN(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":                      "",
		"/var/lib/kadu/kadu.db": "/var/lib/kadu/kadu.db",
		"file:/srv/k.db?_pragma=busy_timeout(5000)":                     "file:/srv/k.db?_pragma=busy_timeout(5000)",
		"postgres://db.example.com:5432/kadu?sslmode=verify-full":       "postgres://db.example.com:5432/kadu?sslmode=verify-full",
		"postgres://kadu@db/kadu":                                       "postgres://kadu@db/kadu",
		"postgres://kadu:s3cret@db:5432/kadu?sslmode=require":           "postgres://kadu:xxxxx@db:5432/kadu?sslmode=require",
		"postgresql://kadu:p%40ss%2Fw@db/kadu":                          "postgresql://kadu:xxxxx@db/kadu",
		"postgres://kadu:p@ss@db/kadu":                                  "postgres://kadu:xxxxx@db/kadu",
		"postgres://kadu:@db/kadu":                                      "postgres://kadu:xxxxx@db/kadu",
		"postgres:///kadu?host=/run/pg&password=s3cret&sslmode=disable": "postgres:///kadu?host=/run/pg&password=xxxxx&sslmode=disable",
		"postgres://db/kadu?SSLPassword=s3cret":                         "postgres://db/kadu?SSLPassword=xxxxx",
		"https://agent.example.com/?token=s3cret":                       "https://agent.example.com/?token=xxxxx",
		"postgres://kadu:s3cret@db:port/kadu":                           "postgres://xxxxx",
		"postgres://db:port/kadu?password=s3cret":                       "postgres://xxxxx",
		"http://[::1": "http://[::1",
		"host=db user=kadu password=s3cret dbname=kadu": "host=db user=kadu password=xxxxx dbname=kadu",
		"host=db password = 's3 cr\\'et' dbname=kadu":   "host=db password = xxxxx dbname=kadu",
		"host=db sslpassword=s3cret":                    "host=db sslpassword=xxxxx",
		"kadu:s3cret@tcp(db)/kadu":                      "xxxxx@tcp(db)/kadu",
	} {
		if got := RedactDSN(in); got != want {
			t.Errorf("RedactDSN(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSecretAndDSNPrintRedacted(t *testing.T) {
	t.Parallel()
	tok, dsn := Secret("s3cret-token"), DSN("postgres://kadu:s3cret-pw@db/kadu")
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%d", "%10s"} {
		for _, v := range []any{tok, dsn, &tok, &dsn} {
			if out := fmt.Sprintf(verb, v); strings.Contains(out, "s3cret") {
				t.Errorf("Sprintf(%q, %T) = %q", verb, v, out)
			}
		}
	}
	if got := tok.String(); got != "[redacted]" {
		t.Errorf("Secret.String() = %q", got)
	}
	if got := Secret("").String(); got != "" {
		t.Errorf("empty Secret.String() = %q", got)
	}
	if got := dsn.String(); got != "postgres://kadu:xxxxx@db/kadu" {
		t.Errorf("DSN.String() = %q", got)
	}
	if tok.Reveal() != "s3cret-token" || dsn.Reveal() != "postgres://kadu:s3cret-pw@db/kadu" {
		t.Errorf("Reveal() = %q, %q", tok.Reveal(), dsn.Reveal())
	}
}

// A whole Config printed, logged or marshalled shows neither the store
// password nor the runner token.
func TestConfigNeverShowsSecrets(t *testing.T) {
	t.Parallel()
	c := validBase()
	c.Store = Store{Driver: DriverPostgres, DSN: "postgres://kadu:s3cret-pw@db/kadu?sslpassword=s3cret-ssl"}
	c.Runner.HTTP.Token = "s3cret-token"

	var outs []string
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%d", "%x"} {
		outs = append(outs, fmt.Sprintf(verb, c), fmt.Sprintf(verb, &c))
	}
	j, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	outs = append(outs, string(j))
	var logs bytes.Buffer
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("config", "cfg", c, "store", c.Store, "dsn", c.Store.DSN, "token", c.Runner.HTTP.Token)
	slog.New(slog.NewTextHandler(&logs, nil)).Info("config", "cfg", c, "store", c.Store)
	outs = append(outs, logs.String())
	for _, out := range outs {
		if strings.Contains(out, "s3cret") {
			t.Errorf("a secret is shown: %s", out)
		}
	}
	if !strings.Contains(string(j), "postgres://kadu:xxxxx@db/kadu") {
		t.Errorf("json.Marshal: want the redacted DSN, got %s", j)
	}
}
