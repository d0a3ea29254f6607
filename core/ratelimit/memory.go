package ratelimit

import (
	"hash/maphash"
	"sync"
)

const (
	// shardCount spreads keys over independent locks so concurrent
	// requests for different keys rarely wait for each other.
	shardCount = 64

	// evictSample is how many entries a full shard looks at to choose one
	// to drop (the way Redis approximates LRU): O(1) per insert however
	// large the shard, where a full scan would make an address flood cost
	// a scan per request.
	evictSample = 8
)

// memory holds the TAT of every key seen recently, in one process.
//
// It is safe for concurrent use. Its size is bounded: a shard that is full
// drops an entry before adding one (an expired one if the sample has one,
// else the one closest to expiring, which resets that key to a full burst),
// and sweep drops every expired entry. An entry expires when its TAT is no
// longer in the future, at most burst window + one interval after the key's
// last allowed request, so under normal traffic the table holds only the
// keys active in the last few seconds.
type memory struct {
	// fixed at creation
	seed     maphash.Seed
	perShard int // most entries one shard holds

	shards [shardCount]shard
}

type shard struct {
	mu   sync.Mutex       // guards tats
	tats map[string]int64 // key → TAT (µs)
	_    [48]byte         // keep neighbouring shards' locks off this cache line
}

func newMemory(maxKeys int) *memory {
	m := &memory{seed: maphash.MakeSeed(), perShard: max(1, maxKeys/shardCount)}
	for i := range m.shards {
		m.shards[i].tats = make(map[string]int64)
	}
	return m
}

func (m *memory) shard(key string) *shard {
	return &m.shards[maphash.String(m.seed, key)%shardCount]
}

// check applies r to key at now and records the outcome; see rule.check.
func (m *memory) check(key string, r rule, now int64) (ok bool, wait int64) {
	s := m.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	tat, found := s.tats[key]
	next, ok, wait := r.check(tat, now)
	if !ok {
		return false, wait
	}
	if !found && len(s.tats) >= m.perShard {
		s.evictLocked(now)
	}
	s.tats[key] = next
	return true, 0
}

// evictLocked drops one entry of a full shard. s.mu must be held.
func (s *shard) evictLocked(now int64) {
	victim, oldest, seen := "", int64(0), 0
	for k, tat := range s.tats { // map order is random: a random sample
		if tat <= now {
			victim = k
			break
		}
		if seen == 0 || tat < oldest {
			victim, oldest = k, tat
		}
		if seen++; seen == evictSample {
			break
		}
	}
	delete(s.tats, victim)
}

// sweep drops every entry whose TAT is not in the future (such a key is
// back to a full burst, exactly as if it had never been seen) and returns
// how many it dropped.
func (m *memory) sweep(now int64) int {
	total := 0
	for i := range m.shards {
		s := &m.shards[i]
		s.mu.Lock()
		n := 0
		for k, tat := range s.tats {
			if tat <= now {
				delete(s.tats, k)
				n++
			}
		}
		// A Go map never gives back the room it grew to. After a flood of
		// addresses, copy the few survivors into a fresh map so the memory
		// returns to what the normal traffic needs.
		if n >= 256 && len(s.tats) < n/4 {
			fresh := make(map[string]int64, len(s.tats))
			for k, tat := range s.tats {
				fresh[k] = tat
			}
			s.tats = fresh
		}
		s.mu.Unlock()
		total += n
	}
	return total
}

// len returns how many keys are held.
func (m *memory) len() int {
	n := 0
	for i := range m.shards {
		s := &m.shards[i]
		s.mu.Lock()
		n += len(s.tats)
		s.mu.Unlock()
	}
	return n
}
