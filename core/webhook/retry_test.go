package webhook

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestRetryScheduleIsDocumented(t *testing.T) {
	t.Parallel()
	// docs/files-webhooks-limits.md#webhooks: retries at 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h.
	want := []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour}
	if len(RetryDelays) != len(want) || MaxAttempts != 8 {
		t.Fatalf("RetryDelays has %d entries (MaxAttempts %d), want %d (8)", len(RetryDelays), MaxAttempts, len(want))
	}
	for i, d := range want {
		if RetryDelays[i] != d {
			t.Errorf("RetryDelays[%d] = %s, want %s", i, RetryDelays[i], d)
		}
	}
}

func TestNext(t *testing.T) {
	t.Parallel()
	failed := Result{StatusCode: 500}
	noAnswer := Result{Err: fmt.Errorf("POST to hooks.example.com: %w", context.DeadlineExceeded)}
	tests := []struct {
		name       string
		attempt    int
		res        Result
		want       Decision // Reason checked by wantReason
		wantReason string   // substring of Decision.Reason
	}{
		// The whole schedule, for a 500 and for no answer at all.
		{name: "500 after attempt 1", attempt: 1, res: failed, want: Decision{Retry: true, Delay: 5 * time.Second}, wantReason: "HTTP 500; attempt 1 of 8, next in 5s"},
		{name: "500 after attempt 2", attempt: 2, res: failed, want: Decision{Retry: true, Delay: 5 * time.Minute}, wantReason: "attempt 2 of 8"},
		{name: "500 after attempt 3", attempt: 3, res: failed, want: Decision{Retry: true, Delay: 30 * time.Minute}},
		{name: "500 after attempt 4", attempt: 4, res: failed, want: Decision{Retry: true, Delay: 2 * time.Hour}},
		{name: "500 after attempt 5", attempt: 5, res: failed, want: Decision{Retry: true, Delay: 5 * time.Hour}},
		{name: "500 after attempt 6", attempt: 6, res: failed, want: Decision{Retry: true, Delay: 10 * time.Hour}},
		{name: "500 after attempt 7", attempt: 7, res: failed, want: Decision{Retry: true, Delay: 10 * time.Hour}, wantReason: "attempt 7 of 8, next in 10h0m0s"},
		{name: "500 after attempt 8: give up", attempt: 8, res: failed, want: Decision{}, wantReason: "HTTP 500; gave up after 8 attempts"},
		{name: "past the schedule", attempt: 12, res: failed, want: Decision{}, wantReason: "gave up"},
		{name: "attempt 0 counts as the first", attempt: 0, res: failed, want: Decision{Retry: true, Delay: 5 * time.Second}},
		{name: "timeout after attempt 1", attempt: 1, res: noAnswer, want: Decision{Retry: true, Delay: 5 * time.Second}, wantReason: "context deadline exceeded"},
		{name: "timeout after attempt 8", attempt: 8, res: noAnswer, want: Decision{}, wantReason: "gave up after 8 attempts"},
		{name: "refused address", attempt: 1, res: Result{Err: &AddressError{Host: "a.test", Reason: "private"}}, want: Decision{Retry: true, Delay: 5 * time.Second}, wantReason: "private address"},
		{name: "zero result", attempt: 1, res: Result{}, want: Decision{Retry: true, Delay: 5 * time.Second}, wantReason: "no response"},

		// Success and the statuses with a rule of their own.
		{name: "200", attempt: 1, res: Result{StatusCode: 200}, want: Decision{}, wantReason: "delivered: HTTP 200"},
		{name: "204 on the last attempt", attempt: 8, res: Result{StatusCode: 204}, want: Decision{}, wantReason: "delivered"},
		{name: "299", attempt: 3, res: Result{StatusCode: 299}, want: Decision{}},
		{name: "410 disables", attempt: 1, res: Result{StatusCode: 410}, want: Decision{Disable: true}, wantReason: "410 Gone"},
		{name: "410 on the last attempt", attempt: 8, res: Result{StatusCode: 410}, want: Decision{Disable: true}},
		{name: "302 is a failure", attempt: 1, res: Result{StatusCode: 302}, want: Decision{Retry: true, Delay: 5 * time.Second}, wantReason: "redirects are not followed"},
		{name: "404 is retried", attempt: 2, res: Result{StatusCode: 404}, want: Decision{Retry: true, Delay: 5 * time.Minute}},

		// Retry-After: max(Retry-After, schedule), capped.
		{name: "429 asks for longer", attempt: 1, res: Result{StatusCode: 429, RetryAfter: 2 * time.Minute}, want: Decision{Retry: true, Delay: 2 * time.Minute}},
		{name: "503 asks for longer", attempt: 2, res: Result{StatusCode: 503, RetryAfter: time.Hour}, want: Decision{Retry: true, Delay: time.Hour}},
		{name: "429 asks for shorter: schedule wins", attempt: 3, res: Result{StatusCode: 429, RetryAfter: time.Second}, want: Decision{Retry: true, Delay: 30 * time.Minute}},
		{name: "429 without Retry-After", attempt: 1, res: Result{StatusCode: 429}, want: Decision{Retry: true, Delay: 5 * time.Second}},
		{name: "503 asks for a week: capped", attempt: 1, res: Result{StatusCode: 503, RetryAfter: 7 * 24 * time.Hour}, want: Decision{Retry: true, Delay: MaxRetryAfter}},
		{name: "500 with Retry-After: ignored", attempt: 1, res: Result{StatusCode: 500, RetryAfter: time.Hour}, want: Decision{Retry: true, Delay: 5 * time.Second}},
		{name: "429 on the last attempt: give up", attempt: 8, res: Result{StatusCode: 429, RetryAfter: time.Minute}, want: Decision{}, wantReason: "gave up"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Next(tt.attempt, tt.res)
			if got.Retry != tt.want.Retry || got.Delay != tt.want.Delay || got.Disable != tt.want.Disable {
				t.Fatalf("Next(%d, %+v) = %+v, want %+v", tt.attempt, tt.res, got, tt.want)
			}
			if got.Reason == "" || !strings.Contains(got.Reason, tt.wantReason) {
				t.Fatalf("Next(%d, %+v).Reason = %q, want one containing %q", tt.attempt, tt.res, got.Reason, tt.wantReason)
			}
		})
	}
}

