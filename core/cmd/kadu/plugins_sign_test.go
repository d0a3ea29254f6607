package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kobana/kadu/core/plugin/bundlesig"
	"github.com/kobana/kadu/sdk/go/kadu/kadutest"
)

// TestPluginsKeygenAndSign is the publisher's round trip: create a key
// pair, sign a real bundle, and check that the signature verifies with the
// public key for the bundle's manifest name and version, and for nothing
// else.
func TestPluginsKeygenAndSign(t *testing.T) {
	dir := t.TempDir()
	prefix := filepath.Join(dir, "acme-2026")
	out, _, err := execute(t, &fake{}, "plugins", "keygen", "--out", prefix)
	if err != nil {
		t.Fatalf("kadu plugins keygen: %v\n%s", err, out)
	}
	secret, err := os.ReadFile(prefix + ".key")
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(prefix + ".key"); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("secret key file mode = %v, %v; want 0600", fi.Mode().Perm(), err)
	}
	sk, err := bundlesig.ParseSecretKey(secret)
	if err != nil {
		t.Fatal(err)
	}
	secretLine := strings.Split(string(secret), "\n")[1]
	if strings.Contains(out, secretLine) || strings.Contains(out, secretLine[:40]) {
		t.Fatal("keygen printed the secret key")
	}
	pubFile, err := os.ReadFile(prefix + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	pub, err := bundlesig.ParsePublicKey(string(pubFile))
	if err != nil || !pub.Equal(sk.Public()) {
		t.Fatalf("the .pub file holds %v, %v; want the secret key's public half", pub, err)
	}
	// The snippet to paste into the server's configuration.
	if want := "plugins:\n  trusted_keys:\n    acme-2026:\n      public_key: " + pub.String() + "\n"; !strings.Contains(out, want) {
		t.Errorf("keygen output lacks the configuration snippet %q:\n%s", want, out)
	}
	if _, _, err := execute(t, &fake{}, "plugins", "keygen", "--out", prefix); err == nil || !strings.Contains(err.Error(), "acme-2026.key exists") {
		t.Errorf("keygen over an existing key = %v; want a refusal naming the file", err)
	}

	built := kadutest.BuildWasm(t, "testdata/overreach")
	wasm, err := os.ReadFile(built)
	if err != nil {
		t.Fatal(err)
	}
	bundle := filepath.Join(dir, "overreach.wasm")
	if err := os.WriteFile(bundle, wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err = execute(t, &fake{}, "plugins", "sign", bundle, "--key", prefix+".key")
	if err != nil {
		t.Fatalf("kadu plugins sign: %v\n%s", err, out)
	}
	sig, err := os.ReadFile(bundle + ".sig")
	if err != nil {
		t.Fatalf("no signature next to the bundle: %v", err)
	}
	ring, err := bundlesig.NewKeyring(map[string]bundlesig.PublicKey{"acme-2026": pub})
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(wasm)
	v, err := ring.Verify(sig, wasm, hex.EncodeToString(sum[:]))
	if err != nil {
		t.Fatalf("the signature kadu plugins sign wrote does not verify: %v", err)
	}
	if v.KeyName != "acme-2026" || v.Statement.Name != "overreach" || v.Check("overreach", v.Statement.Version) != nil {
		t.Errorf("verified %+v; want signed by acme-2026 for the overreach bundle", v)
	}
	if !strings.Contains(out, "signed overreach@"+v.Statement.Version) {
		t.Errorf("sign output %q does not name what it signed", out)
	}
	if err := v.Check("overreach", "99.0.0"); !errors.Is(err, bundlesig.ErrMismatch) {
		t.Errorf("the signature is accepted for another version: %v", err)
	}
}

// TestPluginsSignErrors: each mistake names the flag or file to fix.
func TestPluginsSignErrors(t *testing.T) {
	dir := t.TempDir()
	prefix := filepath.Join(dir, "k")
	if _, _, err := execute(t, &fake{}, "plugins", "keygen", "--out", prefix); err != nil {
		t.Fatal(err)
	}
	notWasm := filepath.Join(dir, "not.wasm")
	if err := os.WriteFile(notWasm, []byte("not wasm"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"no key", []string{notWasm}, "--key: required"},
		{"missing key file", []string{notWasm, "--key", filepath.Join(dir, "nope.key")}, "--key: open"},
		{"public key given", []string{notWasm, "--key", prefix + ".pub"}, "--key " + prefix + ".pub: secret key"},
		{"missing bundle", []string{filepath.Join(dir, "nope.wasm"), "--key", prefix + ".key"}, "bundle: open"},
		{"not a bundle", []string{notWasm, "--key", prefix + ".key"}, notWasm + " is not a valid bundle, not signing it"},
	} {
		_, _, err := execute(t, &fake{}, append([]string{"plugins", "sign"}, tt.args...)...)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: kadu plugins sign error = %v; want %q", tt.name, err, tt.want)
		}
	}
	if _, err := os.Stat(notWasm + ".sig"); err == nil {
		t.Error("a signature was written for a file that is not a bundle")
	}
}

// TestPluginsListChecksSignatures lists a signed bundle under a
// configuration that requires signatures: ok while the key is trusted,
// refused (and the command fails) when it is not.
func TestPluginsListChecksSignatures(t *testing.T) {
	dir := t.TempDir()
	prefix := filepath.Join(dir, "acme")
	if _, _, err := execute(t, &fake{}, "plugins", "keygen", "--out", prefix); err != nil {
		t.Fatal(err)
	}
	pubFile, err := os.ReadFile(prefix + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	pub, err := bundlesig.ParsePublicKey(string(pubFile))
	if err != nil {
		t.Fatal(err)
	}
	other, err := bundlesig.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	wasm := filepath.Join(dir, "tasks.wasm")
	copyFile(t, kadutest.BuildWasm(t, "../../../plugins/tasks"), wasm)
	if _, _, err := execute(t, &fake{}, "plugins", "sign", wasm, "--key", prefix+".key"); err != nil {
		t.Fatal(err)
	}
	list := func(key bundlesig.PublicKey) (string, error) {
		cfg := writeConfig(t, "data_dir: "+t.TempDir()+`
plugins:
  require_signature: true
  trusted_keys:
    acme:
      public_key: `+key.String()+`
  bundles:
    tasks:
      enabled: true
      path: `+wasm+`
      sha256: `+sha256File(t, wasm)+`
    executions: {enabled: false}
    files: {enabled: false}
    webhooks: {enabled: false}
`)
		out, _, err := execute(t, &fake{}, "plugins", "list", "--config", cfg)
		return out, err
	}
	if out, err := list(pub); err != nil || !regexp.MustCompile(`(?m)^tasks +ok `).MatchString(out) {
		t.Errorf("kadu plugins list with the signer trusted = %v:\n%s", err, out)
	}
	out, err := list(other.Public())
	if err == nil || !strings.Contains(out, "refused: signature file "+wasm+".sig refused: signed by an untrusted key") {
		t.Errorf("kadu plugins list with another key trusted = %v; want the bundle refused:\n%s", err, out)
	}
}
