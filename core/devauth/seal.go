package devauth

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
)

// Purposes a sealed value is bound to (the AEAD's additional data), so a
// value sealed for one use never opens as another: a refresh token is not a
// code, a consent form token is not a client_id.
const (
	purposeClient  = "client"
	purposeCode    = "code"
	purposeRefresh = "refresh"
	purposeConsent = "consent"
)

// maxSealedLen bounds what open will decode. The largest sealed value is a
// consent form token carrying a client_id; both are bounded by the
// registration limits.
const maxSealedLen = 16 << 10

var errUnsealed = errors.New("not a valid sealed value")

// sealer encrypts small JSON values into URL-safe opaque strings with
// AES-256-GCM. It is safe for concurrent use.
type sealer struct {
	aead cipher.AEAD // fixed at creation
}

func newSealer(key []byte) (*sealer, error) {
	block, err := aes.NewCipher(key)
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
	nonce := randomBytes(s.aead.NonceSize())
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