// A failing endpoint that keeps failing gets exactly the documented schedule:
// eight attempts spread over about 27.6 hours, then nothing.
func TestNextWalksTheWholeSchedule(t *testing.T) {
	t.Parallel()
	var total time.Duration
	attempts := 1
	for {
		d := Next(attempts, Result{StatusCode: 503})
		if !d.Retry {
			break
		}
		total += d.Delay
		attempts++
	}
	if want := 27*time.Hour + 35*time.Minute + 5*time.Second; attempts != 8 || total != want {
		t.Fatalf("schedule made %d attempts over %s, want 8 over %s", attempts, total, want)
	}
	if total >= DisableAfter {
		t.Fatalf("schedule of one delivery (%s) reaches DisableAfter (%s)", total, DisableAfter)
	}
}

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name  string
		value string
		want  time.Duration
	}{
		{name: "absent", value: "", want: 0},
		{name: "seconds", value: "120", want: 2 * time.Minute},
		{name: "zero seconds", value: "0", want: 0},
		{name: "spaces around", value: " 30 ", want: 30 * time.Second},
		{name: "exactly the cap", value: "86400", want: MaxRetryAfter},
		{name: "past the cap", value: "86401", want: MaxRetryAfter},
		{name: "overflowing", value: "99999999999999999999999", want: MaxRetryAfter},
		{name: "negative", value: "-5", want: 0},
		{name: "plus sign", value: "+5", want: 0},
		{name: "fraction", value: "1.5", want: 0},
		{name: "garbage", value: "soon", want: 0},
		{name: "IMF date", value: now.Add(90 * time.Second).Format(http.TimeFormat), want: 90 * time.Second},
		{name: "RFC 850 date", value: "Sunday, 01-Mar-26 12:05:00 GMT", want: 5 * time.Minute},
		{name: "asctime date", value: "Sun Mar  1 13:00:00 2026", want: time.Hour},
		{name: "date in the past", value: now.Add(-time.Hour).Format(http.TimeFormat), want: 0},
		{name: "date a year ahead", value: now.AddDate(1, 0, 0).Format(http.TimeFormat), want: MaxRetryAfter},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := parseRetryAfter(tt.value, now); got != tt.want {
				t.Fatalf("parseRetryAfter(%q) = %s, want %s", tt.value, got, tt.want)
			}
		})
	}
}

// FuzzParseRetryAfter checks that any header value gives a wait between 0
// and MaxRetryAfter, and that small second counts are read exactly.
func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"120", "0", "", "Sun, 01 Mar 2026 12:01:30 GMT", "Sunday, 01-Mar-26 12:05:00 GMT",
		"Sun Mar  1 13:00:00 2026", "-1", "1e9", "99999999999999999999", " 7 "} {
		f.Add(s)
	}
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, v string) {
		got := parseRetryAfter(v, now)
		if got < 0 || got > MaxRetryAfter {
			t.Fatalf("parseRetryAfter(%q) = %s, outside [0, %s]", v, got, MaxRetryAfter)
		}
		var secs int
		if n, err := fmt.Sscanf(strings.TrimSpace(v), "%d", &secs); err == nil && n == 1 &&
			fmt.Sprint(secs) == strings.TrimSpace(v) && secs >= 0 && secs <= 86400 {
			if want := time.Duration(secs) * time.Second; got != want {
				t.Fatalf("parseRetryAfter(%q) = %s, want %s", v, got, want)
			}
		}
	})
}

func TestResultOK(t *testing.T) {
	t.Parallel()
	for status, want := range map[int]bool{0: false, 199: false, 200: true, 204: true, 299: true, 300: false, 410: false, 500: false} {
		if got := (Result{StatusCode: status}).OK(); got != want {
			t.Errorf("Result{StatusCode: %d}.OK() = %v, want %v", status, got, want)
		}
	}
	if (Result{Err: errors.New("x")}).OK() {
		t.Errorf("a Result with only an error is OK")
	}
}
