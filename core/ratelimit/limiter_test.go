package ratelimit_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // driver "pgx"

	"github.com/kobana/kadu/core/ratelimit"
)

// The interface core/mcp consumes, restated so this package does not import
// core/mcp (which sits above it).
var _ interface {
	AllowIP(ctx context.Context, ip string) (ok bool, retryAfter time.Duration)
	AllowOrg(ctx context.Context, orgID string) (ok bool, retryAfter time.Duration)
} = (*ratelimit.Limiter)(nil)

func newLimiter(t testing.TB, opts ratelimit.Options) *ratelimit.Limiter {
	t.Helper()
	l, err := ratelimit.New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		if err := l.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return l
}

func TestMemory(t *testing.T) {
	runSuite(t, func(t *testing.T, opts ratelimit.Options) *ratelimit.Limiter {
		return newLimiter(t, opts)
	})
}

func TestNewRefusesBadOptions(t *testing.T) {
	tests := []struct {
		name string
		opts ratelimit.Options
		want []string // each must appear in the error
	}{
		{name: "negative IP limit", opts: ratelimit.Options{IPPerMinute: -1}, want: []string{"Options.IPPerMinute is -1", "0 for the default 60"}},
		{name: "negative burst window", opts: ratelimit.Options{BurstWindow: -time.Second}, want: []string{"Options.BurstWindow is -1s"}},
		{name: "burst window over a minute", opts: ratelimit.Options{BurstWindow: 2 * time.Minute}, want: []string{"Options.BurstWindow is 2m0s", "(0, 1m]"}},
		{name: "negative MaxKeys", opts: ratelimit.Options{MaxKeys: -3}, want: []string{"Options.MaxKeys is -3"}},
		{name: "every field at once", opts: ratelimit.Options{IPPerMinute: -1, MaxKeys: -1}, want: []string{"IPPerMinute", "MaxKeys"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := ratelimit.New(tt.opts)
			if err == nil {
				l.Close()
				t.Fatal("New accepted the options")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

func TestDefaultIPLimit(t *testing.T) {
	l := newLimiter(t, ratelimit.Options{Now: newClock().Now})
	if n := exhaust(t, func() (bool, time.Duration) { return l.AllowIP(t.Context(), "203.0.113.7") }, 100); n != 10 {
		t.Errorf("default IP limit let %d requests through at once, want 10 (60/min, 10 s burst)", n)
	}
}

// syncBuffer is a log sink safe for the Limiter's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestPlanLookupErrorAllows(t *testing.T) {
	clk := newClock()
	var logs syncBuffer
	l := newLimiter(t, ratelimit.Options{
		PerMinute: func(context.Context, string) (int, error) { return 0, errors.New("plan cache: org_1 not loaded") },
		Now:       clk.Now,
		Logger:    slog.New(slog.NewTextHandler(&logs, nil)),
	})
	for i := range 50 {
		if ok, _ := l.AllowOrg(t.Context(), "org_1"); !ok {
			t.Fatalf("request %d refused while the plan lookup fails: a lookup outage must not refuse clients", i)
		}
	}
	if got := strings.Count(logs.String(), "level=WARN"); got != 1 {
		t.Errorf("%d warnings for 50 failed lookups within 10 s, want 1:\n%s", got, logs.String())
	}
	clk.Advance(10 * time.Second)
	l.AllowOrg(t.Context(), "org_1")
	out := logs.String()
	if !strings.Contains(out, "suppressed=49") || !strings.Contains(out, "org_id=org_1") || !strings.Contains(out, "not loaded") {
		t.Errorf("second warning does not count the 49 left out, or lacks the org and error:\n%s", out)
	}
}

// TestDatabaseDownFailsOpen: with the shared database unreachable, each
// replica still limits on its own (the burst, then refusals), nothing is
// refused for the outage itself, and the warning names no address.
func TestDatabaseDownFailsOpen(t *testing.T) {
	db, err := sql.Open("pgx", "postgres://kadu:secret@127.0.0.1:1/kadu?sslmode=disable&connect_timeout=2")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	clk := newClock()
	var logs syncBuffer
	l := newLimiter(t, ratelimit.Options{
		PerMinute: perMinute(60),
		DB:        db,
		Now:       clk.Now,
		Logger:    slog.New(slog.NewTextHandler(&logs, nil)),
	})
	if n := exhaust(t, func() (bool, time.Duration) { return l.AllowOrg(t.Context(), "org_1") }, 100); n != 10 {
		t.Errorf("with the database down, org got %d at once; want this replica's burst of 10", n)
	}
	if n := exhaust(t, func() (bool, time.Duration) { return l.AllowIP(t.Context(), "203.0.113.7") }, 100); n != 10 {
		t.Errorf("with the database down, address got %d at once; want 10", n)
	}
	out := logs.String()
	if strings.Count(out, "level=WARN") != 1 || !strings.Contains(out, "database check failed") {
		t.Errorf("want exactly one warning about the database, got:\n%s", out)
	}
	if strings.Contains(out, "203.0.113.7") || strings.Contains(out, "secret") {
		t.Errorf("warning leaks a client address or the password:\n%s", out)
	}
}

// TestCanceledRequestIsNotAnOutage: a client that hangs up mid-check is
// not worth a warning.
func TestCanceledRequestIsNotAnOutage(t *testing.T) {
	db, err := sql.Open("pgx", "postgres://kadu@127.0.0.1:1/kadu?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	var logs syncBuffer
	l := newLimiter(t, ratelimit.Options{DB: db, Now: newClock().Now, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if ok, _ := l.AllowIP(ctx, "203.0.113.7"); !ok {
		t.Errorf("refused")
	}
	if logs.String() != "" {
		t.Errorf("logged for a canceled request:\n%s", logs.String())
	}
}

func TestCloseTwiceAndAfter(t *testing.T) {
	l, err := ratelimit.New(ratelimit.Options{PerMinute: perMinute(60), Now: newClock().Now})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	// Requests still in flight during shutdown are decided.
	if n := exhaust(t, func() (bool, time.Duration) { return l.AllowOrg(t.Context(), "org_1") }, 100); n != 10 {
		t.Errorf("after Close: %d allowed, want the burst of 10", n)
	}
}

// TestHammerMemory: many goroutines on one key with the clock stopped get
// exactly the burst between them, never more (run with -race).
func TestHammerMemory(t *testing.T) {
	clk := newClock()
	l := newLimiter(t, ratelimit.Options{PerMinute: perMinute(600), Now: clk.Now})
	var allowed atomic.Int64
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 2000 {
				if ok, _ := l.AllowOrg(t.Context(), "org_hot"); ok {
					allowed.Add(1)
				}
				// Other keys share the shards' locks meanwhile.
				l.AllowIP(t.Context(), "198.51.100."+string(rune('0'+g))+string(rune('0'+i%10)))
			}
		})
	}
	wg.Wait()
	if got := allowed.Load(); got != 100 {
		t.Errorf("%d requests allowed on one key with the clock stopped, want exactly the burst of 100", got)
	}
}
