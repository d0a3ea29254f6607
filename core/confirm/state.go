package confirm

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/canonjson"
)

// statePrefix marks a requestState this package sealed. Anything else is
// another Catalog's (a bundle's input-required state) and passes through.
const statePrefix = "kc1."

// maxStateLen bounds the requestState Open looks at: a sealed state is
// about 300 bytes, so anything far longer is not one of ours.
const maxStateLen = 2048

// stateAAD binds a sealed value to this use: a bundle's requestState, or
// anything else sealed under the same key, never opens here.
var stateAAD = []byte("kadu/confirm/requestState/v1")

// errBadState is every reason a requestState does not verify. The client
// gets one message, whatever failed.
var errBadState = errors.New("confirm: requestState does not verify")

// keyRing seals with its first key and opens with any, so that operators
// rotate keys without failing the states in flight: add the new key first,
// keep the old one for at least StateTTL, then remove it.
// Safe for concurrent use; immutable after newKeyRing.
type keyRing struct {
	aeads []cipher.AEAD // [0] seals
}

func newKeyRing(keys [][]byte) (*keyRing, error) {
	if len(keys) == 0 {
		return nil, errors.New("confirm: Options.Keys is empty: give at least one 32-byte key, shared by every replica (Keys[0] seals, every key opens)")
	}
	r := &keyRing{}
	for i, k := range keys {
		if len(k) != 32 {
			return nil, fmt.Errorf("confirm: Options.Keys[%d] has %d bytes: want 32 (AES-256)", i, len(k))
		}
		block, err := aes.NewCipher(k)
		if err != nil {
			return nil, fmt.Errorf("confirm: Options.Keys[%d]: %w", i, err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("confirm: Options.Keys[%d]: %w", i, err)
		}
		r.aeads = append(r.aeads, aead)
	}
	return r, nil
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
	d, err := argsDigest(args)
	if err != nil {
		return binding{}, err
	}
	return binding{p: p, tool: tool, digest: d}, nil
}

// argsDigest is the hex SHA-256 of the canonical JSON of args, so that
// reordered members or 1 and 1.0 digest alike (docs/reference/confirmation.md).
func argsDigest(args json.RawMessage) (string, error) {
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	c, err := canonjson.Transform(args)
	if err != nil {
		return "", fmt.Errorf("canonical arguments: %w", err)
	}
	sum := sha256.Sum256(c)
	return hex.EncodeToString(sum[:]), nil
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

// seal returns c sealed with the first key: statePrefix, then base64url
// (no padding) of the GCM nonce and the ciphertext.
func (r *keyRing) seal(c stateClaims) (string, error) {
	plain, err := json.Marshal(c)
	if err != nil {
		return "", fmt.Errorf("confirm: sealing requestState: %w", err)
	}
	aead := r.aeads[0]
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("confirm: sealing requestState: %w", err)
	}
	return statePrefix + base64.RawURLEncoding.EncodeToString(aead.Seal(nonce, nonce, plain, stateAAD)), nil
}

// open returns the claims sealed in s under any key of the ring, or
// errBadState. It checks authenticity only: matches checks the binding.
func (r *keyRing) open(s string) (stateClaims, error) {
	body, ok := strings.CutPrefix(s, statePrefix)
	if !ok || len(s) > maxStateLen {
		return stateClaims{}, errBadState
	}
	raw, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil {
		return stateClaims{}, errBadState
	}
	for _, aead := range r.aeads {
		n := aead.NonceSize()
		if len(raw) < n+aead.Overhead() {
			return stateClaims{}, errBadState
		}
		plain, err := aead.Open(nil, raw[:n], raw[n:], stateAAD)
		if err != nil {
			continue // sealed with another key of the ring, or not at all
		}
		var c stateClaims
		if err := json.Unmarshal(plain, &c); err != nil {
			return stateClaims{}, errBadState
		}
		return c, nil
	}
	return stateClaims{}, errBadState
}

// isOurs reports whether a requestState is this package's to open.
func isOurs(state string) bool { return strings.HasPrefix(state, statePrefix) }
