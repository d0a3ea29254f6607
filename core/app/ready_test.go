package app

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/kobana/kadu/core/config"
	"github.com/kobana/kadu/core/plugin"
)

// newReadyApp builds Kadu (not serving: /readyz is read through the admin
// handler) with no first-party bundles, a temporary data dir, and cfg
// adjusted by mutate.
func newReadyApp(t *testing.T, mutate func(*config.Config)) *App {
	t.Helper()
	cfg := config.Defaults()
	cfg.DataDir = t.TempDir()
	for name, b := range cfg.Plugins.Bundles {
		b.Enabled = false
		cfg.Plugins.Bundles[name] = b
	}
	if mutate != nil {
		mutate(&cfg)
	}
	a, err := New(context.Background(), &cfg, Options{Version: "test", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() }) // the store may have been closed by the test
	return a
}

// getReadyz returns /readyz's status, its decoded body and its headers.
func getReadyz(t *testing.T, a *App) (int, readiness, http.Header) {
	t.Helper()
	rec := httptest.NewRecorder()
	a.AdminHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
	var body readiness
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("/readyz body %q is not JSON: %v", rec.Body.String(), err)
	}
	return rec.Code, body, rec.Header()
}

// closedURL is an http URL on loopback where nothing listens.
func closedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

// jwksServer serves a JWKS with one RSA key, as an issuer does.
func jwksServer(t *testing.T) string {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Algorithm: "RS256", Use: "sig"}}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/jwk-set+json")
		_ = json.NewEncoder(w).Encode(set)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestReadyzNamesEachFailingCheck makes each readiness check fail in turn,
// as an operator meets it, and checks that /readyz answers 503 naming that
// check with a reason, while the others pass; and that a healthy server
// answers 200 with every check named.
func TestReadyzNamesEachFailingCheck(t *testing.T) {
	all := []string{checkStore, checkMigrations, checkBundles, checkIssuerKeys, checkDraining}
	tests := []struct {
		name      string
		mutate    func(*config.Config)
		breakIt   func(t *testing.T, a *App)
		failing   string // "" when ready
		reason    string // in the failing check's reason
		skipped   []string
		wantOther map[string]string // other checks' expected status
	}{
		{name: "ready", skipped: []string{checkIssuerKeys}},
		{name: "ready on PostgreSQL", mutate: func(c *config.Config) { useDriver(t, c, config.DriverPostgres) }, skipped: []string{checkIssuerKeys}},
		{name: "migrations behind the build on PostgreSQL", mutate: func(c *config.Config) { useDriver(t, c, config.DriverPostgres) },
			breakIt: func(t *testing.T, a *App) {
				if _, err := a.backend.db.Writer().Exec(`DELETE FROM kadu_migrations WHERE version_id = (SELECT MAX(version_id) FROM kadu_migrations)`); err != nil {
					t.Fatal(err)
				}
			}, failing: checkMigrations, reason: "run kadu migrate", skipped: []string{checkIssuerKeys}},
		{name: "ready with an external issuer whose keys are reachable",
			mutate: func(c *config.Config) {
				u := jwksServer(t)
				c.Auth.Issuer, c.Auth.JWKSURL = u, u+"/jwks"
			}},
		{name: "draining", breakIt: func(t *testing.T, a *App) { a.draining.Store(true) },
			failing: checkDraining, reason: "shutting down", skipped: []string{checkIssuerKeys}},
		{name: "store stopped", breakIt: func(t *testing.T, a *App) {
			if err := a.backend.db.Close(); err != nil {
				t.Fatal(err)
			}
		}, failing: checkStore, reason: "unreachable", skipped: []string{checkIssuerKeys},
			// Reading the applied migration needs the store too.
			wantOther: map[string]string{checkMigrations: checkFail}},
		{name: "migrations behind the build", breakIt: func(t *testing.T, a *App) {
			if _, err := a.backend.db.Writer().Exec(`DELETE FROM kadu_migrations WHERE version_id = (SELECT MAX(version_id) FROM kadu_migrations)`); err != nil {
				t.Fatal(err)
			}
		}, failing: checkMigrations, reason: "run kadu migrate", skipped: []string{checkIssuerKeys}},
		{name: "required bundle missing", breakIt: func(t *testing.T, a *App) {
			err := a.plugins.Reload(context.Background(), []plugin.BundleConfig{{
				Name: "partner", Path: t.TempDir() + "/partner.wasm", SHA256: strings.Repeat("ab", 32), Required: true,
			}})
			if err == nil {
				t.Fatal("reloading with a missing file succeeded")
			}
		}, failing: checkBundles, reason: `required bundle "partner" failed`, skipped: []string{checkIssuerKeys}},
		{name: "issuer keys unreachable",
			mutate: func(c *config.Config) {
				u := closedURL(t)
				c.Auth.Issuer, c.Auth.JWKSURL = u, u+"/jwks"
			}, failing: checkIssuerKeys, reason: "signing keys unavailable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newReadyApp(t, tt.mutate)
			if tt.breakIt != nil {
				tt.breakIt(t, a)
			}
			code, body, h := getReadyz(t, a)
			if h.Get("Cache-Control") != "no-store" || h.Get("Content-Type") != "application/json" {
				t.Errorf("headers Cache-Control %q, Content-Type %q; want no-store, application/json", h.Get("Cache-Control"), h.Get("Content-Type"))
			}
			wantCode, wantStatus := http.StatusOK, "ready"
			if tt.failing != "" {
				wantCode, wantStatus = http.StatusServiceUnavailable, "not_ready"
			}
			if code != wantCode || body.Status != wantStatus {
				t.Fatalf("/readyz = %d %+v; want %d %s", code, body, wantCode, wantStatus)
			}
			for _, name := range all {
				c, ok := body.Checks[name]
				want := checkOK
				switch {
				case name == tt.failing:
					want = checkFail
				case tt.wantOther[name] != "":
					want = tt.wantOther[name]
				case slices.Contains(tt.skipped, name):
					want = checkSkipped
				}
				if !ok || c.Status != want {
					t.Errorf("check %s = %+v (present %v); want status %s", name, c, ok, want)
				}
				if want != checkOK && c.Reason == "" {
					t.Errorf("check %s is %s without a reason", name, c.Status)
				}
			}
			if tt.failing != "" && !strings.Contains(body.Checks[tt.failing].Reason, tt.reason) {
				t.Errorf("check %s reason %q; want it to say %q", tt.failing, body.Checks[tt.failing].Reason, tt.reason)
			}
		})
	}
}

// TestHealthzIsAlive: liveness says only that the process answers, even
// while readiness fails, so an orchestrator does not restart a server that
// is waiting for its database or draining.
func TestHealthzIsAlive(t *testing.T) {
	a := newReadyApp(t, nil)
	a.draining.Store(true)
	rec := httptest.NewRecorder()
	a.AdminHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
	body, _ := io.ReadAll(rec.Body)
	if rec.Code != http.StatusOK || string(body) != `{"status":"alive"}`+"\n" || rec.Header().Get("Cache-Control") != "no-store" {
		t.Fatalf("/healthz while draining = %d %q (Cache-Control %q); want 200 {\"status\":\"alive\"}", rec.Code, body, rec.Header().Get("Cache-Control"))
	}
}
