package page

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
)

// Purposes a sealed value is bound to (the AEAD's additional data), so a
// value sealed for one use never opens as another: a form token is not a
// session.
const (
	purposeSession = "session"
	purposeSignIn  = "signin"
	purposeForm    = "form"
)

// sealInfo derives the page's own key from Options.SealKey, so the same
// operator secret can serve other packages without their values opening
// here.
const sealInfo = "kadu approval page v1"

// maxSealedLen bounds what open will decode: the largest sealed value is a
// session of a long subject.
const maxSealedLen = 4 << 10

var errUnsealed = errors.New("not a valid sealed value")

// sealer encrypts small JSON values into URL-safe opaque strings with
// AES-256-GCM. It is safe for concurrent use.
type sealer struct {
	aead cipher.AEAD // fixed at creation
}

func newSealer(key []byte) (*sealer, error) {
	derived, err := hkdf.Key(sha256.New, key, nil, sealInfo, sealKeyLen)
	if err != nil {
		return nil, fmt.Errorf("deriving the page key: %w", err)
	}
	block, err := aes.NewCipher(derived)
	if err != nil {
		return nil, fmt.Errorf("creating sealer: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("creating sealer: %w", err)
	}
	return &sealer{aead: aead}, nil
}

// seal returns v as JSON, encrypted and authenticated for purpose,
// base64url without padding.
func (s *sealer) seal(purpose string, v any) (string, error) {
	plain, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("sealing %s: %w", purpose, err)
	}
	nonce := make([]byte, s.aead.NonceSize())
	rand.Read(nonce)
	out := s.aead.Seal(nonce, nonce, plain, []byte(purpose))
	return base64.RawURLEncoding.EncodeToString(out), nil
}

// open reverses seal into v. It fails with errUnsealed for anything not
// sealed by this key for this purpose.
func (s *sealer) open(purpose, sealed string, v any) error {
	if sealed == "" || len(sealed) > maxSealedLen {
		return errUnsealed
	}
	raw, err := base64.RawURLEncoding.DecodeString(sealed)
	if err != nil || len(raw) < s.aead.NonceSize()+s.aead.Overhead() {
		return errUnsealed
	}
	n := s.aead.NonceSize()
	plain, err := s.aead.Open(nil, raw[:n], raw[n:], []byte(purpose))
	if err != nil {
		return errUnsealed
	}
	if err := json.Unmarshal(plain, v); err != nil {
		return fmt.Errorf("opening %s: %w", purpose, err)
	}
	return nil
}

// randomText returns 26 characters of crypto/rand base32 (130 bits), valid
// as OAuth state and as PKCE verifier material.
func randomText() string { return rand.Text() }
