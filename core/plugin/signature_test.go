package plugin

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kobana/kadu/core/plugin/bundlesig"
)

// signer signs copies of test bundles: the guests are cached files shared
// by every test, so each signature goes next to a copy in t.TempDir().
type signer struct {
	keys map[string]bundlesig.SecretKey
}

func newSigner(t testing.TB, names ...string) *signer {
	t.Helper()
	s := &signer{keys: map[string]bundlesig.SecretKey{}}
	for _, n := range names {
		k, err := bundlesig.GenerateKey(nil)
		if err != nil {
			t.Fatal(err)
		}
		s.keys[n] = k
	}
	return s
}

// ring trusts the named keys.
func (s *signer) ring(t testing.TB, names ...string) *bundlesig.Keyring {
	t.Helper()
	m := map[string]bundlesig.PublicKey{}
	for _, n := range names {
		m[n] = s.keys[n].Public()
	}
	kr, err := bundlesig.NewKeyring(m)
	if err != nil {
		t.Fatal(err)
	}
	return kr
}

// copyBundle copies cfg's module into dir as name.wasm and points cfg at it.
func copyBundle(t testing.TB, cfg BundleConfig, dir string) BundleConfig {
	t.Helper()
	wasm, err := os.ReadFile(cfg.Path)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Path = filepath.Join(dir, cfg.Name+".wasm")
	if err := os.WriteFile(cfg.Path, wasm, 0o600); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// sign writes cfg.Path's signature by key for name@version.
func (s *signer) sign(t testing.TB, cfg BundleConfig, key, name, version string) {
	t.Helper()
	wasm, err := os.ReadFile(cfg.Path)
	if err != nil {
		t.Fatal(err)
	}
	sig := bundlesig.Sign(s.keys[key], wasm, bundlesig.Statement{Name: name, Version: version, SHA256: strings.ToLower(cfg.SHA256)})
	if err := os.WriteFile(SignatureFile(cfg.Path), sig, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestSignatureAtLoad loads the echo bundle (version 1.0.0) under each
// signature situation an operator meets: a refused bundle is not served,
// and GET /admin/plugins (Status) says why; an accepted one names the
// trusted key that signed it.
func TestSignatureAtLoad(t *testing.T) {
	t.Parallel()
	base := echoV(t, "1.0.0")
	wasm, err := os.ReadFile(base.Path)
	if err != nil {
		t.Fatal(err)
	}
	s := newSigner(t, "partner-2025", "partner-2026", "stranger")
	rotating := s.ring(t, "partner-2025", "partner-2026")
	tests := []struct {
		name     string
		prepare  func(cfg BundleConfig) BundleConfig // writes the .sig, returns the config
		wantErr  string                              // "": loads
		wantSig  string                              // BundleStatus.Signature when loaded
		wantSign string                              // BundleStatus.SignedBy when loaded
	}{
		{name: "signed by a trusted key", prepare: func(c BundleConfig) BundleConfig {
			s.sign(t, c, "partner-2026", "echo", "1.0.0")
			c.Trust = Trust{Keys: rotating, Require: true}
			return c
		}, wantSig: SignatureSigned, wantSign: "partner-2026"},
		{name: "signed by the old key while both are trusted", prepare: func(c BundleConfig) BundleConfig {
			s.sign(t, c, "partner-2025", "echo", "1.0.0")
			c.Trust = Trust{Keys: rotating, Require: true}
			return c
		}, wantSig: SignatureSigned, wantSign: "partner-2025"},
		{name: "unsigned, signature not required", prepare: func(c BundleConfig) BundleConfig {
			c.Trust = Trust{Keys: rotating}
			return c
		}, wantSig: SignatureUnsigned},
		{name: "unsigned, signature required", prepare: func(c BundleConfig) BundleConfig {
			c.Trust = Trust{Keys: rotating, Require: true}
			return c
		}, wantErr: "echo.wasm.sig is missing, and plugins.require_signature is true"},
		{name: "signed by an untrusted key", prepare: func(c BundleConfig) BundleConfig {
			s.sign(t, c, "stranger", "echo", "1.0.0")
			c.Trust = Trust{Keys: rotating, Require: true}
			return c
		}, wantErr: "signed by an untrusted key: key ID " + s.keys["stranger"].ID.String()},
		{name: "an invalid signature is refused even when not required", prepare: func(c BundleConfig) BundleConfig {
			s.sign(t, c, "partner-2026", "echo", "1.0.0")
			sig, _ := os.ReadFile(SignatureFile(c.Path))
			lines := strings.Split(string(sig), "\n")
			lines[1] = lines[1][:20] + flip(lines[1][20:40]) + lines[1][40:]
			os.WriteFile(SignatureFile(c.Path), []byte(strings.Join(lines, "\n")), 0o600)
			c.Trust = Trust{Keys: rotating}
			return c
		}, wantErr: "invalid signature"},
		{name: "signed for another version", prepare: func(c BundleConfig) BundleConfig {
			s.sign(t, c, "partner-2026", "echo", "0.9.0")
			c.Trust = Trust{Keys: rotating, Require: true}
			return c
		}, wantErr: "it signs echo@0.9.0, the module's manifest is echo@1.0.0"},
		{name: "signed for another bundle name", prepare: func(c BundleConfig) BundleConfig {
			s.sign(t, c, "partner-2026", "tasks", "1.0.0")
			c.Trust = Trust{Keys: rotating, Require: true}
			return c
		}, wantErr: "it signs tasks@1.0.0, the module's manifest is echo@1.0.0"},
		{name: "the old key after rotation", prepare: func(c BundleConfig) BundleConfig {
			s.sign(t, c, "partner-2025", "echo", "1.0.0")
			c.Trust = Trust{Keys: s.ring(t, "partner-2026"), Require: true}
			return c
		}, wantErr: "(trusted: partner-2026)"},
		{name: "a malformed signature file", prepare: func(c BundleConfig) BundleConfig {
			os.WriteFile(SignatureFile(c.Path), []byte("not a signature\n"), 0o600)
			c.Trust = Trust{Keys: rotating}
			return c
		}, wantErr: "malformed signature: 1 lines, want 4"},
		{name: "built into the binary: exempt", prepare: func(c BundleConfig) BundleConfig {
			c.Wasm, c.Path = wasm, "embedded:echo.wasm"
			c.Trust = Trust{Keys: rotating, Require: true}
			return c
		}, wantSig: SignatureBuiltIn},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := tt.prepare(copyBundle(t, base, t.TempDir()))
			e := newEnv(t, nil)
			err := e.r.Reload(context.Background(), []BundleConfig{cfg})
			st := e.statusOf(t, "echo")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), `bundle "echo"`) {
					t.Fatalf("Reload error = %v; want one naming bundle \"echo\" and %q", err, tt.wantErr)
				}
				if st.State != StateFailed || !strings.Contains(st.LastError, tt.wantErr) {
					t.Errorf("status = %+v; want failed with last_error %q", st, tt.wantErr)
				}
				if !strings.Contains(e.logs.String(), `"msg":"bundle not loaded"`) {
					t.Errorf("no \"bundle not loaded\" log line:\n%s", e.logs)
				}
				if _, err := e.call(t, "org_a", "echo", `{"text":"x"}`); err == nil {
					t.Error("a call to the refused bundle's tool succeeded")
				}
				return
			}
			if err != nil {
				t.Fatalf("Reload: %v", err)
			}
			if st.State != StateLoaded || st.Signature != tt.wantSig || st.SignedBy != tt.wantSign {
				t.Errorf("status = %+v; want loaded, signature %q signed by %q", st, tt.wantSig, tt.wantSign)
			}
			if tt.wantSign != "" && st.SignerKeyID != s.keys[tt.wantSign].ID.String() {
				t.Errorf("signer_key_id = %q, want %s", st.SignerKeyID, s.keys[tt.wantSign].ID)
			}
			if _, err := e.call(t, "org_a", "echo", `{"text":"x"}`); err != nil {
				t.Errorf("calling the loaded bundle: %v", err)
			}
		})
	}
}

