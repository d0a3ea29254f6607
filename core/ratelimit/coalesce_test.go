package ratelimit

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeRow is one key's row in rate_limits, decided as checkSQL decides it,
// at a fixed now, counting statements and the largest batch.
type fakeRow struct {
	mu         sync.Mutex
	tat, now   int64
	statements int
	// gate, when set, holds every statement until it is closed.
	gate chan struct{}
	// entered gets a value when a statement starts (buffered by the test).
	entered chan struct{}
}

func (f *fakeRow) run(_ context.Context, r rule) (bool, int64, error) {
	if f.entered != nil {
		f.entered <- struct{}{}
	}
	if f.gate != nil {
		<-f.gate
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.statements++
	next, ok, wait := r.check(f.tat, f.now)
	f.tat = next
	return ok, wait, nil
}

// startBatch holds a first request in flight and queues n more behind it,
// returning when all n are queued.
func startBatch(t *testing.T, c *coalescer, row *fakeRow, r rule, n int) (results chan bool, release func()) {
	t.Helper()
	row.gate = make(chan struct{})
	row.entered = make(chan struct{}, n+2)
	results = make(chan bool, n+1)
	go func() {
		ok, _, _ := c.check(context.Background(), "org:a", r, row.run)
		results <- ok
	}()
	<-row.entered // the first request is in flight
	for range n {
		go func() {
			ok, _, _ := c.check(context.Background(), "org:a", r, row.run)
			results <- ok
		}()
	}
	// Wait until all n have joined the batch behind the flight.
	deadline := time.Now().Add(5 * time.Second)
	for {
		c.mu.Lock()
		f := c.keys["org:a"]
		joined := int64(0)
		if f != nil && f.next != nil {
			joined = f.next.n
		}
		c.mu.Unlock()
		if joined == int64(n) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d requests joined the batch", joined, n)
		}
		time.Sleep(time.Millisecond)
	}
	return results, func() { close(row.gate) }
}

func count(results chan bool, n int) (allowed int) {
	for range n {
		if <-results {
			allowed++
		}
	}
	return allowed
}

// TestCoalescedRequestsShareOneStatement: requests of one key that arrive
// while its check is in flight go to the database together.
func TestCoalescedRequestsShareOneStatement(t *testing.T) {
	c := newCoalescer()
	row := &fakeRow{now: 1_000_000}
	r := newRule(600, 10*time.Second) // burst 100
	results, release := startBatch(t, c, row, r, 20)
	release()
	if got := count(results, 21); got != 21 {
		t.Fatalf("%d of 21 allowed, want all (burst 100)", got)
	}
	if row.statements != 2 {
		t.Fatalf("%d statements for 21 requests, want 2 (the one in flight, then one for the 20 behind it)", row.statements)
	}
	if want := row.now + 21*r.interval; row.tat != want {
		t.Fatalf("TAT %d after 21 requests, want %d (21 intervals charged)", row.tat, want)
	}
	if len(c.keys) != 0 {
		t.Fatalf("coalescer still tracks %d keys with nothing in flight", len(c.keys))
	}
}

// TestCoalescedAsStrictAsOneByOne: a batch that does not fit whole is
// decided request by request, so exactly the requests GCRA allows at that
// instant get through, the same count as one statement each.
func TestCoalescedAsStrictAsOneByOne(t *testing.T) {
	for _, tc := range []struct {
		name    string
		used    int64 // requests already charged at now
		queued  int
		allowed int
	}{
		{"fits whole", 0, 8, 9},
		{"fills the burst exactly", 0, 9, 10},
		{"one too many", 0, 10, 10},
		{"half spent", 5, 9, 5},
		{"spent", 10, 5, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRule(60, 10*time.Second) // burst 10
			now := int64(100 * microsPerMinute)
			row := &fakeRow{now: now}
			if tc.used > 0 {
				row.tat = now + tc.used*r.interval
			}
			results, release := startBatch(t, newCoalescer(), row, r, tc.queued)
			release()
			if got := count(results, tc.queued+1); got != tc.allowed {
				t.Fatalf("%d of %d allowed, want %d", got, tc.queued+1, tc.allowed)
			}
			if want := max(row.now, now+tc.used*r.interval) + int64(tc.allowed)*r.interval; tc.allowed > 0 && row.tat != want {
				t.Fatalf("TAT %d, want %d", row.tat, want)
			}
		})
	}
}

