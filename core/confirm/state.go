package confirm

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/canonjson"
	"github.com/kobana/kadu/core/seal"
)

// statePrefix marks a requestState this package sealed. Anything else is
// another Catalog's (a bundle's input-required state) and passes through.
const statePrefix = "kc1."

// maxStateLen bounds the requestState Open looks at: a sealed state is
// about 300 bytes, so anything far longer is not one of ours.
const maxStateLen = 2048

// purposeState binds a sealed value to this use: a bundle's requestState,
// or anything else sealed under the same key, never opens here.
const purposeState = "kadu/confirm/requestState/v1"

// errBadState is every reason a requestState does not verify. The client
// gets one message, whatever failed.
var errBadState = errors.New("confirm: requestState does not verify")

// keyRing seals with its first key and opens with any, so that operators
// rotate keys without failing the states in flight: add the new key first,
// keep the old one for at least StateTTL, then remove it.
// Safe for concurrent use; immutable after newKeyRing.
type keyRing struct {
	ring *seal.Ring
}

func newKeyRing(keys [][]byte) (*keyRing, error) {
	if len(keys) == 0 {
		return nil, errors.New("confirm: Options.Keys is empty: give at least one 32-byte key, shared by every replica (Keys[0] seals, every key opens)")
	}
	for i, k := range keys {
		if len(k) != seal.KeyLen {
			return nil, fmt.Errorf("confirm: Options.Keys[%d] has %d bytes: want %d (AES-256)", i, len(k), seal.KeyLen)
		}
	}
	r, err := seal.New(maxStateLen-len(statePrefix), keys...)
	if err != nil {
		return nil, fmt.Errorf("confirm: Options.Keys: %w", err)
	}
	return &keyRing{ring: r}, nil
}

// stateClaims is what a requestState carries: who may answer it (issuer,
// subject, organisation), for which call (tool and argument digest), until
// when, and the nonce its single use is recorded under.
type stateClaims struct {
	Issuer  string `json:"iss"`
	Subject string `json:"sub"`
	Org     string `json:"org"`
	Tool    string `json:"tool"`
	Args    string `json:"args"` // hex SHA-256 of the canonical (RFC 8785) arguments
	Expiry  int64  `json:"exp"`  // Unix seconds
	Nonce   string `json:"nonce"`
}

func (c stateClaims) expiresAt() time.Time { return time.Unix(c.Expiry, 0).UTC() }

// binding is what a state must match when it comes back.
type binding struct {
	p      *auth.Principal
	tool   string
	digest string
}

// newBinding digests args for p's call of tool.
func newBinding(p *auth.Principal, tool string, args json.RawMessage) (binding, error) {
	d, err := canonjson.Digest(args)
	if err != nil {
		return binding{}, err
	}
	return binding{p: p, tool: tool, digest: d}, nil
}

// newClaims returns fresh claims for b, valid for ttl from now, with a new
// random nonce.
func newClaims(b binding, now time.Time, ttl time.Duration) (stateClaims, error) {
	var n [16]byte
	if _, err := rand.Read(n[:]); err != nil {
		return stateClaims{}, fmt.Errorf("confirm: nonce: %w", err)
	}
	return stateClaims{
		Issuer: b.p.Issuer, Subject: b.p.Subject, Org: b.p.OrgID, Tool: b.tool, Args: b.digest,
		Expiry: now.Add(ttl).Unix(), Nonce: hex.EncodeToString(n[:]),
	}, nil
}

// matches reports whether c was sealed for b and is still valid at now.
func (c stateClaims) matches(b binding, now time.Time) bool {
	return c.Issuer == b.p.Issuer && c.Subject == b.p.Subject && c.Org == b.p.OrgID &&
		c.Tool == b.tool && c.Args == b.digest && now.Unix() < c.Expiry && c.Nonce != ""
}

// seal returns c sealed with the first key: statePrefix, then the sealed
// value (core/seal).
func (r *keyRing) seal(c stateClaims) (string, error) {
	sealed, err := r.ring.Seal(purposeState, c)
	if err != nil {
		return "", fmt.Errorf("confirm: %w", err)
	}
	return statePrefix + sealed, nil
}

// open returns the claims sealed in s under any key of the ring, or
// errBadState. It checks authenticity only: matches checks the binding and
// the expiry, so that an expired state is told apart from a forged one
// (stateClaims is not a seal.Expiring for that reason).
func (r *keyRing) open(s string) (stateClaims, error) {
	body, ok := strings.CutPrefix(s, statePrefix)
	if !ok || len(s) > maxStateLen {
		return stateClaims{}, errBadState
	}
	var c stateClaims
	if err := r.ring.Open(purposeState, body, &c, time.Time{}); err != nil {
		return stateClaims{}, errBadState
	}
	return c, nil
}

// isOurs reports whether a requestState is this package's to open.
func isOurs(state string) bool { return strings.HasPrefix(state, statePrefix) }
