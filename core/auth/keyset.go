package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	jose "github.com/go-jose/go-jose/v4"
)

const (
	keyMaxAge       = time.Hour        // cached keys older than this are refreshed in the background
	fetchTimeout    = 15 * time.Second // bound on one discovery + JWKS fetch, whatever the client's timeout
	maxJWKSBytes    = 1 << 20          // JWKS and metadata bodies above this are refused
	minRSAKeyBits   = 2048
	maxRedirectHops = 5
)

// remoteKeySet is an oidc.KeySet backed by the issuer's JWKS over HTTP.
//
// It caches the keys of the last successful fetch. A token whose "kid" is
// not cached causes a refetch, at most once per minInterval however many
// tokens ask; callers that arrive while a fetch runs wait for it and share
// its result. Keys older than maxAge are refreshed in the background while
// the cached ones keep serving. A failed fetch keeps the old keys.
//
// Safe for concurrent use. A fetch runs in its own goroutine, bounded by
// fetchTimeout, so a caller giving up (context cancelled) does not cancel
// the fetch for the others.
type remoteKeySet struct {
	// fixed at creation
	client      *http.Client
	issuer      string
	algs        []jose.SignatureAlgorithm
	minInterval time.Duration
	maxAge      time.Duration
	now         func() time.Time
	logger      *slog.Logger

	mu          sync.Mutex // guards the fields below
	jwksURL     string     // configured, or discovered by the first successful fetch
	cached      []jose.JSONWebKey
	fetchedAt   time.Time     // last successful fetch; zero before the first
	attemptedAt time.Time     // last fetch started; zero before the first
	lastErr     error         // result of the last finished fetch
	inflight    chan struct{} // non-nil while a fetch runs; closed when it ends
}

var _ oidc.KeySet = (*remoteKeySet)(nil)

// VerifySignature implements oidc.KeySet: it verifies jwt with the cached
// key named by its "kid" (every cached key when there is none), fetching
// keys as keys does.
func (s *remoteKeySet) VerifySignature(ctx context.Context, jwt string) ([]byte, error) {
	jws, err := jose.ParseSignedCompact(jwt, s.algs)
	if err != nil {
		return nil, err
	}
	if len(jws.Signatures) != 1 {
		return nil, errors.New("want exactly one signature")
	}
	hdr := jws.Signatures[0].Protected
	keys, ok := resolvedKeysFrom(ctx, hdr.KeyID)
	if !ok {
		if keys, err = s.keys(ctx, hdr.KeyID); err != nil {
			return nil, err
		}
	}
	for _, k := range keys {
		if k.Algorithm != "" && k.Algorithm != hdr.Algorithm {
			continue
		}
		if payload, err := jws.Verify(k.Key); err == nil {
			return payload, nil
		}
	}
	return nil, errors.New("no key in the issuer's JWKS verifies the signature")
}

// keys returns the cached keys with this kid (all keys when kid is empty),
// fetching the JWKS when the cache has none and the rate limit allows.
// Errors wrap ErrInvalidToken (the issuer has no such key) or
// ErrKeysUnavailable (the keys could not be fetched).
func (s *remoteKeySet) keys(ctx context.Context, kid string) ([]jose.JSONWebKey, error) {
	waited := false
	for {
		s.mu.Lock()
		now := s.now()
		if found := s.matchLocked(kid); len(found) > 0 {
			if s.inflight == nil && !s.fetchedAt.IsZero() && now.Sub(s.fetchedAt) >= s.maxAge && s.mayFetchLocked(now) {
				s.startFetchLocked(ctx, now) // refresh in the background; keep serving
			}
			s.mu.Unlock()
			return found, nil
		}
		wait := s.inflight
		if wait == nil && !waited && s.mayFetchLocked(now) {
			wait = s.startFetchLocked(ctx, now)
		}
		if wait == nil || waited {
			lastErr := s.lastErr
			s.mu.Unlock()
			if lastErr != nil {
				return nil, fmt.Errorf("%w: %w", ErrKeysUnavailable, lastErr)
			}
			return nil, invalid("the issuer's JWKS has no key with kid %q", clip(kid))
		}
		s.mu.Unlock()
		select {
		case <-wait:
			waited = true
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: waiting for the JWKS: %w", ErrKeysUnavailable, ctx.Err())
		}
	}
}

type resolvedKeysKey struct{}

// resolvedKeys are the keys Verifier.Verify looked up for a token's kid.
type resolvedKeys struct {
	kid  string
	keys []jose.JSONWebKey
}

// withResolvedKeys returns ctx carrying the keys found for kid, for
// VerifySignature to use rather than looking them up again.
func withResolvedKeys(ctx context.Context, kid string, keys []jose.JSONWebKey) context.Context {
	return context.WithValue(ctx, resolvedKeysKey{}, resolvedKeys{kid: kid, keys: keys})
}

// resolvedKeysFrom returns the keys ctx carries for kid, if any.
func resolvedKeysFrom(ctx context.Context, kid string) ([]jose.JSONWebKey, bool) {
	r, ok := ctx.Value(resolvedKeysKey{}).(resolvedKeys)
	if !ok || r.kid != kid {
		return nil, false
	}
	return r.keys, true
}

