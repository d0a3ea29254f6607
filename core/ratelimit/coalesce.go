package ratelimit

import (
	"context"
	"sync"
)

// checkFunc runs one database check of a key under rule r.
type checkFunc func(ctx context.Context, r rule) (ok bool, wait int64, err error)

// coalescer merges the database checks of one key that arrive while a
// check of that key is already in flight on this replica into one
// statement that charges them all at once.
//
// Without it every request of a busy organisation is a write on the same
// row, and the requests queue on that row's lock inside PostgreSQL, each
// holding a pooled connection while it waits. With it a replica has at most
// one statement per key in flight; the requests that arrive meanwhile wait
// in memory and then go together.
//
// It is exactly as strict as one statement per request: n requests charged
// together at the statement's time are allowed only if n requests arriving
// one after the other at that same instant would all be (batchRule), and
// then move the TAT by n intervals, as they would have. When the batch does
// not fit, every request in it is decided on its own, as without coalescing,
// so a key near its limit gets exactly the requests GCRA allows. A batch
// never holds more than the rule's burst (more could never fit at once) and
// only requests under the same rule (a plan change applies to the next
// batch).
//
// Waiting is bounded by the statements' own checkTimeout: a request that
// joins a batch waits for the flight before it, then for its batch's
// statement, so on a database slower than checkTimeout it fails open after
// up to twice checkTimeout rather than once. Giving the batch only what is
// left of its first request's checkTimeout was tried and rejected: on a busy
// machine it turned slow-but-working checks into fail-opens, which let
// requests over the shared limit (TestPostgres/SharedAcrossReplicas).
type coalescer struct {
	mu   sync.Mutex // guards keys and what it points to
	keys map[string]*flight
}

// flight is the statement in flight for a key.
type flight struct {
	landed chan struct{} // closed when the statement has returned
	next   *batch        // requests waiting for it, to go together; nil: none
}

// batch is requests of one key decided by one statement.
type batch struct {
	r      rule
	n      int64         // requests in the batch; fixed once its flight starts
	flight *flight       // set when the batch becomes the key's flight
	done   chan struct{} // closed once the fields below are set

	ok    bool  // every request of the batch is allowed
	split bool  // the batch did not fit: each request is decided on its own
	wait  int64 // µs until one request would be allowed, when refused
	err   error
}

func newCoalescer() *coalescer {
	return &coalescer{keys: make(map[string]*flight)}
}

// check decides one request of key under r, through run: alone when no
// check of key is in flight, else together with the others that arrive
// before that one returns.
func (c *coalescer) check(ctx context.Context, key string, r rule, run checkFunc) (bool, int64, error) {
	c.mu.Lock()
	f, busy := c.keys[key]
	if !busy {
		f = &flight{landed: make(chan struct{})}
		c.keys[key] = f
		c.mu.Unlock()
		ok, wait, err := run(ctx, r)
		c.land(key, f)
		return ok, wait, err
	}
	b := f.next
	if b != nil && (b.r != r || b.n >= r.burst()) {
		// The waiting batch is full or under another limit: decide alone,
		// as without coalescing.
		c.mu.Unlock()
		return run(ctx, r)
	}
	leader := b == nil
	if leader {
		b = &batch{r: r, done: make(chan struct{})}
		f.next = b
	}
	b.n++
	c.mu.Unlock()

	if leader {
		c.lead(ctx, key, f, b, run)
	} else {
		select {
		case <-b.done:
		case <-ctx.Done():
			// The caller gave up; its request stays charged to the batch.
			return false, 0, ctx.Err()
		}
	}
	switch {
	case b.err != nil:
		return false, 0, b.err
	case b.split:
		return run(ctx, r)
	}
	return b.ok, b.wait, nil
}

// lead waits for the flight before b to land, then decides b in one
// statement. It runs the statement even if its own caller has gone: the
// rest of the batch waits for it.
func (c *coalescer) lead(ctx context.Context, key string, prev *flight, b *batch, run checkFunc) {
	<-prev.landed // within checkTimeout: the statement in flight is bounded by it
	c.mu.Lock()
	n, f := b.n, b.flight // land made b the key's flight: no one joins it any more
	c.mu.Unlock()
	ok, wait, err := run(context.WithoutCancel(ctx), batchRule(b.r, n))
	c.land(key, f)
	b.ok, b.wait, b.err = ok, wait, err
	b.split = err == nil && !ok && n > 1
	close(b.done)
}

// land ends key's flight f: the batch waiting on it, if any, becomes the
// key's flight, otherwise the key has nothing in flight any more.
func (c *coalescer) land(key string, f *flight) {
	c.mu.Lock()
	if b := f.next; b != nil {
		b.flight = &flight{landed: make(chan struct{})}
		c.keys[key] = b.flight
	} else {
		delete(c.keys, key)
	}
	c.mu.Unlock()
	close(f.landed)
}

// batchRule is the rule that charges n requests of r at one instant: they
// are allowed when all n would be, one after the other at that instant
// (TAT − now + (n−1)·T ≤ τ), and then move the TAT by n·T. n must be in
// [1, r.burst()], so the tolerance stays ≥ 0 and a key never seen (an empty
// bucket) always allows the batch, as the statement assumes.
func batchRule(r rule, n int64) rule {
	return rule{interval: n * r.interval, tolerance: r.tolerance - (n-1)*r.interval}
}
