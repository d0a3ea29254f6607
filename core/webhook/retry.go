package webhook

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// RetryDelays is the retry schedule of docs/files-webhooks-limits.md#webhooks: after failed attempt n
// (1-based) the next attempt waits RetryDelays[n-1]. A delivery therefore
// makes at most len(RetryDelays)+1 = 8 attempts over about 27.6 hours.
//
// It is a package variable only because Go has no constant arrays; callers
// must not change it.
var RetryDelays = [...]time.Duration{
	5 * time.Second,
	5 * time.Minute,
	30 * time.Minute,
	2 * time.Hour,
	5 * time.Hour,
	10 * time.Hour,
	10 * time.Hour,
}

// MaxAttempts is the number of attempts a delivery gets: the first one and
// one per entry of RetryDelays.
const MaxAttempts = len(RetryDelays) + 1

// MaxRetryAfter caps a receiver's Retry-After. A longer wait is read as this
// much: a receiver must not park a delivery for days, and the five-day
// DisableAfter clock keeps running either way.
const MaxRetryAfter = 24 * time.Hour

// DisableAfter is how long an endpoint may fail continuously before it is
// disabled and a webhook.disabled event is emitted: five days. The delivery
// worker measures it from the endpoint's first failure since its last
// success.
const DisableAfter = 5 * 24 * time.Hour

// Decision is what to do after an attempt.
type Decision struct {
	Retry   bool          // schedule another attempt after Delay
	Delay   time.Duration // only when Retry
	Disable bool          // disable the endpoint (it answered 410 Gone)
	Reason  string        // one line for the delivery log
}

// Next says what to do after attempt n (1-based; n < 1 counts as 1) ended
// with res:
//
//   - a 2xx: done, nothing to retry;
//   - 410 Gone: the receiver wants no more; give up and disable the endpoint;
//   - any other answer or no answer (including 3xx, since redirects are not
//     followed): retry after RetryDelays[n-1], or give up after MaxAttempts;
//   - 429 or 503 with Retry-After: wait max(Retry-After, the scheduled delay),
//     Retry-After capped at MaxRetryAfter. The receiver cannot make Kadu retry
//     sooner than the schedule, nor beyond the schedule's last attempt.
//
// Next is deterministic (no jitter), so the schedule is exactly docs/files-webhooks-limits.md#webhooks.
func Next(attempt int, res Result) Decision {
	attempt = max(attempt, 1)
	switch {
	case res.OK():
		return Decision{Reason: fmt.Sprintf("delivered: HTTP %d", res.StatusCode)}
	case res.StatusCode == http.StatusGone:
		return Decision{Disable: true, Reason: "receiver answered 410 Gone: endpoint disabled"}
	}
	failure := describeFailure(res)
	if attempt > len(RetryDelays) {
		return Decision{Reason: fmt.Sprintf("%s; gave up after %d attempts", failure, attempt)}
	}
	delay := RetryDelays[attempt-1]
	if throttled(res.StatusCode) && res.RetryAfter > 0 {
		delay = max(delay, min(res.RetryAfter, MaxRetryAfter))
	}
	return Decision{Retry: true, Delay: delay, Reason: fmt.Sprintf("%s; attempt %d of %d, next in %s",
		failure, attempt, MaxAttempts, delay)}
}

// describeFailure is the first half of a Decision's Reason.
func describeFailure(res Result) string {
	switch {
	case res.StatusCode >= 300 && res.StatusCode < 400:
		return fmt.Sprintf("HTTP %d: redirects are not followed, point the webhook at the final URL", res.StatusCode)
	case res.StatusCode != 0:
		return fmt.Sprintf("HTTP %d", res.StatusCode)
	case res.Err != nil:
		return res.Err.Error()
	default:
		return "no response"
	}
}

// throttled reports whether status invites the receiver's Retry-After.
func throttled(status int) bool {
	return status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable
}

// parseRetryAfter reads a Retry-After value (RFC 9110 §10.2.3): a number of
// seconds or an HTTP date, relative to now. It returns 0 when v is empty,
// malformed or in the past, and at most MaxRetryAfter.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if strings.Trim(v, "0123456789") == "" {
		secs, err := strconv.ParseUint(v, 10, 64)
		if err != nil || secs > uint64(MaxRetryAfter/time.Second) {
			// Only overflow fails here: all digits, too many of them.
			return MaxRetryAfter
		}
		return time.Duration(secs) * time.Second
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0
	}
	return min(max(t.Sub(now), 0), MaxRetryAfter)
}
