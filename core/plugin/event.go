package plugin

import (
	"context"
	"sync"
)

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
// synchronously, from Reload once the new versions serve (Reload returns
// after it) or from the call whose fault started a quarantine, with no
// lock of the Registry held: a slow hook delays only that Reload or call,
// not Close, other calls or the publication of a swap. It must not call
// Reload, and may run on several goroutines at once (a quarantine during
// a reload). ctx may be cancelled soon after: detach it for work that must
// finish, and bound that work.
type EventFunc func(ctx context.Context, e Event)

// emit calls the event hook, if any. The caller holds no Registry lock.
func (r *Registry) emit(ctx context.Context, e Event) {
	if r.onEvent != nil {
		r.onEvent(ctx, e)
	}
}

// eventQueue hands the events of successive reloads to the hook in the
// order the reloads published them. Each Reload pushes its events while
// it still holds the Registry's lock, so the queue is in publication
// order, then delivers after releasing it; two reloads finishing close
// together cannot swap the order of their "swapped" events in the audit
// trail.
type eventQueue struct {
	mu      sync.Mutex // guards pending
	pending []queuedEvent

	delivering sync.Mutex // held while events go to the hook, one batch after another
}

type queuedEvent struct {
	ctx context.Context
	e   Event
}

// push queues events, told later with ctx.
func (q *eventQueue) push(ctx context.Context, events []Event) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, e := range events {
		q.pending = append(q.pending, queuedEvent{ctx: ctx, e: e})
	}
}

// deliver hands every queued event to f, in order, and returns once the
// events queued before it was called have been handed over: by this call,
// or by one that was delivering already and took them along.
func (q *eventQueue) deliver(f EventFunc) {
	if f == nil {
		return
	}
	q.delivering.Lock()
	defer q.delivering.Unlock()
	q.mu.Lock()
	batch := q.pending
	q.pending = nil
	q.mu.Unlock()
	for _, qe := range batch {
		f(qe.ctx, qe.e)
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
