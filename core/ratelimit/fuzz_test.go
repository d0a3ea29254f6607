package ratelimit_test

import (
	"testing"
	"time"

	"github.com/kobana/kadu/core/ratelimit"
)

// FuzzWindowBound drives one key with an arbitrary schedule of requests and
// checks the two promises of the limiter:
//
//   - over any window, the requests allowed within it number at most
//     burst + limit × window / 1 min;
//   - a refused client that waits the Retry-After it was given is allowed.
//
// Each byte of script is one moment: the clock moves (b>>2) sixteenths of
// the limit's interval, then (b&3)+1 requests are sent.
func FuzzWindowBound(f *testing.F) {
	f.Add(uint16(60), uint8(10), []byte{0, 0, 0, 0, 64, 64, 3, 255, 7})
	f.Add(uint16(1), uint8(0), []byte{3, 3, 3, 252, 252, 252, 252})
	f.Add(uint16(7), uint8(60), []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13})
	f.Add(uint16(6000), uint8(1), []byte{3, 3, 3, 3, 3, 3, 3, 3, 67, 67, 131})
	f.Fuzz(func(t *testing.T, limit uint16, windowSecs uint8, script []byte) {
		if limit == 0 || len(script) > 256 {
			t.Skip()
		}
		window := time.Duration(windowSecs%61) * time.Second // 0: the default
		clk := newClock()
		l, err := ratelimit.New(ratelimit.Options{PerMinute: perMinute(int(limit)), BurstWindow: window, Now: clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		if window == 0 {
			window = ratelimit.DefaultBurstWindow
		}
		burst := max(1, int64(limit)*int64(window)/int64(time.Minute))
		unit := time.Minute / time.Duration(limit) / 16

		var allowed []time.Time
		var promised time.Time // a refused client may come back from then on; zero: no promise pending
		for _, b := range script {
			// Whole microseconds: the limiter counts in them, so the times this
			// test records are the ones it sees.
			clk.Advance((time.Duration(b>>2) * unit).Truncate(time.Microsecond))
			for range int(b&3) + 1 {
				now := clk.Now()
				ok, retry := l.AllowOrg(t.Context(), "org_1")
				if ok {
					allowed = append(allowed, now)
					promised = time.Time{}
					continue
				}
				if !promised.IsZero() && !now.Before(promised) {
					t.Fatalf("refused at %s though an earlier refusal promised a request from %s", now, promised)
				}
				if promised.IsZero() {
					promised = now.Add(retry)
				}
			}
		}
		// Every window that starts and ends on an allowed request is the
		// tightest of its length: check them all.
		for i := range allowed {
			for j := i; j < len(allowed); j++ {
				n := int64(j - i + 1)
				span := allowed[j].Sub(allowed[i])
				if (n-burst)*int64(time.Minute) > int64(span)*int64(limit) {
					t.Fatalf("%d requests allowed within %s at %d/min with burst %d: more than burst + rate × window",
						n, span, limit, burst)
				}
			}
		}
	})
}
