package ratelimit

import "time"

// Times and intervals in this package are int64 microseconds: the unit the
// PostgreSQL table stores, so the memory limiter and the SQL statement do
// the same integer arithmetic and decide alike.
const (
	microsPerSecond = int64(time.Second / time.Microsecond)
	microsPerMinute = 60 * microsPerSecond

	// maxPerMinute caps a limit at one request per microsecond, the finest
	// interval the microsecond clock can express. Anything above it is, for
	// a web server, the same as no limit.
	maxPerMinute = int(microsPerMinute)
)

// rule is one GCRA limit (the generic cell rate algorithm of ATM networks,
// as redis-cell and throttled use it). A key's only state is its
// theoretical arrival time (TAT): when the key would be back to an empty
// bucket if it sent nothing more. A request at now is allowed when
// TAT − now ≤ tolerance, and then moves TAT to max(TAT, now) + interval.
//
// Over any window of length w a key gets at most burst + w/interval requests
// (RATIONALE.md has the argument), and a client that spaces its requests by
// interval is never refused.
type rule struct {
	interval  int64 // T: one request per interval on average, µs
	tolerance int64 // τ = (burst−1)·T: how far ahead of now TAT may run, µs
}

// newRule returns the rule for perMinute requests per minute with a burst
// of burstWindow's worth of them: burst = max(1, ⌊perMinute·burstWindow/1 min⌋).
// perMinute must be > 0 and burstWindow in (0, 1 min].
//
// The interval is rounded up to the microsecond, so rounding never lets
// more than perMinute through.
func newRule(perMinute int, burstWindow time.Duration) rule {
	perMinute = min(perMinute, maxPerMinute)
	n := int64(perMinute)
	interval := (microsPerMinute + n - 1) / n
	burst := max(1, n*burstWindow.Microseconds()/microsPerMinute)
	return rule{interval: interval, tolerance: (burst - 1) * interval}
}

// burst is how many requests a key that has been idle gets at once.
func (r rule) burst() int64 { return r.tolerance/r.interval + 1 }

// check decides one request at now for a key whose TAT is tat (0 for a key
// never seen, or any time ≤ now for one that is idle). It returns the TAT to
// store, whether the request is allowed, and, when it is not, how long until
// one request would be (µs, > 0). A refused request leaves the TAT as it was:
// hammering does not push the next allowed request further away.
//
// The PostgreSQL statement (postgres.go) is this function in SQL.
func (r rule) check(tat, now int64) (next int64, ok bool, wait int64) {
	if tat-now <= r.tolerance {
		return max(tat, now) + r.interval, true, 0
	}
	return tat, false, tat - r.tolerance - now
}

// retryAfter turns a wait in microseconds into what a 429 announces: whole
// seconds, rounded up, at least one. A client that waits that long finds
// one request allowed (unless someone else with the same key spent it).
func retryAfter(wait int64) time.Duration {
	secs := max(1, (wait+microsPerSecond-1)/microsPerSecond)
	return time.Duration(secs) * time.Second
}
