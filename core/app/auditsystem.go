package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/kobana/kadu/core/plugin"
	"github.com/kobana/kadu/core/store"
)

// The installation's own events (docs/audit.md#bundles-and-configuration):
// bundle loads, swaps, refusals and quarantines, and configuration reloads.
// They belong to no organisation, so they go to store.InstallationChain,
// with the system as the surface and no principal.

// bundleAuditActions maps the registry's event kinds to audit actions.
var bundleAuditActions = map[plugin.EventKind]string{
	plugin.EventLoaded:      store.AuditBundleLoaded,
	plugin.EventSwapped:     store.AuditBundleSwapped,
	plugin.EventRefused:     store.AuditBundleRefused,
	plugin.EventQuarantined: store.AuditBundleQuarantined,
}

// bundleAuditRecord is the audit record of a bundle event: ResourceID the
// bundle, Detail its version (loads and swaps) or the reason (refusals and
// quarantines).
func bundleAuditRecord(e plugin.Event) store.AuditRecord {
	rec := store.AuditRecord{
		OrgID: store.InstallationChain, Action: bundleAuditActions[e.Kind], Surface: store.SurfaceSystem,
		ResourceID: e.Bundle, Outcome: store.OutcomeSucceeded, Detail: e.Version,
	}
	if e.Kind == plugin.EventRefused || e.Kind == plugin.EventQuarantined {
		rec.Outcome = store.OutcomeFailed
		rec.Detail = e.Reason
		if e.Version != "" {
			rec.Detail = e.Version + ": " + e.Reason
		}
	}
	return rec
}

// auditBundleEvent records e (plugin.Options.OnEvent).
func (a *App) auditBundleEvent(ctx context.Context, e plugin.Event) {
	a.appendSystemAudit(ctx, bundleAuditRecord(e))
}

// auditConfigReload records a reload of the configuration: trigger says
// what asked for it (SIGHUP, a file change, the admin endpoint), err why
// it could not be read. The bundles' own outcomes follow as bundle events.
func (a *App) auditConfigReload(ctx context.Context, trigger string, err error) {
	rec := store.AuditRecord{
		OrgID: store.InstallationChain, Action: store.AuditConfigReloaded, Surface: store.SurfaceSystem,
		Outcome: store.OutcomeSucceeded, Detail: trigger,
	}
	if err != nil {
		rec.Outcome, rec.Detail = store.OutcomeFailed, trigger+": "+err.Error()
	}
	a.appendSystemAudit(ctx, rec)
}

// systemAuditTimeout bounds one installation audit write. The reload or
// the call that waits on it has happened already; a stalled database must
// not hold it (and the admin request or shutdown behind it) for longer.
const systemAuditTimeout = 5 * time.Second

// appendSystemAudit appends rec on its own. The caller's context may end
// right after (a call that started a quarantine, an admin request), and the
// event must still be written, so it is detached, and bounded by
// systemAuditTimeout instead. A failure is logged: the reload or the call
// it records has happened either way.
func (a *App) appendSystemAudit(ctx context.Context, rec store.AuditRecord) {
	if a.backend == nil || a.backend.db == nil {
		return
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), systemAuditTimeout)
	defer cancel()
	if _, err := a.backend.db.AppendAudit(wctx, rec); err != nil {
		a.log.LogAttrs(ctx, slog.LevelError, "audit event not recorded",
			slog.String("action", rec.Action), slog.String("resource_id", rec.ResourceID), slog.Any("error", err))
	}
}
