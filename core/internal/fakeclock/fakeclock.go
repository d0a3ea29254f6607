// Package fakeclock owns the one manual clock of the tests: a Clock that
// stands still until a test moves it (Advance, Set) or, when made with
// NewStepping, moves by a fixed step on every reading. It is safe for
// concurrent use, so a server under test may read it while the test moves it.
//
// It is test support: non-test code must not import it (production code takes
// a func() time.Time and defaults to time.Now). The tests that use it drive
// loopback HTTP servers and databases, whose real I/O never lets a
// testing/synctest bubble's time advance, so a clock moved by hand fits them
// where synctest does not.
package fakeclock

import (
	"sync"
	"time"
)

// Clock is a manual clock. Its methods may be called from several goroutines.
type Clock struct {
	mu   sync.Mutex
	now  time.Time
	step time.Duration
}

// New returns a clock standing at t.
func New(t time.Time) *Clock { return &Clock{now: t} }

// NewStepping returns a clock standing at t that moves forward by step after
// every reading: the first Now returns t, the second t+step, and so on. It
// lets a test measure a duration its code takes with two readings.
func NewStepping(t time.Time, step time.Duration) *Clock { return &Clock{now: t, step: step} }

// Now returns the clock's time, then moves it by the clock's step (if any).
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.now
	c.now = c.now.Add(c.step)
	return t
}

// Advance moves the clock by d (backwards if d is negative).
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Set puts the clock at t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}
