package devauth

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"

	"github.com/kobana/kadu/core/auth"
)

func testOptions(t *testing.T, dir string) Options {
	t.Helper()
	return Options{
		Issuer:   "http://127.0.0.1:8080",
		Resource: "http://127.0.0.1:8080/mcp",
		DataDir:  dir,
		Logger:   slog.New(slog.DiscardHandler),
	}
}

func TestMint(t *testing.T) {
	s, err := New(testOptions(t, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := s.Mint(MintOptions{OrgID: "org_a", Role: auth.RoleViewer, Scopes: []string{"kadu.run", "kadu.read"}})
	if err != nil {
		t.Fatal(err)
	}
	idt, c := verify(t, s, "http://127.0.0.1:8080", "http://127.0.0.1:8080/mcp", tok)
	if idt.Subject != "dev-user" || c.OrgID != "org_a" || c.Role != "viewer" || c.Scope != "kadu.read kadu.run" || c.ClientID != "kadu-cli" {
		t.Errorf("sub %q claims %+v", idt.Subject, c)
	}
	if d := time.Until(idt.Expiry); d < 59*time.Minute || d > time.Hour {
		t.Errorf("expires in %s, want 1h", d)
	}

	tok, err = s.Mint(MintOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, c = verify(t, s, "http://127.0.0.1:8080", "http://127.0.0.1:8080/mcp", tok)
	if c.OrgID != "org_dev" || c.Role != "owner" || c.Scope != "kadu.read kadu.write kadu.run kadu.admin" {
		t.Errorf("defaults: claims %+v", c)
	}

	tok, err = s.Mint(MintOptions{Audience: "http://elsewhere/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	v := oidc.NewVerifier("http://127.0.0.1:8080", s.KeySet(), &oidc.Config{ClientID: "http://127.0.0.1:8080/mcp", SupportedSigningAlgs: s.Algorithms()})
	if _, err := v.Verify(context.Background(), tok); err == nil {
		t.Errorf("a token for another audience verified")
	}
}

func TestMintRefuses(t *testing.T) {
	s, err := New(testOptions(t, ""))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		opts MintOptions
	}{
		{"unknown role", MintOptions{Role: "root"}},
		{"unknown scope", MintOptions{Scopes: []string{"kadu.root"}}},
		{"bad org", MintOptions{OrgID: "a b"}},
		{"org with dots", MintOptions{OrgID: "a..b"}},
		{"org with a colon", MintOptions{OrgID: "tenant:1"}},
		{"negative TTL", MintOptions{TTL: -time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := s.Mint(tt.opts); err == nil {
				t.Fatalf("Mint(%+v) succeeded", tt.opts)
			}
		})
	}
}

func TestKeysPersist(t *testing.T) {
	dir := t.TempDir()
	s1, err := New(testOptions(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := s1.Mint(MintOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s2, err := New(testOptions(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	verify(t, s2, "http://127.0.0.1:8080", "http://127.0.0.1:8080/mcp", tok)
	if s1.pubKey.KeyID != s2.pubKey.KeyID {
		t.Errorf("kid changed across restarts: %q, %q", s1.pubKey.KeyID, s2.pubKey.KeyID)
	}

	for _, name := range []string{signingKeyFile, sealingKeyFile} {
		fi, err := os.Stat(filepath.Join(dir, keyDirName, name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v, want 0600", name, fi.Mode().Perm())
		}
	}
	fi, err := os.Stat(filepath.Join(dir, keyDirName))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("key dir mode %v, want 0700", fi.Mode().Perm())
	}

	other, err := New(testOptions(t, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	v := oidc.NewVerifier("http://127.0.0.1:8080", other.KeySet(), &oidc.Config{ClientID: "http://127.0.0.1:8080/mcp", SupportedSigningAlgs: other.Algorithms()})
	if _, err := v.Verify(context.Background(), tok); err == nil {
		t.Errorf("a server with other keys verified the token")
	}
}

func TestKeyPermissionsTightened(t *testing.T) {
	dir := t.TempDir()
	if _, err := New(testOptions(t, dir)); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, keyDirName, signingKeyFile)
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := New(testOptions(t, dir)); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v after restart, want 0600", fi.Mode().Perm())
	}
}

func TestCorruptKeyIsAnError(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, keyDirName), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, keyDirName, signingKeyFile), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := New(testOptions(t, dir)); err == nil {
		t.Fatal("New succeeded with a corrupt signing key")
	}
}

func TestOptionsValidation(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Options)
	}{
		{"no issuer", func(o *Options) { o.Issuer = "" }},
		{"issuer with trailing slash", func(o *Options) { o.Issuer += "/" }},
		{"issuer with path", func(o *Options) { o.Issuer += "/auth" }},
		{"issuer not http", func(o *Options) { o.Issuer = "ftp://x" }},
		{"no resource", func(o *Options) { o.Resource = "" }},
		{"resource with fragment", func(o *Options) { o.Resource += "#x" }},
		{"bad role", func(o *Options) { o.DefaultRole = "root" }},
		{"bad org", func(o *Options) { o.DefaultOrg = "has space" }},
		{"org with dots", func(o *Options) { o.DefaultOrg = "a..b" }},
		{"bad subject", func(o *Options) { o.DefaultSubject = " padded" }},
		{"negative TTL", func(o *Options) { o.AccessTokenTTL = -time.Minute }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := testOptions(t, "")
			tt.mutate(&o)
			if _, err := New(o); err == nil {
				t.Fatalf("New succeeded")
			}
		})
	}
}

func TestConcurrentFirstStart(t *testing.T) {
	dir := t.TempDir()
	const n = 8
	kids := make(chan string, n)
	errs := make(chan error, n)
	for range n {
		go func() {
			s, err := New(testOptions(t, dir))
			if err != nil {
				errs <- err
				return
			}
			kids <- s.pubKey.KeyID
		}()
	}
	var first string
	for range n {
		select {
		case err := <-errs:
			t.Fatal(err)
		case kid := <-kids:
			if first == "" {
				first = kid
			} else if kid != first {
				t.Fatalf("servers started together disagree on the key: %q, %q", first, kid)
			}
		}
	}
}
