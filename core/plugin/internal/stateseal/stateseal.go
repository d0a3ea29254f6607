// Package stateseal seals a bundle's input-required state into the opaque
// requestState a client hands back, bound to the caller and the call. It
// owns nothing else.
package stateseal

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
	"time"

	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/canonjson"
)

// TTL is how long a sealed requestState stays valid.
const TTL = 10 * time.Minute

// MaxState caps the state a bundle may ask the host to seal (ABI: "state"
// ≤ 16 KiB), and so the requestState a client may send back.
const MaxState = 16 << 10

// stateAAD binds sealed values to this use: a requestState of core/confirm
// or a value sealed for anything else never opens here.
var stateAAD = []byte("kadu/plugin/requestState/v1")

// ErrInvalid is Open's only error: the client gets one message whatever
// check failed.
var ErrInvalid = errors.New("requestState does not verify")

// Sealer seals bundle state into an opaque requestState with AES-256-GCM.
// Safe for concurrent use.
type Sealer struct {
	aead cipher.AEAD // fixed at creation
}

// New returns a Sealer with a 32-byte key; nil draws a random one (which
// only works with a single replica).
func New(key []byte) (*Sealer, error) {
	if key == nil {
		key = make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, fmt.Errorf("creating requestState key: %w", err)
		}
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("creating requestState sealer: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("creating requestState sealer: %w", err)
	}
	return &Sealer{aead: aead}, nil
}

// sealedState is what a requestState carries. Everything but State binds
// it: who asked (issuer, subject, organisation), for what (the op and the
// tool, prompt or URI, in the same bundle), with which arguments, until
// when.
type sealedState struct {
	Issuer  string          `json:"iss"`
	Subject string          `json:"sub"`
	Org     string          `json:"org"`
	Bundle  string          `json:"bnd"`
	Op      string          `json:"op"`
	Target  string          `json:"tgt"`
	Args    string          `json:"arg"` // hex SHA-256 of the canonical arguments
	Expiry  int64           `json:"exp"` // Unix seconds
	State   json.RawMessage `json:"st"`
}

// Binding is what a state must match when it comes back.
type Binding struct {
	Principal *auth.Principal
	Bundle    string
	Op        string          // "tools/call", "resources/read", …
	Target    string          // the tool or prompt name, or the URI
	Args      json.RawMessage // the call's arguments; nil when the op has none
}

func (b Binding) digest() (string, error) {
	if len(b.Args) == 0 {
		return "", nil
	}
	c, err := canonjson.Transform(b.Args)
	if err != nil {
		return "", fmt.Errorf("canonical arguments: %w", err)
	}
	sum := sha256.Sum256(c)
	return hex.EncodeToString(sum[:]), nil
}

// Seal returns state sealed for b, valid until now+TTL.
func (s *Sealer) Seal(b Binding, state json.RawMessage, now time.Time) (string, error) {
	d, err := b.digest()
	if err != nil {
		return "", err
	}
	plain, err := json.Marshal(sealedState{
		Issuer: b.Principal.Issuer, Subject: b.Principal.Subject, Org: b.Principal.OrgID, Bundle: b.Bundle, Op: b.Op, Target: b.Target,
		Args: d, Expiry: now.Add(TTL).Unix(), State: state,
	})
	if err != nil {
		return "", fmt.Errorf("sealing requestState: %w", err)
	}
	nonce := make([]byte, s.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("sealing requestState: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(s.aead.Seal(nonce, nonce, plain, stateAAD)), nil
}

// Open returns the state sealed in sealed when it verifies, has not expired
// at now and is bound to b; ErrInvalid otherwise.
func (s *Sealer) Open(b Binding, sealed string, now time.Time) (json.RawMessage, error) {
	if sealed == "" || len(sealed) > 2*MaxState {
		return nil, ErrInvalid
	}
	raw, err := base64.RawURLEncoding.DecodeString(sealed)
	n := s.aead.NonceSize()
	if err != nil || len(raw) < n+s.aead.Overhead() {
		return nil, ErrInvalid
	}
	plain, err := s.aead.Open(nil, raw[:n], raw[n:], stateAAD)
	if err != nil {
		return nil, ErrInvalid
	}
	var st sealedState
	if err := json.Unmarshal(plain, &st); err != nil {
		return nil, ErrInvalid
	}
	d, err := b.digest()
	if err != nil {
		return nil, ErrInvalid
	}
	p := b.Principal
	if st.Issuer != p.Issuer || st.Subject != p.Subject || st.Org != p.OrgID || st.Bundle != b.Bundle ||
		st.Op != b.Op || st.Target != b.Target || st.Args != d || now.Unix() >= st.Expiry {
		return nil, ErrInvalid
	}
	return st.State, nil
}
