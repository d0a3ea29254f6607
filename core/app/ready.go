package app

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/kobana/kadu/core/plugin"
)

// checkTimeout bounds each readiness check, so that a probe with a short
// timeout (Kubernetes' default is 1 s) still gets an answer naming the slow
// check; a JWKS fetch that takes longer goes on in the background and the
// next probe sees its result.
const checkTimeout = 800 * time.Millisecond

// Readiness check names, the keys of "checks" in the /readyz answer.
const (
	checkStore      = "store"
	checkMigrations = "migrations"
	checkBundles    = "bundles"
	checkIssuerKeys = "issuer_keys"
	checkDraining   = "draining"
)

// Check states.
const (
	checkOK      = "ok"
	checkFail    = "fail"
	checkSkipped = "skipped" // does not apply to this configuration
)

// checkResult is one named check of /readyz. Reason is short and carries
// no secret (no DSN, token or key).
type checkResult struct {
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Applied *int64 `json:"applied,omitempty"` // migrations
	Latest  *int64 `json:"latest,omitempty"`  // migrations
	Loaded  *int   `json:"loaded,omitempty"`  // bundles serving
}

// readiness is the /readyz answer.
type readiness struct {
	Status string                 `json:"status"` // "ready" or "not_ready"
	Checks map[string]checkResult `json:"checks"`
}

// healthz answers whether the process is alive: it serves HTTP. Nothing
// else is checked, so that an orchestrator restarts only a wedged process,
// never one waiting for its database.
func (a *App) healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"status":"alive"}` + "\n"))
}

// readyz answers 200 when every check passes, else 503; the body names
// each check, so an operator sees which one failed (docs: README.md).
func (a *App) readyz(w http.ResponseWriter, r *http.Request) {
	res := a.checkReadiness(r.Context())
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Type", "application/json")
	code := http.StatusOK
	if res.Status != "ready" {
		code = http.StatusServiceUnavailable
	}
	b, err := json.Marshal(res)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.WriteHeader(code)
	_, _ = w.Write(append(b, '\n'))
}

// checkReadiness runs every check at once, each within checkTimeout.
func (a *App) checkReadiness(ctx context.Context) readiness {
	checks := map[string]func(context.Context) checkResult{
		checkStore:      a.checkStore,
		checkMigrations: a.checkMigrations,
		checkBundles:    a.checkBundles,
		checkIssuerKeys: a.checkIssuerKeys,
		checkDraining: func(context.Context) checkResult {
			if a.draining.Load() {
				return checkResult{Status: checkFail, Reason: "shutting down: finishing in-flight requests"}
			}
			return checkResult{Status: checkOK}
		},
	}
	out := readiness{Status: "ready", Checks: make(map[string]checkResult, len(checks))}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for name, check := range checks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(ctx, checkTimeout)
			defer cancel()
			res := check(cctx)
			mu.Lock()
			defer mu.Unlock()
			out.Checks[name] = res
			if res.Status == checkFail {
				out.Status = "not_ready"
			}
		}()
	}
	wg.Wait()
	return out
}

// checkStore: the database answers, and no write has found the storage
// unavailable (full disk, I/O errors) since the last successful probe.
func (a *App) checkStore(ctx context.Context) checkResult {
	db := a.backend.db
	if err := db.Ping(ctx); err != nil {
		return fail("unreachable: %s", clipReason(err))
	}
	if err := db.Ready(ctx); err != nil {
		return fail("degraded: %s", clipReason(err))
	}
	return checkResult{Status: checkOK}
}

// checkMigrations: the database is at the latest schema this build knows.
// A database ahead of the build (an older replica during a rolling upgrade)
// passes: migrations only add.
func (a *App) checkMigrations(ctx context.Context) checkResult {
	applied, latest, err := a.backend.db.MigrationVersions(ctx)
	if err != nil {
		return fail("cannot read the applied migration: %s", clipReason(err))
	}
	res := checkResult{Status: checkOK, Applied: &applied, Latest: &latest}
	if applied < latest {
		res.Status = checkFail
		res.Reason = fmt.Sprintf("database at migration %d, this build needs %d: run kadu migrate", applied, latest)
	}
	return res
}

// checkBundles: every required bundle has a version serving (not failed,
// not quarantined). An optional bundle that failed does not make the
// server unready; GET /admin/plugins lists it.
func (a *App) checkBundles(context.Context) checkResult {
	if a.plugins == nil {
		return checkResult{Status: checkSkipped, Reason: "tools come from a catalog given by the embedding program"}
	}
	loaded := 0
	var down []string
	for _, s := range a.plugins.Status() {
		if s.State == plugin.StateLoaded {
			loaded++
			continue
		}
		if s.Required {
			down = append(down, fmt.Sprintf("required bundle %q %s", s.Name, s.State))
		}
	}
	if len(down) > 0 {
		r := fail("%s (GET /admin/plugins says why)", strings.Join(down, ", "))
		r.Loaded = &loaded
		return r
	}
	return checkResult{Status: checkOK, Loaded: &loaded}
}

// checkIssuerKeys: with auth.issuer, the issuer's JWKS has been fetched
// (this check fetches it when it never was), so tokens can be verified.
func (a *App) checkIssuerKeys(ctx context.Context) checkResult {
	if a.verifier == nil {
		return checkResult{Status: checkSkipped, Reason: "embedded development issuer: keys in process"}
	}
	if err := a.verifier.KeysReady(ctx); err != nil {
		return fail("%s", clipReason(err))
	}
	return checkResult{Status: checkOK}
}

func fail(format string, args ...any) checkResult {
	return checkResult{Status: checkFail, Reason: fmt.Sprintf(format, args...)}
}

// clipReason keeps a reason short: the error's first line, at most 200
// bytes. Errors reaching here come from the store (which never includes
// the DSN's password) and the key fetch (URLs of public documents).
func clipReason(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