// TestBatchNeverExceedsBurst: past the burst, a request decides alone
// rather than joining a batch that could never fit.
func TestBatchNeverExceedsBurst(t *testing.T) {
	c := newCoalescer()
	row := &fakeRow{now: 1_000_000}
	r := newRule(6, 10*time.Second) // burst 1
	results, release := startBatch(t, c, row, r, 1)
	// A third request finds the batch full (burst 1) and runs alone: it
	// reaches the (held) database now rather than waiting to join.
	go func() {
		ok, _, _ := c.check(context.Background(), "org:a", r, row.run)
		results <- ok
	}()
	select {
	case <-row.entered:
	case <-time.After(5 * time.Second):
		t.Fatal("the request past the burst waited instead of running alone")
	}
	release()
	if got := count(results, 3); got != 1 {
		t.Fatalf("%d of 3 allowed with a burst of 1, want 1", got)
	}
}

// TestBatchErrorReachesEveryRequest: a failing statement fails every request
// of the batch, so each one falls back to the replica's own decision.
func TestBatchErrorReachesEveryRequest(t *testing.T) {
	c := newCoalescer()
	gate := make(chan struct{})
	entered := make(chan struct{}, 8)
	var calls atomic.Int32
	boom := errors.New("database down")
	run := func(context.Context, rule) (bool, int64, error) {
		calls.Add(1)
		entered <- struct{}{}
		<-gate
		return false, 0, boom
	}
	r := newRule(600, 10*time.Second)
	errs := make(chan error, 4)
	for i := range 4 {
		go func() {
			_, _, err := c.check(context.Background(), "org:a", r, run)
			errs <- err
		}()
		if i == 0 {
			<-entered
		}
	}
	for {
		c.mu.Lock()
		n := int64(0)
		if f := c.keys["org:a"]; f != nil && f.next != nil {
			n = f.next.n
		}
		c.mu.Unlock()
		if n == 3 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	close(gate)
	for range 4 {
		if err := <-errs; !errors.Is(err, boom) {
			t.Fatalf("error %v, want the statement's", err)
		}
	}
	if got := calls.Load(); got != 2 {
		t.Fatalf("%d statements, want 2", got)
	}
}

// TestWaiterThatGivesUp: a request whose caller has gone stops waiting; the
// batch it joined is still decided for the others.
func TestWaiterThatGivesUp(t *testing.T) {
	c := newCoalescer()
	row := &fakeRow{now: 1_000_000}
	r := newRule(600, 10*time.Second)
	results, release := startBatch(t, c, row, r, 1)
	ctx, cancel := context.WithCancel(context.Background())
	gaveUp := make(chan error, 1)
	go func() {
		_, _, err := c.check(ctx, "org:a", r, row.run)
		gaveUp <- err
	}()
	cancel()
	select {
	case err := <-gaveUp:
		if err == nil {
			// It may have joined after the flight landed; then it ran.
			t.Log("the request ran before its context ended")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a waiter whose context ended kept waiting")
	}
	release()
	if got := count(results, 2); got != 2 {
		t.Fatalf("%d of 2 allowed, want 2", got)
	}
}

func TestBatchRule(t *testing.T) {
	r := newRule(60, 10*time.Second) // T = 1 s, τ = 9 s
	for n := int64(1); n <= r.burst(); n++ {
		b := batchRule(r, n)
		for _, used := range []int64{0, 1, 5, 9, 10} {
			now := int64(1_000 * microsPerSecond)
			tat := now + used*r.interval
			_, ok, _ := b.check(tat, now)
			// One by one at the same instant.
			want, t1 := true, tat
			for range n {
				var o bool
				t1, o, _ = r.check(t1, now)
				want = want && o
			}
			if ok != want {
				t.Fatalf("n=%d used=%d: batch allowed=%v, one by one all allowed=%v", n, used, ok, want)
			}
		}
	}
}
