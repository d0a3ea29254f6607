package plugin

import "context"

// EventKind says what happened to a bundle: the moments an operator (and
// the audit trail, docs/audit.md) must be told of.
type EventKind string

// Event kinds.
const (
	// EventLoaded: a bundle that was not serving now serves.
	EventLoaded EventKind = "loaded"
	// EventSwapped: a new version replaced the one serving.
	EventSwapped EventKind = "swapped"
	// EventRefused: a bundle did not load, for any reason (file, digest,
	// manifest, signature, name clash); the old version, if any, serves on.
	EventRefused EventKind = "refused"
	// EventQuarantined: repeated faults stopped a version's calls for the
	// quarantine cooldown.
	EventQuarantined EventKind = "quarantined"
)

// Event is one bundle event. Reason is set for refusals and quarantines;
// Version (the manifest's) and SHA256 when a version is known.
type Event struct {
	Kind    EventKind
	Bundle  string
	Version string
	SHA256  string
	Reason  string
}

// EventFunc receives bundle events (Options.OnEvent). It is called
// synchronously, from Reload or from the call whose fault started a
// quarantine, so it must return quickly and must not call the Registry.
// ctx may be cancelled soon after: detach it for work that must finish.
type EventFunc func(ctx context.Context, e Event)

// emit calls the event hook, if any.
func (r *Registry) emit(ctx context.Context, e Event) {
	if r.onEvent != nil {
		r.onEvent(ctx, e)
	}
}

// versionEvent is an Event about v.
func versionEvent(kind EventKind, v *version) Event {
	e := Event{Kind: kind, Bundle: v.cfg.Name, SHA256: v.sha}
	if v.man != nil {
		e.Version = v.man.m.Version
	}
	return e
}
