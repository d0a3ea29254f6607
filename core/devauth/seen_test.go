package devauth

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestSeenSet(t *testing.T) {
	now := time.Now()
	s := newSeenSet(3)
	if !s.add("a", now.Add(time.Minute), now) {
		t.Fatal("first add of a reported seen")
	}
	if s.add("a", now.Add(time.Minute), now) {
		t.Fatal("second add of a reported new")
	}
	if !s.add("a", now.Add(2*time.Minute), now.Add(time.Minute)) {
		t.Fatal("add of a after it expired reported seen")
	}
	s.add("b", now.Add(10*time.Minute), now)
	s.add("c", now.Add(5*time.Minute), now)
	s.add("d", now.Add(10*time.Minute), now) // full: evicts the soonest to expire
	if s.len() != 3 {
		t.Fatalf("len = %d, want 3", s.len())
	}
	if s.has("a", now) {
		t.Errorf("a (soonest to expire) still remembered")
	}
	for _, id := range []string{"b", "c", "d"} {
		if !s.has(id, now) {
			t.Errorf("%s forgotten", id)
		}
	}
}

// TestHammerSeenSet checks that concurrent adds of the same ids let each
// through exactly once and keep the set bounded.
func TestHammerSeenSet(t *testing.T) {
	const workers, ids = 16, 500
	s := newSeenSet(ids * 2)
	now := time.Now()
	var wins [ids]atomic.Int32
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range ids {
				if s.add(fmt.Sprint(i), now.Add(time.Hour), now) {
					wins[i].Add(1)
				}
				s.has(fmt.Sprint(i), now)
			}
		}()
	}
	wg.Wait()
	for i := range ids {
		if n := wins[i].Load(); n != 1 {
			t.Fatalf("id %d added %d times, want once", i, n)
		}
	}

	small := newSeenSet(10)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				small.add(fmt.Sprint(w, "-", i), now.Add(time.Duration(i)*time.Second), now)
			}
		}()
	}
	wg.Wait()
	if n := small.len(); n > 10 {
		t.Fatalf("len = %d, want at most 10", n)
	}
}
