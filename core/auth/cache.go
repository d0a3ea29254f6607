package auth

import (
	"context"
	"crypto/sha256"
	"sync"
	"time"
)

// CacheOptions configure NewCachingVerifier.
type CacheOptions struct {
	// TTL bounds how long a verification is reused; a token is never
	// reused past its own expiry either. Default 5 minutes.
	TTL time.Duration
	// MaxEntries bounds memory; default 10,000 (about 3 MiB).
	MaxEntries int
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// NewCachingVerifier returns a TokenVerifier that remembers successful
// verifications of next, keyed by the SHA-256 of the token, so a client
// that sends the same token on every request pays the signature check
// (≈100 µs for ES256/RS256) once per TTL instead of on every call.
//
// It never stores a token, only its digest, and never caches a failure (a
// flood of bad tokens cannot evict good ones by filling the cache with
// refusals). Consequences, accepted on purpose: a key the issuer withdraws
// keeps trusting the tokens already seen for at most TTL, which is shorter
// than the hour the JWKS cache already trusts a withdrawn key.
//
// The returned verifier is safe for concurrent use.
func NewCachingVerifier(next TokenVerifier, opts CacheOptions) TokenVerifier {
	if opts.TTL <= 0 {
		opts.TTL = 5 * time.Minute
	}
	if opts.MaxEntries <= 0 {
		opts.MaxEntries = 10_000
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &cachingVerifier{next: next, opts: opts, entries: make(map[[sha256.Size]byte]cacheEntry)}
}

type cachingVerifier struct {
	// fixed at creation
	next TokenVerifier
	opts CacheOptions

	mu      sync.RWMutex // guards entries
	entries map[[sha256.Size]byte]cacheEntry
}

type cacheEntry struct {
	p        *Principal
	deadline time.Time // min(token expiry, verified + TTL)
}

func (c *cachingVerifier) Verify(ctx context.Context, raw string) (*Principal, error) {
	key := sha256.Sum256([]byte(raw))
	now := c.opts.Now()
	c.mu.RLock()
	e, ok := c.entries[key]
	c.mu.RUnlock()
	if ok && now.Before(e.deadline) {
		return e.p, nil
	}
	p, err := c.next.Verify(ctx, raw)
	if err != nil {
		if ok {
			c.mu.Lock()
			delete(c.entries, key)
			c.mu.Unlock()
		}
		return nil, err
	}
	deadline := now.Add(c.opts.TTL)
	if !p.Expiry.IsZero() && p.Expiry.Before(deadline) {
		deadline = p.Expiry
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= c.opts.MaxEntries {
		c.evictLocked(now)
	}
	c.entries[key] = cacheEntry{p: p, deadline: deadline}
	return p, nil
}

// evictLocked drops expired entries and, if that frees too little, about a
// tenth of the rest (map order is random, so this is random eviction).
func (c *cachingVerifier) evictLocked(now time.Time) {
	for k, e := range c.entries {
		if !now.Before(e.deadline) {
			delete(c.entries, k)
		}
	}
	for k := range c.entries {
		if len(c.entries) < c.opts.MaxEntries*9/10 {
			return
		}
		delete(c.entries, k)
	}
}
