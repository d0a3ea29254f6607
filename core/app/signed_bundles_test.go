package app

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kobana/kadu/core/config"
	"github.com/kobana/kadu/core/plugin"
	"github.com/kobana/kadu/core/plugin/bundlesig"
)

// The signed-bundle tests serve the swap bundle (hotswap_test.go) with
// plugins.require_signature on. The builds are cached files shared by every
// test, so each signed variant is a copy in a directory of its own with
// its .sig beside it, the way a publisher ships foo.wasm and foo.wasm.sig.

// publisher holds the signing keys of the tests, by trusted-key name.
type publisher map[string]bundlesig.SecretKey

func newPublisher(t testing.TB, names ...string) publisher {
	t.Helper()
	p := publisher{}
	for _, n := range names {
		k, err := bundlesig.GenerateKey(nil)
		if err != nil {
			t.Fatal(err)
		}
		p[n] = k
	}
	return p
}

// trust returns plugins.trusted_keys with the named keys.
func (p publisher) trust(names ...string) map[string]config.TrustedKey {
	out := map[string]config.TrustedKey{}
	for _, n := range names {
		out[n] = config.TrustedKey{PublicKey: p[n].Public().String()}
	}
	return out
}

// variant copies b into a new directory and, unless key is "", signs the
// copy with key for name@version (a signature for another bundle when they
// are not b's).
func (p publisher) variant(t testing.TB, b swapBuild, key, name, version string) swapBuild {
	t.Helper()
	wasm, err := os.ReadFile(b.path)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	c := b
	c.path = filepath.Join(dir, "swap.wasm")
	if err := os.WriteFile(c.path, wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	if key != "" {
		sig := bundlesig.Sign(p[key], wasm, bundlesig.Statement{Name: name, Version: version, SHA256: b.sha})
		if err := os.WriteFile(plugin.SignatureFile(c.path), sig, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// signedOnly makes a server that requires signatures and trusts keys, and
// serves the swap bundle alone: the first-party bundles the tests build are
// files, which an operator requiring signatures would sign or run built in.
func signedOnly(keys map[string]config.TrustedKey) func(c *config.Config) {
	return func(c *config.Config) {
		for name, b := range c.Plugins.Bundles {
			if name != "swap" {
				b.Enabled = false
				c.Plugins.Bundles[name] = b
			}
		}
		c.Plugins.RequireSignature = true
		c.Plugins.TrustedKeys = keys
	}
}

// TestSignedBundleAtStart starts the server with the swap bundle signed,
// unsigned, and signed by a key it does not trust: only the first serves;
// the others are refused with the reason in GET /admin/plugins and the log,
// and a required bundle refused stops the start naming it.
func TestSignedBundleAtStart(t *testing.T) {
	v1 := buildSwap(t, "v1", "1.0.0")
	pub := newPublisher(t, "acme-2026", "stranger")
	keys := pub.trust("acme-2026")

	t.Run("signed by a trusted key", func(t *testing.T) {
		b := pub.variant(t, v1, "acme-2026", "swap", "1.0.0")
		srv, _ := startSwapServerWith(t, signedOnly(keys), b)
		caller := newSwapCaller(t, srv, loopbackClient(1), "org_signed")
		if got, err := caller.call(context.Background()); err != nil || got != "1.0.0" {
			t.Fatalf("swap_version = %q, %v; want 1.0.0", got, err)
		}
		_, list := adminDo(t, srv, http.MethodGet, "/admin/plugins")
		st := list.swapStatus()
		if len(st) != 1 || st[0].State != plugin.StateLoaded || st[0].Signature != plugin.SignatureSigned ||
			st[0].SignedBy != "acme-2026" || st[0].SignerKeyID != pub["acme-2026"].ID.String() {
			t.Errorf("GET /admin/plugins swap = %+v; want loaded, signed by acme-2026", st)
		}
	})

	for _, tt := range []struct {
		name, key, want string
	}{
		{name: "unsigned", want: "swap.wasm.sig is missing, and plugins.require_signature is true"},
		{name: "signed by an untrusted key", key: "stranger", want: "signed by an untrusted key: key ID " + pub["stranger"].ID.String()},
	} {
		t.Run(tt.name+", optional: skipped", func(t *testing.T) {
			b := pub.variant(t, v1, tt.key, "swap", "1.0.0")
			srv := serveApp(t, func(c *config.Config) {
				c.Plugins.Bundles["swap"] = b.bundle()
				c.Plugins.CacheDir = sharedWasmCache(t)
				signedOnly(keys)(c)
			}, Options{Version: "test"})
			_, list := adminDo(t, srv, http.MethodGet, "/admin/plugins")
			st := list.swapStatus()
			if len(st) != 1 || st[0].State != plugin.StateFailed || !strings.Contains(st[0].LastError, tt.want) {
				t.Errorf("GET /admin/plugins swap = %+v; want failed with last_error %q", st, tt.want)
			}
			if logs := srv.logs.String(); !strings.Contains(logs, `"msg":"bundle not loaded"`) || !strings.Contains(logs, tt.want) {
				t.Errorf("the log does not say the bundle was not loaded and why (%q)", tt.want)
			}
			caller := newSwapCaller(t, srv, loopbackClient(1), "org_signed")
			if got, err := caller.call(context.Background()); err == nil {
				t.Errorf("swap_version answered %q from a refused bundle", got)
			}
		})
		t.Run(tt.name+", required: the start fails", func(t *testing.T) {
			b := pub.variant(t, v1, tt.key, "swap", "1.0.0")
			cfg := config.Defaults()
			cfg.DataDir = t.TempDir()
			cfg.Plugins.CacheDir = sharedWasmCache(t)
			sb := b.bundle()
			sb.Required = true
			cfg.Plugins.Bundles["swap"] = sb
			signedOnly(keys)(&cfg)
			a, err := New(context.Background(), &cfg, Options{Version: "test", Logger: slog.New(slog.DiscardHandler)})
			if err == nil {
				a.Close()
				t.Fatal("the server started with a required bundle whose signature is refused")
			}
			if !strings.Contains(err.Error(), `required bundle "swap"`) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("start error = %v; want it to name the required bundle swap and %q", err, tt.want)
			}
		})
	}
}

// TestSignedBundleReloadUnderLoad drops refused versions of the swap
// bundle in while clients call it over HTTP: unsigned, signed for another
// version, signed by an untrusted key, and with a damaged signature. Each
// is refused with its reason, no call fails, and the loaded version keeps
// answering. Then a version signed by the publisher's new key (trusted
// beside the old one: a rotation) swaps in, under the same load.
func TestSignedBundleReloadUnderLoad(t *testing.T) {
	pub := newPublisher(t, "acme-2025", "acme-2026", "stranger")
	v1, v2 := buildSwap(t, "v1", "1.0.0"), buildSwap(t, "v2", "2.0.0")
	good1 := pub.variant(t, v1, "acme-2025", "swap", "1.0.0")
	good2 := pub.variant(t, v2, "acme-2026", "swap", "2.0.0")
	srv, rl := startSwapServerWith(t, signedOnly(pub.trust("acme-2025", "acme-2026")), good1, good2)
	const callers = 4
	client := loopbackClient(callers)
	orgs := []*swapCaller{newSwapCaller(t, srv, client, "org_sig_a"), newSwapCaller(t, srv, client, "org_sig_b")}
	if got, err := orgs[0].call(context.Background()); err != nil || got != "1.0.0" {
		t.Fatalf("swap_version before any reload = %q, %v; want 1.0.0", got, err)
	}

	damaged := pub.variant(t, v2, "acme-2026", "swap", "2.0.0")
	sig, err := os.ReadFile(plugin.SignatureFile(damaged.path))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(sig), "\n")
	lines[3] = strings.Repeat("A", 86) + "==" // another global signature, well-formed
	if err := os.WriteFile(plugin.SignatureFile(damaged.path), []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}

	refused := []struct {
		name  string
		build swapBuild
		want  string
	}{
		{"unsigned", pub.variant(t, v2, "", "", ""), "swap.wasm.sig is missing"},
		{"signed for another version", pub.variant(t, v2, "acme-2026", "swap", "1.0.0"),
			"it signs swap@1.0.0, the module's manifest is swap@2.0.0"},
		{"signed by an untrusted key", pub.variant(t, v2, "stranger", "swap", "2.0.0"), "signed by an untrusted key"},
		{"damaged signature", damaged, "invalid signature"},
	}
	for _, tt := range refused {
		t.Run("refuses "+tt.name, func(t *testing.T) {
			l := startLoad(t, callers, orgs)
			l.waitCalls(t, 2*callers)
			rl.setSwap(tt.build.bundle())
			status, body := adminDo(t, srv, http.MethodPost, "/admin/plugins/reload")
			if status != http.StatusUnprocessableEntity || !strings.Contains(body.Error, `bundle "swap"`) || !strings.Contains(body.Error, tt.want) {
				t.Errorf("reload: %d error %q; want 422 naming bundle \"swap\" and %q", status, body.Error, tt.want)
			}
			l.waitCalls(t, 2*callers)
			seen, failures := l.stop()
			reportFailures(t, srv, "around the refused reload", failures)
			if len(seen) != 1 || seen["1.0.0"] == 0 {
				t.Errorf("versions that answered = %v, want only 1.0.0", seen)
			}
			_, list := adminDo(t, srv, http.MethodGet, "/admin/plugins")
			st := list.swapStatus()
			if len(st) != 1 || st[0].Version != "1.0.0" || st[0].State != plugin.StateLoaded || st[0].SignedBy != "acme-2025" ||
				!strings.Contains(st[0].LastError, tt.want) {
				t.Errorf("GET /admin/plugins swap = %+v; want 1.0.0 signed by acme-2025 serving, last_error %q", st, tt.want)
			}
			if !strings.Contains(srv.logs.String(), tt.want) {
				t.Errorf("the log does not give the reason %q", tt.want)
			}
		})
	}

	t.Run("a version signed by the new key swaps in", func(t *testing.T) {
		l := startLoad(t, callers, orgs)
		l.waitCalls(t, 2*callers)
		reloadTo(t, srv, rl, good2, orgs[1])
		l.waitCalls(t, 2*callers)
		seen, failures := l.stop()
		reportFailures(t, srv, "during the signed swap", failures)
		if seen["2.0.0"] == 0 {
			t.Errorf("versions that answered = %v, want 2.0.0 among them", seen)
		}
		_, list := adminDo(t, srv, http.MethodGet, "/admin/plugins")
		if st := list.swapStatus(); len(st) != 1 || st[0].Version != "2.0.0" || st[0].SignedBy != "acme-2026" || st[0].LastError != "" {
			t.Errorf("GET /admin/plugins swap = %+v; want 2.0.0 signed by acme-2026, no last_error", st)
		}
	})
}

// TestSignatureFileWatched changes only the swap bundle's .sig on a server
// watching its files: an untrusted re-signature is refused on its own (the
// loaded version keeps serving, last_error says why), and a re-signature
// by a trusted key is taken up, with no reload asked for.
func TestSignatureFileWatched(t *testing.T) {
	pub := newPublisher(t, "acme-2025", "acme-2026", "stranger")
	v1 := buildSwap(t, "v1", "1.0.0")
	b := pub.variant(t, v1, "acme-2025", "swap", "1.0.0")
	srv, _ := startSwapServerWith(t, func(c *config.Config) {
		signedOnly(pub.trust("acme-2025", "acme-2026"))(c)
		c.Plugins.Watch = true
	}, b)
	caller := newSwapCaller(t, srv, loopbackClient(1), "org_watch")
	wasm, err := os.ReadFile(b.path)
	if err != nil {
		t.Fatal(err)
	}
	// resign replaces the .sig the way kadu plugins sign does: a new file
	// renamed over the old one.
	resign := func(key string) {
		tmp := b.path + ".sig.tmp"
		sig := bundlesig.Sign(pub[key], wasm, bundlesig.Statement{Name: "swap", Version: "1.0.0", SHA256: b.sha})
		if err := os.WriteFile(tmp, sig, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, plugin.SignatureFile(b.path)); err != nil {
			t.Fatal(err)
		}
	}
	// waitStatus polls GET /admin/plugins until ok holds for swap; the
	// watcher may not be listening yet, so the change is made again now
	// and then. The bound only catches a watcher that never reloads.
	waitStatus := func(what string, change func(), ok func(plugin.BundleStatus) bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for next := time.Now(); ; time.Sleep(50 * time.Millisecond) {
			if time.Now().After(next) {
				change()
				next = time.Now().Add(2 * time.Second)
			}
			_, list := adminDo(t, srv, http.MethodGet, "/admin/plugins")
			if st := list.swapStatus(); len(st) == 1 && ok(st[0]) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("after 30 s of changing the .sig, GET /admin/plugins swap = %+v; want %s", list.swapStatus(), what)
			}
		}
	}
	waitStatus("the untrusted re-signature refused", func() { resign("stranger") }, func(s plugin.BundleStatus) bool {
		return s.SignedBy == "acme-2025" && strings.Contains(s.LastError, "signed by an untrusted key")
	})
	if got, err := caller.call(context.Background()); err != nil || got != "1.0.0" {
		t.Errorf("swap_version after the refused .sig = %q, %v; want 1.0.0 still", got, err)
	}
	waitStatus("signed by acme-2026", func() { resign("acme-2026") }, func(s plugin.BundleStatus) bool {
		return s.SignedBy == "acme-2026" && s.LastError == ""
	})
	if got, err := caller.call(context.Background()); err != nil || got != "1.0.0" {
		t.Errorf("swap_version after the re-signature = %q, %v; want 1.0.0", got, err)
	}
}

// TestMovedBundleWatched points the swap bundle at a new release in a
// directory the server was not watching, without its .sig, and reloads:
// the reload is refused, and copying the .sig in afterwards is enough to
// load the release, with no reload asked for. The watched files follow
// the configuration each reload reads, not the one the server started
// with.
func TestMovedBundleWatched(t *testing.T) {
	pub := newPublisher(t, "acme-2025")
	v1, v2 := buildSwap(t, "v1", "1.0.0"), buildSwap(t, "v2", "2.0.0")
	b := pub.variant(t, v1, "acme-2025", "swap", "1.0.0")
	// The signed v2 is loaded once at start so that its compiled code is
	// cached: the release below has the same bytes.
	srv, rl := startSwapServerWith(t, func(c *config.Config) {
		signedOnly(pub.trust("acme-2025"))(c)
		c.Plugins.Watch = true
	}, b, pub.variant(t, v2, "acme-2025", "swap", "2.0.0"))
	caller := newSwapCaller(t, srv, loopbackClient(1), "org_moved")

	release := pub.variant(t, v2, "", "", "") // a new directory, no .sig yet
	rl.setSwap(release.bundle())
	const want = "swap.wasm.sig is missing"
	if status, body := adminDo(t, srv, http.MethodPost, "/admin/plugins/reload"); status != http.StatusUnprocessableEntity || !strings.Contains(body.Error, want) {
		t.Fatalf("reload to the unsigned release: %d %q; want 422 saying %q", status, body.Error, want)
	}
	if got, err := caller.call(context.Background()); err != nil || got != "1.0.0" {
		t.Fatalf("swap_version after the refused reload = %q, %v; want 1.0.0 still", got, err)
	}

	// Copied in once: the reload above made the watcher watch the new
	// directory before it read the bundle, so no retry is needed.
	wasm, err := os.ReadFile(release.path)
	if err != nil {
		t.Fatal(err)
	}
	sig := bundlesig.Sign(pub["acme-2025"], wasm, bundlesig.Statement{Name: "swap", Version: "2.0.0", SHA256: release.sha})
	if err := os.WriteFile(plugin.SignatureFile(release.path), sig, 0o644); err != nil {
		t.Fatal(err)
	}
	// The bound only catches a watcher that never reloads: the release is
	// compiled already, so a reload takes well under a second.
	deadline := time.Now().Add(time.Minute)
	for {
		_, list := adminDo(t, srv, http.MethodGet, "/admin/plugins")
		st := list.swapStatus()
		if len(st) == 1 && st[0].Version == "2.0.0" && st[0].Path == release.path && st[0].LastError == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a minute after the .sig of the new release was copied in, GET /admin/plugins swap = %+v; want 2.0.0 from %s", st, release.path)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got, err := caller.call(context.Background()); err != nil || got != "2.0.0" {
		t.Errorf("swap_version after the .sig was copied in = %q, %v; want 2.0.0", got, err)
	}
}
