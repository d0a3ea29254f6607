package seal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// ErrInvalid is every reason Open refuses a value: not sealed by a key of
// the ring, sealed for another purpose, tampered with, too long, or
// expired. Callers answer with one message whatever failed.
var ErrInvalid = errors.New("not a valid sealed value")

// Expiring is a sealed value that stops opening at a time. Open refuses
// it from ExpiresAt on (as RFC 7519 treats "exp"): the instant is the
// first at which it is no longer valid.
type Expiring interface {
	ExpiresAt() time.Time
}

// Ring seals with its first key and opens with any of them, so that
// operators rotate keys without failing the values in flight: add the new
// key first, keep the old one as long as a value may live, then remove it.
// Safe for concurrent use; immutable after New.
type Ring struct {
	aeads  []cipher.AEAD // [0] seals
	maxLen int
}

// New returns a Ring over keys (each KeyLen bytes; the first seals) that
// opens nothing longer than maxLen characters, so that a client cannot make
// the server decode and decrypt arbitrary amounts.
func New(maxLen int, keys ...[]byte) (*Ring, error) {
	if len(keys) == 0 {
		return nil, errors.New("seal: no key")
	}
	if maxLen <= 0 {
		return nil, fmt.Errorf("seal: maximum length %d: want more than 0", maxLen)
	}
	r := &Ring{maxLen: maxLen}
	for i, k := range keys {
		if len(k) != KeyLen {
			return nil, fmt.Errorf("seal: key %d has %d bytes: want %d (AES-256)", i, len(k), KeyLen)
		}
		block, err := aes.NewCipher(k)
		if err != nil {
			return nil, fmt.Errorf("seal: key %d: %w", i, err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("seal: key %d: %w", i, err)
		}
		r.aeads = append(r.aeads, aead)
	}
	return r, nil
}

// NewRandom returns a Ring with one random key: what it seals opens only in
// this process, which suits values that must not outlive it.
func NewRandom(maxLen int) (*Ring, error) {
	key := make([]byte, KeyLen)
	rand.Read(key) // never fails (crypto/rand)
	return New(maxLen, key)
}

// Seal returns v as JSON, encrypted under the first key and authenticated
// for purpose: base64url without padding of the nonce and the ciphertext.
func (r *Ring) Seal(purpose string, v any) (string, error) {
	plain, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("sealing %s: %w", purpose, err)
	}
	aead := r.aeads[0]
	nonce := make([]byte, aead.NonceSize())
	rand.Read(nonce) // never fails (crypto/rand)
	out := base64.RawURLEncoding.EncodeToString(aead.Seal(nonce, nonce, plain, []byte(purpose)))
	if len(out) > r.maxLen {
		return "", fmt.Errorf("sealing %s: %d characters, over the %d this ring opens", purpose, len(out), r.maxLen)
	}
	return out, nil
}

// Open reverses Seal into v, trying every key of the ring, and refuses a
// value that implements Expiring once now reaches its expiry. Every
// failure is ErrInvalid.
func (r *Ring) Open(purpose, sealed string, v any, now time.Time) error {
	if sealed == "" || len(sealed) > r.maxLen {
		return ErrInvalid
	}
	// Strict: only the encoding Seal wrote opens, not its variants with
	// other trailing bits, so a sealed value has one spelling.
	raw, err := base64.RawURLEncoding.Strict().DecodeString(sealed)
	if err != nil {
		return ErrInvalid
	}
	for _, aead := range r.aeads {
		n := aead.NonceSize()
		if len(raw) < n+aead.Overhead() {
			return ErrInvalid
		}
		plain, err := aead.Open(nil, raw[:n], raw[n:], []byte(purpose))
		if err != nil {
			continue // sealed under another key of the ring, or not at all
		}
		if json.Unmarshal(plain, v) != nil {
			return ErrInvalid
		}
		if e, ok := v.(Expiring); ok && !now.Before(e.ExpiresAt()) {
			return ErrInvalid
		}
		return nil
	}
	return ErrInvalid
}