// TestSignatureReload changes only the signature file between reloads: a
// bad one is refused and the loaded version keeps serving; a good one (a
// re-signature by a new key) swaps in.
func TestSignatureReload(t *testing.T) {
	t.Parallel()
	s := newSigner(t, "old", "new", "stranger")
	cfg := copyBundle(t, echoV(t, "1.0.0"), t.TempDir())
	cfg.Trust = Trust{Keys: s.ring(t, "old", "new"), Require: true}
	s.sign(t, cfg, "old", "echo", "1.0.0")
	e := newEnv(t, nil, cfg)
	if st := e.statusOf(t, "echo"); st.SignedBy != "old" {
		t.Fatalf("status = %+v; want signed by old", st)
	}

	s.sign(t, cfg, "stranger", "echo", "1.0.0")
	if err := e.r.Reload(context.Background(), []BundleConfig{cfg}); err == nil || !strings.Contains(err.Error(), "untrusted key") {
		t.Fatalf("Reload after an untrusted re-signature = %v; want refused", err)
	}
	st := e.statusOf(t, "echo")
	if st.State != StateLoaded || st.SignedBy != "old" || !strings.Contains(st.LastError, "untrusted key") {
		t.Errorf("status = %+v; want the version signed by old serving, last_error naming the untrusted key", st)
	}
	if _, err := e.call(t, "org_a", "echo", `{"text":"x"}`); err != nil {
		t.Errorf("the loaded version stopped answering: %v", err)
	}

	if err := os.Remove(SignatureFile(cfg.Path)); err != nil {
		t.Fatal(err)
	}
	if err := e.r.Reload(context.Background(), []BundleConfig{cfg}); err == nil || !strings.Contains(err.Error(), "is missing") {
		t.Fatalf("Reload after the signature was removed = %v; want refused", err)
	}

	s.sign(t, cfg, "new", "echo", "1.0.0")
	if err := e.r.Reload(context.Background(), []BundleConfig{cfg}); err != nil {
		t.Fatalf("Reload after re-signing with the new key: %v", err)
	}
	if st := e.statusOf(t, "echo"); st.SignedBy != "new" || st.LastError != "" {
		t.Errorf("status = %+v; want signed by new, no last_error", st)
	}

	// Dropping the old key from the trusted set reloads the bundle (trust
	// changed) and keeps it: the new key signed it.
	cfg.Trust.Keys = s.ring(t, "new")
	if err := e.r.Reload(context.Background(), []BundleConfig{cfg}); err != nil {
		t.Fatalf("Reload after retiring the old key: %v", err)
	}
	if st := e.statusOf(t, "echo"); st.SignedBy != "new" {
		t.Errorf("status = %+v; want signed by new", st)
	}
}
