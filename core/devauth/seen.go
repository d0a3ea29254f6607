package devauth

import (
	"sync"
	"time"
)

// seenSet remembers ids until a time after which remembering them no longer
// matters (the code or token they name has expired). It holds at most max
// ids: when full it first forgets expired ids, then the ids that expire
// soonest.
//
// A seenSet is safe for concurrent use. Its memory is per process: what it
// remembers is lost on restart.
type seenSet struct {
	max int // fixed at creation

	mu  sync.Mutex
	ids map[string]time.Time // id → forget after; guarded by mu
}

func newSeenSet(max int) *seenSet {
	return &seenSet{max: max, ids: make(map[string]time.Time)}
}

// add records id until forgetAt and reports whether it was new.
func (s *seenSet) add(id string, forgetAt, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.ids[id]; ok && now.Before(t) {
		return false
	}
	if len(s.ids) >= s.max {
		s.pruneLocked(now)
	}
	s.ids[id] = forgetAt
	return true
}

// has reports whether id is remembered.
func (s *seenSet) has(id string, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.ids[id]
	return ok && now.Before(t)
}

// len returns how many ids are remembered, expired ones included.
func (s *seenSet) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.ids)
}

// pruneLocked forgets expired ids, then, while the set is still full, the
// id that expires soonest. s.mu must be held.
func (s *seenSet) pruneLocked(now time.Time) {
	for id, t := range s.ids {
		if !now.Before(t) {
			delete(s.ids, id)
		}
	}
	for len(s.ids) >= s.max {
		var oldest string
		var oldestAt time.Time
		for id, t := range s.ids {
			if oldest == "" || t.Before(oldestAt) {
				oldest, oldestAt = id, t
			}
		}
		delete(s.ids, oldest)
	}
}
