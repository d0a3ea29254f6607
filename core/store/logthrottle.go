package store

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// LogThrottleInterval is how often ThrottleHandler lets through a log line
// about unavailable storage with the same message and kind.
const LogThrottleInterval = 10 * time.Second

// ThrottleHandler wraps next so that warnings and errors about unavailable
// storage — a record with an attribute holding an error Classify recognises,
// or a string ClassifyText recognises (the job queue logs its errors as
// text) — reach next at most once per interval for each (message, kind). The
// line that gets through after a quiet spell carries "suppressed": how many
// were dropped since the previous one. Everything else passes untouched.
//
// A full disk makes every write fail, and each failure used to log a line:
// the queue alone wrote about ten a second, which also fills the disk the
// logs share. interval <= 0 means LogThrottleInterval. The handler, and those
// its WithAttrs and WithGroup return, share one state and are safe for
// concurrent use.
func ThrottleHandler(next slog.Handler, interval time.Duration) slog.Handler {
	if interval <= 0 {
		interval = LogThrottleInterval
	}
	return &throttleHandler{next: next, st: &throttleState{every: interval, now: time.Now, seen: map[string]*throttled{}}}
}

type throttleHandler struct {
	next slog.Handler
	st   *throttleState
	kind string // from attributes added with WithAttrs
}

type throttleState struct {
	every time.Duration
	now   func() time.Time

	mu   sync.Mutex            // guards seen
	seen map[string]*throttled // by message + "\x00" + kind
}

type throttled struct {
	at         time.Time // when a line last got through
	suppressed int       // dropped since
}

func (h *throttleHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.next.Enabled(ctx, l)
}

func (h *throttleHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level < slog.LevelWarn {
		return h.next.Handle(ctx, r)
	}
	kind := h.kind
	r.Attrs(func(a slog.Attr) bool {
		if kind == "" {
			kind = attrKind(a)
		}
		return kind == ""
	})
	if kind == "" {
		return h.next.Handle(ctx, r)
	}
	n, pass := h.st.admit(r.Message + "\x00" + kind)
	if !pass {
		return nil
	}
	if n > 0 {
		r = r.Clone()
		r.AddAttrs(slog.Int("suppressed", n))
	}
	return h.next.Handle(ctx, r)
}

// admit reports whether a line with key may pass now, and how many lines
// with key were dropped since the last one that did.
func (s *throttleState) admit(key string) (suppressed int, pass bool) {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.seen[key]
	if t == nil {
		s.seen[key] = &throttled{at: now}
		return 0, true
	}
	if now.Sub(t.at) < s.every {
		t.suppressed++
		return 0, false
	}
	n := t.suppressed
	t.at, t.suppressed = now, 0
	return n, true
}

func (h *throttleHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	kind := h.kind
	for _, a := range attrs {
		if kind == "" {
			kind = attrKind(a)
		}
	}
	return &throttleHandler{next: h.next.WithAttrs(attrs), st: h.st, kind: kind}
}

func (h *throttleHandler) WithGroup(name string) slog.Handler {
	return &throttleHandler{next: h.next.WithGroup(name), st: h.st, kind: h.kind}
}

// attrKind classifies the storage failure an attribute carries, or "".
func attrKind(a slog.Attr) string {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			if k := Classify(err); k != "" {
				return k
			}
			return ClassifyText(err.Error())
		}
	case slog.KindString:
		return ClassifyText(v.String())
	case slog.KindGroup:
		for _, g := range v.Group() {
			if k := attrKind(g); k != "" {
				return k
			}
		}
	}
	return ""
}
