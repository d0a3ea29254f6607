package app

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kobana/kadu/core/store"
)

// TestBundleEventsInAuditTrail runs the server with the product's bundles
// and the swap bundle, reloads it over the admin endpoint to a new version
// and then to a file whose pin is wrong: the installation's chain records
// the loads at start, each configuration reload with its trigger, the swap
// with the new version and the refusal with its reason, and verifies.
func TestBundleEventsInAuditTrail(t *testing.T) {
	v1, v2 := buildSwap(t, "v1", "1.0.0"), buildSwap(t, "v2", "2.0.0")
	srv, rl := startSwapServer(t, v1, v2) // loads v1, swaps to v2 and back to v1 directly
	db, ctx := srv.app.backend.db, context.Background()
	// The events of the reloads below come after the chain's head now:
	// comparing times instead would also find the start's swaps, when they
	// fall in the same microsecond.
	mark, _, err := db.AuditHead(ctx, store.InstallationChain)
	if err != nil {
		t.Fatal(err)
	}

	rl.setSwap(v2.bundle())
	if status, body := adminDo(t, srv, http.MethodPost, "/admin/plugins/reload"); status != http.StatusOK {
		t.Fatalf("reload to v2: %d %+v", status, body)
	}
	bad := v1.bundle()
	bad.SHA256 = strings.Repeat("0", 64)
	rl.setSwap(bad)
	if status, _ := adminDo(t, srv, http.MethodPost, "/admin/plugins/reload"); status == http.StatusOK {
		t.Fatal("a reload to a file with the wrong sha256 answered 200")
	}

	var all []store.AuditEvent
	if err := db.ExportAudit(ctx, store.InstallationChain, time.Time{}, func(e store.AuditEvent) error {
		all = append(all, e)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	find := func(action, resource string, after int64) *store.AuditEvent {
		for i := range all {
			e := &all[i]
			if e.Action == action && e.ResourceID == resource && e.Seq > after {
				return e
			}
		}
		return nil
	}
	for _, name := range []string{"tasks", "swap"} {
		if e := find(store.AuditBundleLoaded, name, 0); e == nil || e.Surface != store.SurfaceSystem || e.Outcome != store.OutcomeSucceeded {
			t.Fatalf("no bundle.loaded of %s at start: %+v", name, e)
		}
	}
	if e := find(store.AuditConfigReloaded, "", mark); e == nil || e.Detail != "POST /admin/plugins/reload" {
		t.Fatalf("config.reloaded of the admin reload = %+v", e)
	}
	if e := find(store.AuditBundleSwapped, "swap", mark); e == nil || e.Detail != v2.version {
		t.Fatalf("bundle.swapped to v2 = %+v", e)
	}
	if e := find(store.AuditBundleRefused, "swap", mark); e == nil || e.Outcome != store.OutcomeFailed || !strings.Contains(e.Detail, "sha256 mismatch") {
		t.Fatalf("bundle.refused of the wrong pin = %+v", e)
	}
	if n, brk, err := db.VerifyAudit(ctx, store.InstallationChain); err != nil || brk != nil || n != int64(len(all)) {
		t.Fatalf("the installation's chain: %d verified of %d, %v, %v", n, len(all), brk, err)
	}
}
