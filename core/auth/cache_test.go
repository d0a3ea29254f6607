package auth

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

type countingVerifier struct {
	calls  atomic.Int32
	expiry time.Time
	fail   atomic.Bool
}

func (v *countingVerifier) Verify(ctx context.Context, raw string) (*Principal, error) {
	v.calls.Add(1)
	if v.fail.Load() || raw == "bad" {
		return nil, ErrInvalidToken
	}
	return &Principal{Subject: raw, OrgID: "org", Role: RoleViewer, Expiry: v.expiry}, nil
}

func TestCachingVerifier(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	next := &countingVerifier{expiry: now.Add(2 * time.Minute)}
	v := NewCachingVerifier(next, CacheOptions{TTL: 5 * time.Minute, Now: clock})
	ctx := context.Background()

	for range 3 {
		p, err := v.Verify(ctx, "tok-a")
		if err != nil || p.Subject != "tok-a" {
			t.Fatalf("Verify = %v, %v", p, err)
		}
	}
	if got := next.calls.Load(); got != 1 {
		t.Fatalf("verified %d times, want 1 (the rest from cache)", got)
	}
	if _, err := v.Verify(ctx, "tok-b"); err != nil || next.calls.Load() != 2 {
		t.Fatalf("another token must be verified on its own: calls=%d err=%v", next.calls.Load(), err)
	}
	for range 2 {
		if _, err := v.Verify(ctx, "bad"); !errors.Is(err, ErrInvalidToken) {
			t.Fatalf("bad token: %v", err)
		}
	}
	if got := next.calls.Load(); got != 4 {
		t.Fatalf("failures must not be cached: calls=%d, want 4", got)
	}
	// Past the token's own expiry (before the TTL) the token is verified
	// again, and the verifier's refusal wins.
	now = now.Add(2*time.Minute + time.Second)
	next.fail.Store(true)
	if _, err := v.Verify(ctx, "tok-a"); !errors.Is(err, ErrInvalidToken) {
		t.Fatalf("expired cache entry served: %v", err)
	}
}

func TestCachingVerifierTTL(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	next := &countingVerifier{expiry: now.Add(time.Hour)}
	v := NewCachingVerifier(next, CacheOptions{TTL: time.Minute, Now: func() time.Time { return now }})
	_, _ = v.Verify(context.Background(), "t")
	now = now.Add(61 * time.Second)
	_, _ = v.Verify(context.Background(), "t")
	if got := next.calls.Load(); got != 2 {
		t.Fatalf("calls = %d, want 2: TTL must bound reuse", got)
	}
}

func TestCachingVerifierBounded(t *testing.T) {
	next := &countingVerifier{expiry: time.Now().Add(time.Hour)}
	v := NewCachingVerifier(next, CacheOptions{MaxEntries: 100}).(*cachingVerifier)
	for i := range 1000 {
		_, _ = v.Verify(context.Background(), fmt.Sprint("t", i))
	}
	if n := len(v.entries); n > 100 {
		t.Fatalf("cache holds %d entries, bound is 100", n)
	}
}

func TestHammerCachingVerifier(t *testing.T) {
	next := &countingVerifier{expiry: time.Now().Add(time.Hour)}
	v := NewCachingVerifier(next, CacheOptions{MaxEntries: 50})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				tok := fmt.Sprint("t", (g*i)%80)
				p, err := v.Verify(context.Background(), tok)
				if err != nil || p.Subject != tok {
					t.Errorf("Verify(%s) = %v, %v", tok, p, err)
					return
				}
			}
		}()
	}
	wg.Wait()
}
