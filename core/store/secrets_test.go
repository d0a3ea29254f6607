package store_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kobana/kadu/core/store"
	"github.com/kobana/kadu/core/store/pgtest"
)

// TestSecretsAtRest checks, on both databases, what someone who reads the
// database file or a backup sees of webhook secrets and idempotency
// records, and that key rotation keeps everything readable: rows in clear
// from before are encrypted at start, the raw columns never hold a secret,
// a ciphertext moved to another row does not open, and a store restarted
// with a new key (the old one kept as previous) re-encrypts and still reads.
func TestSecretsAtRest(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		testSecretsAtRest(t, store.DriverSQLite, filepath.Join(t.TempDir(), "kadu.db"))
	})
	t.Run("postgres", func(t *testing.T) {
		testSecretsAtRest(t, store.DriverPostgres, pgtest.Shared(t).NewDatabase(t))
	})
}

func testSecretsAtRest(t *testing.T, driver, dsn string) {
	ctx := context.Background()
	oldMaster := []byte("old-signing-key-0123456789abcdef-0123")
	newMaster := []byte("new-signing-key-0123456789abcdef-4567")
	ring := func(masters ...[]byte) *store.SecretKeys {
		k, err := store.NewSecretKeys(masters...)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	open := func(keys *store.SecretKeys) (*store.DB, error) {
		return store.Open(ctx, store.Options{Driver: driver, DSN: dsn, SecretKeys: keys})
	}
	mustOpen := func(keys *store.SecretKeys) *store.DB {
		t.Helper()
		db, err := open(keys)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		return db
	}
	raw := func(db *store.DB, query string, args ...any) string {
		t.Helper()
		var v sql.NullString
		if err := db.Writer().QueryRowContext(ctx, query, args...).Scan(&v); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		return v.String
	}
	const (
		legacySecret = "whsec_bGVnYWN5LXNlY3JldC0wMTIzNDU2Nzg5YWJjZGVm"
		secretB      = "whsec_c2Vjb25kLXNlY3JldC0wMTIzNDU2Nzg5YWJjZGVm"
		rotatedB     = "whsec_cm90YXRlZC1zZWNyZXQtMDEyMzQ1Njc4OWFiY2Rl"
		org          = "org_secrets"
	)

	// Before encryption: a row in clear.
	db := mustOpen(nil)
	legacy, err := db.CreateWebhook(ctx, org, store.Webhook{URL: "https://a.example.com/h", EventCodes: []string{"execution.succeeded"}, Secret: legacySecret}, -1)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()

	// With keys: the old row is encrypted at start, new rows are written so.
	oldKeys := ring(oldMaster)
	db = mustOpen(oldKeys)
	b, err := db.CreateWebhook(ctx, org, store.Webhook{URL: "https://b.example.com/h", EventCodes: []string{"execution.succeeded"}, Secret: secretB}, -1)
	if err != nil {
		t.Fatal(err)
	}
	until := time.Now().Add(time.Hour)
	if _, err := db.RotateWebhookSecret(ctx, org, b.ID, rotatedB, &until); err != nil {
		t.Fatal(err)
	}
	for _, w := range []struct{ id, column string }{{legacy.ID, "secret"}, {b.ID, "secret"}, {b.ID, "previous_secret"}} {
		v := raw(db, `SELECT `+w.column+` FROM webhooks WHERE id = $1`, w.id)
		if !strings.HasPrefix(v, "v1:"+oldKeys.CurrentID()+":") || strings.Contains(v, "whsec_") {
			t.Fatalf("raw %s of %s = %q; want v1:%s:… and no secret", w.column, w.id, v, oldKeys.CurrentID())
		}
	}
	got, err := db.GetWebhook(ctx, org, b.ID)
	if err != nil {
		t.Fatal(err)
	}
	if s := got.Secrets(time.Now()); len(s) != 2 || s[0] != rotatedB || s[1] != secretB {
		t.Fatalf("secrets after rotation = %v; want the rotated one, then the previous one", s)
	}
	if got, err := db.GetWebhook(ctx, org, legacy.ID); err != nil || got.Secret != legacySecret {
		t.Fatalf("legacy webhook = %v, %v; want its secret back", got.Secret != "", err)
	}

	// The idempotency record of a create answers the secret to a replay,
	// and keeps it encrypted.
	body := []byte(`{"id":"` + b.ID + `","secret":"` + rotatedB + `"}`)
	if _, err := db.BeginIdempotent(ctx, org, "create-1", "POST", "/api/v1/webhooks", "d1", time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := db.CompleteIdempotent(ctx, org, "create-1", 201, body); err != nil {
		t.Fatal(err)
	}
	if v := raw(db, `SELECT response_body FROM idempotency_keys WHERE org_id = $1 AND key = $2`, org, "create-1"); strings.Contains(v, "whsec_") || !strings.HasPrefix(v, "v1:") {
		t.Fatalf("raw idempotency body = %q; want it encrypted", v)
	}
	rec, err := db.BeginIdempotent(ctx, org, "create-1", "POST", "/api/v1/webhooks", "d1", time.Now())
	if err != nil || string(rec.ResponseBody) != string(body) {
		t.Fatalf("replay = %q, %v; want the stored body", rec.ResponseBody, err)
	}

	// A ciphertext copied into another row does not open.
	stolen := raw(db, `SELECT secret FROM webhooks WHERE id = $1`, legacy.ID)
	saved := raw(db, `SELECT secret FROM webhooks WHERE id = $1`, b.ID)
	if _, err := db.Writer().ExecContext(ctx, `UPDATE webhooks SET secret = $1 WHERE id = $2`, stolen, b.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.GetWebhook(ctx, org, b.ID); err == nil || !strings.Contains(err.Error(), "does not open") {
		t.Fatalf("webhook with another row's ciphertext: %v; want an error", err)
	}
	if _, err := db.Writer().ExecContext(ctx, `UPDATE webhooks SET secret = $1 WHERE id = $2`, saved, b.ID); err != nil {
		t.Fatal(err)
	}
	db.Close()

	// Rotation of the master key: the old one kept as previous.
	newKeys := ring(newMaster, oldMaster)
	db = mustOpen(newKeys)
	for _, w := range []struct{ id, column string }{{legacy.ID, "secret"}, {b.ID, "secret"}, {b.ID, "previous_secret"}} {
		if v := raw(db, `SELECT `+w.column+` FROM webhooks WHERE id = $1`, w.id); !strings.HasPrefix(v, "v1:"+newKeys.CurrentID()+":") {
			t.Fatalf("after rotation, raw %s of %s = %q; want it under the new key %s", w.column, w.id, v, newKeys.CurrentID())
		}
	}
	if rec, err := db.BeginIdempotent(ctx, org, "create-1", "POST", "/api/v1/webhooks", "d1", time.Now()); err != nil || string(rec.ResponseBody) != string(body) {
		t.Fatalf("replay under the old key with it in the ring = %q, %v", rec.ResponseBody, err)
	}
	db.Close()

	// The old key dropped: webhooks still open (they were re-encrypted).
	db = mustOpen(ring(newMaster))
	if got, err := db.GetWebhook(ctx, org, b.ID); err != nil || got.Secret != rotatedB || got.PreviousSecret != secretB {
		t.Fatalf("with the new key only: %v; want both secrets back", err)
	}
	db.Close()

	// A key that never encrypted anything: refused at start, with a reason.
	db, err = open(ring([]byte("unrelated-key-0123456789abcdef-0123456")))
	if err == nil {
		db.Close()
		t.Fatal("Open with a key ring that cannot read the secrets succeeded")
	}
	if !strings.Contains(err.Error(), "not among the configured keys") {
		t.Fatalf("Open with the wrong key: %v; want it to say the key is missing", err)
	}
}

// TestNewSecretKeys refuses short master keys.
func TestNewSecretKeys(t *testing.T) {
	if _, err := store.NewSecretKeys([]byte("short")); err == nil {
		t.Fatal("a 5-byte master key was accepted")
	}
	if _, err := store.NewSecretKeys(); err == nil {
		t.Fatal("no master key was accepted")
	}
	a, _ := store.NewSecretKeys([]byte("0123456789abcdef0123456789abcdef"))
	b, _ := store.NewSecretKeys([]byte("0123456789abcdef0123456789abcdeF"))
	if a.CurrentID() == b.CurrentID() || strings.Contains(a.CurrentID(), "0123") {
		t.Fatalf("key ids %s, %s: want distinct ids that do not reveal the key", a.CurrentID(), b.CurrentID())
	}
}
