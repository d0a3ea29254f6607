package app

import (
	"testing"

	"github.com/kobana/kadu/core/plugin"
	"github.com/kobana/kadu/core/store"
)

// TestBundleAuditRecord: each bundle event becomes the action an auditor
// looks for, in the installation's chain, naming the bundle and saying the
// version or the reason.
func TestBundleAuditRecord(t *testing.T) {
	t.Parallel()
	tests := []struct {
		e                       plugin.Event
		action, outcome, detail string
	}{
		{plugin.Event{Kind: plugin.EventLoaded, Bundle: "tasks", Version: "1.2.0"}, store.AuditBundleLoaded, store.OutcomeSucceeded, "1.2.0"},
		{plugin.Event{Kind: plugin.EventSwapped, Bundle: "tasks", Version: "1.3.0"}, store.AuditBundleSwapped, store.OutcomeSucceeded, "1.3.0"},
		{plugin.Event{Kind: plugin.EventRefused, Bundle: "tasks", Reason: "sha256 mismatch"}, store.AuditBundleRefused, store.OutcomeFailed, "sha256 mismatch"},
		{plugin.Event{Kind: plugin.EventQuarantined, Bundle: "tasks", Version: "1.3.0", Reason: "5 faults within 1m0s"},
			store.AuditBundleQuarantined, store.OutcomeFailed, "1.3.0: 5 faults within 1m0s"},
	}
	for _, tt := range tests {
		t.Run(string(tt.e.Kind), func(t *testing.T) {
			t.Parallel()
			rec := bundleAuditRecord(tt.e)
			if rec.OrgID != store.InstallationChain || rec.Surface != store.SurfaceSystem || rec.ResourceID != "tasks" ||
				rec.Action != tt.action || rec.Outcome != tt.outcome || rec.Detail != tt.detail {
				t.Fatalf("record = %+v; want %s %s %q on the installation chain for bundle tasks", rec, tt.action, tt.outcome, tt.detail)
			}
		})
	}
}
