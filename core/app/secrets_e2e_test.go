package app

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kobana/kadu/core/config"
)

// TestWebhookSecretsAtRest runs a real server on each database and reads
// its tables the way someone with a copy of the database would: neither
// the webhooks table nor the idempotency records of the create and rotate
// calls hold a signing secret, yet a replay of the create answers the
// secret (it is shown once, and a replay returns the same answer), and deliveries are signed with the real
// secrets (both of them during the rotation overlap). On SQLite the files
// the server made in its (pre-existing) data directory are the owner's
// only.
func TestWebhookSecretsAtRest(t *testing.T) {
	for _, driver := range []string{config.DriverSQLite, config.DriverPostgres} {
		t.Run(driver, func(t *testing.T) {
			srv := startServerWith(t, false, func(c *config.Config) {
				useDriver(t, c, driver)
				c.Webhooks.AllowHosts = []string{"127.0.0.1"}
			})
			token, err := MintDevToken(srv.cfg, TokenOptions{OrgID: "org_secrets_" + driver, Role: "admin"})
			if err != nil {
				t.Fatal(err)
			}
			c := restClient{t: t, base: srv.baseURL, token: token}
			rcv := newHookReceiver(t)

			create := `{"url":"` + rcv.url + `","event_codes":["execution.succeeded"],"idempotency_key":"hook-1"}`
			status, _, created := c.do("POST", "/webhooks", create)
			secret, _ := created["secret"].(string)
			if status != 201 || !strings.HasPrefix(secret, "whsec_") {
				t.Fatalf("create: %d %v", status, created)
			}
			status, h, again := c.do("POST", "/webhooks", create)
			if status != 201 || h.Get("Idempotent-Replayed") != "true" || again["secret"] != secret {
				t.Fatalf("replayed create: %d replayed=%q secret equal %v; want the first answer, secret included",
					status, h.Get("Idempotent-Replayed"), again["secret"] == secret)
			}
			id := created["id"].(string)
			status, _, rotated := c.do("POST", "/webhooks/"+id+"/rotate_secret", `{"idempotency_key":"rot-1"}`)
			newSecret, _ := rotated["secret"].(string)
			if status != 200 || !strings.HasPrefix(newSecret, "whsec_") || newSecret == secret {
				t.Fatalf("rotate: %d %v", status, rotated)
			}

			// What the database holds.
			db := srv.app.backend.db.Writer()
			var dump []string
			for _, q := range []string{
				`SELECT secret FROM webhooks`,
				`SELECT COALESCE(previous_secret, '') FROM webhooks`,
				`SELECT COALESCE(response_body, '') FROM idempotency_keys`,
			} {
				rows, err := db.QueryContext(context.Background(), q)
				if err != nil {
					t.Fatal(err)
				}
				for rows.Next() {
					var v []byte
					if err := rows.Scan(&v); err != nil {
						t.Fatal(err)
					}
					dump = append(dump, string(v))
				}
				rows.Close()
			}
			if len(dump) < 4 {
				t.Fatalf("read %d values from the tables; want the secrets and the two idempotency records", len(dump))
			}
			for _, v := range dump {
				for _, s := range []string{secret, newSecret, strings.TrimPrefix(secret, "whsec_"), strings.TrimPrefix(newSecret, "whsec_")} {
					if strings.Contains(v, s) {
						t.Fatalf("the database holds a webhook secret in clear: %.80q…", v)
					}
				}
			}

			// Deliveries are still signed with the real secrets.
			taskID, example := c.findTask("Resumo de extrato")
			body, _ := json.Marshal(map[string]any{"input": example})
			if status, _, exe := c.do("POST", "/tasks/"+taskID+"/run", string(body)); status != 202 {
				t.Fatalf("run: %d %v", status, exe)
			}
			got := rcv.next(t)
			if !got.signedBy(t, newSecret) || !got.signedBy(t, secret) {
				t.Fatalf("delivery signature %q; want the new secret's and, during the overlap, the old one's", got.header.Get("webhook-signature"))
			}

			if driver != config.DriverSQLite {
				return
			}
			var files []string
			_ = filepath.WalkDir(srv.cfg.DataDir, func(p string, d os.DirEntry, err error) error {
				if err == nil && d.Type().IsRegular() && !strings.Contains(p, string(filepath.Separator)+"blobs"+string(filepath.Separator)) {
					files = append(files, p)
				}
				return nil
			})
			for _, want := range []string{"kadu.db", "kadu.db-wal", "kadu.db-shm"} {
				found := false
				for _, f := range files {
					found = found || filepath.Base(f) == want
				}
				if !found {
					t.Errorf("%s not found in the data directory (%v)", want, files)
				}
			}
			for _, f := range files {
				fi, err := os.Stat(f)
				if err != nil {
					t.Fatal(err)
				}
				if fi.Mode().Perm()&0o077 != 0 {
					t.Errorf("%s: mode %v; want no access for group or others", f, fi.Mode().Perm())
				}
			}
		})
	}
}