func (s *remoteKeySet) matchLocked(kid string) []jose.JSONWebKey {
	if kid == "" {
		return s.cached
	}
	var out []jose.JSONWebKey
	for _, k := range s.cached {
		if k.KeyID == kid {
			out = append(out, k)
		}
	}
	return out
}

func (s *remoteKeySet) mayFetchLocked(now time.Time) bool {
	return s.attemptedAt.IsZero() || now.Sub(s.attemptedAt) >= s.minInterval
}

// startFetchLocked starts a fetch and returns the channel closed when it
// ends. ctx only lends its values (trace ids); its cancellation is ignored.
func (s *remoteKeySet) startFetchLocked(ctx context.Context, now time.Time) chan struct{} {
	done := make(chan struct{})
	s.inflight = done
	s.attemptedAt = now
	jwksURL := s.jwksURL
	go func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), fetchTimeout)
		defer cancel()
		discovered := jwksURL == ""
		keys, jwksURL, err := s.fetch(ctx, jwksURL)

		s.mu.Lock()
		if err == nil {
			s.jwksURL = jwksURL
			s.cached = keys
			s.fetchedAt = s.now()
		}
		s.lastErr = err
		s.inflight = nil
		s.mu.Unlock()
		close(done)

		if err != nil {
			s.logger.Warn("auth: fetching the issuer's JWKS failed; keeping cached keys",
				"issuer", s.issuer, "error", err)
			return
		}
		s.logger.Info("auth: fetched the issuer's JWKS",
			"issuer", s.issuer, "jwks_url", jwksURL, "discovered", discovered, "keys", len(keys))
	}()
	return done
}

// fetch discovers the JWKS URL when jwksURL is empty, then fetches and
// parses the key set.
func (s *remoteKeySet) fetch(ctx context.Context, jwksURL string) ([]jose.JSONWebKey, string, error) {
	if jwksURL == "" {
		u, err := discoverJWKSURL(ctx, s.client, s.issuer)
		if err != nil {
			return nil, "", err
		}
		jwksURL = u
	}
	body, err := getBody(ctx, s.client, jwksURL, "application/jwk-set+json, application/json")
	if err != nil {
		return nil, "", err
	}
	keys, err := parseJWKS(body, s.logger)
	if err != nil {
		return nil, "", fmt.Errorf("JWKS %s: %w", jwksURL, err)
	}
	return keys, jwksURL, nil
}

// parseJWKS keeps the usable public signing keys of a JWKS: RSA of at least
// minRSAKeyBits, EC and Ed25519, not marked "use": "enc". Keys it cannot
// parse, symmetric keys and keys carrying private material are skipped, not
// fatal; a set with no usable key is an error.
func parseJWKS(body []byte, logger *slog.Logger) ([]jose.JSONWebKey, error) {
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &set); err != nil {
		return nil, fmt.Errorf("not a JWK set: %w", err)
	}
	keys := make([]jose.JSONWebKey, 0, len(set.Keys))
	for i, raw := range set.Keys {
		var k jose.JSONWebKey
		if err := k.UnmarshalJSON(raw); err != nil {
			logger.Debug("auth: skipping a JWKS key", "index", i, "error", err)
			continue
		}
		if reason := unusableKey(&k); reason != "" {
			logger.Debug("auth: skipping a JWKS key", "index", i, "kid", k.KeyID, "reason", reason)
			continue
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("no usable signing key among %d", len(set.Keys))
	}
	return keys, nil
}

func unusableKey(k *jose.JSONWebKey) string {
	if k.Use != "" && k.Use != "sig" {
		return "use is " + k.Use
	}
	if !k.IsPublic() {
		return "not a public key"
	}
	switch pub := k.Key.(type) {
	case *rsa.PublicKey:
		if pub.N.BitLen() < minRSAKeyBits {
			return fmt.Sprintf("RSA key of %d bits", pub.N.BitLen())
		}
	case *ecdsa.PublicKey, ed25519.PublicKey:
	default:
		return fmt.Sprintf("unsupported key type %T", pub)
	}
	return ""
}

// getBody GETs url and returns a 200 response body of at most maxJWKSBytes.
func getBody(ctx context.Context, client *http.Client, url, accept string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	req.Header.Set("Accept", accept)
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: status %d", url, resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s: reading body: %w", url, err)
	}
	if len(body) > maxJWKSBytes {
		return nil, fmt.Errorf("GET %s: body larger than %d bytes", url, maxJWKSBytes)
	}
	return body, nil
}

// sameHostRedirects is the default client's redirect policy: a few hops,
// same scheme and host only, so a metadata or JWKS URL cannot bounce the
// fetch to another server.
func sameHostRedirects(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirectHops {
		return fmt.Errorf("stopped after %d redirects", len(via))
	}
	first := via[0].URL
	if req.URL.Host != first.Host || req.URL.Scheme != first.Scheme {
		return fmt.Errorf("redirect to another origin (%s://%s) refused", req.URL.Scheme, req.URL.Host)
	}
	return nil
}
