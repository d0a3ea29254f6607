// Package stateseal seals a bundle's input-required state into the opaque
// requestState a client hands back, bound to the caller and the call. It
// owns nothing else.
package stateseal

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/canonjson"
	"github.com/kobana/kadu/core/seal"
)

// TTL is how long a sealed requestState stays valid.
const TTL = 10 * time.Minute

// MaxState caps the state a bundle may ask the host to seal (ABI: "state"
// ≤ 16 KiB), and so the requestState a client may send back.
const MaxState = 16 << 10

// purpose binds sealed values to this use: a requestState of core/confirm
// or a value sealed for anything else never opens here.
const purpose = "kadu/plugin/requestState/v1"

// maxSealed bounds the requestState Open looks at: a sealed MaxState state
// with its binding, in base64.
const maxSealed = 2 * MaxState

// ErrInvalid is Open's only error: the client gets one message whatever
// check failed.
var ErrInvalid = errors.New("requestState does not verify")

// Sealer seals bundle state into an opaque requestState (core/seal).
// Safe for concurrent use.
type Sealer struct {
	ring *seal.Ring // fixed at creation
}

// New returns a Sealer with a 32-byte key; nil draws a random one (which
// only works with a single replica).
func New(key []byte) (*Sealer, error) {
	var r *seal.Ring
	var err error
	if key == nil {
		r, err = seal.NewRandom(maxSealed)
	} else {
		r, err = seal.New(maxSealed, key)
	}
	if err != nil {
		return nil, fmt.Errorf("creating requestState sealer: %w", err)
	}
	return &Sealer{ring: r}, nil
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
	Args    string          `json:"arg"` // canonjson.Digest of the arguments
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

// ExpiresAt makes the sealer refuse a state from its expiry on.
func (st *sealedState) ExpiresAt() time.Time { return time.Unix(st.Expiry, 0) }

// Seal returns state sealed for b, valid until now+TTL.
func (s *Sealer) Seal(b Binding, state json.RawMessage, now time.Time) (string, error) {
	d, err := canonjson.Digest(b.Args)
	if err != nil {
		return "", err
	}
	sealed, err := s.ring.Seal(purpose, &sealedState{
		Issuer: b.Principal.Issuer, Subject: b.Principal.Subject, Org: b.Principal.OrgID, Bundle: b.Bundle, Op: b.Op, Target: b.Target,
		Args: d, Expiry: now.Add(TTL).Unix(), State: state,
	})
	if err != nil {
		return "", fmt.Errorf("sealing requestState: %w", err)
	}
	return sealed, nil
}

// Open returns the state sealed in sealed when it verifies, has not expired
// at now and is bound to b; ErrInvalid otherwise.
func (s *Sealer) Open(b Binding, sealed string, now time.Time) (json.RawMessage, error) {
	var st sealedState
	if err := s.ring.Open(purpose, sealed, &st, now); err != nil {
		return nil, ErrInvalid
	}
	d, err := canonjson.Digest(b.Args)
	if err != nil {
		return nil, ErrInvalid
	}
	p := b.Principal
	if st.Issuer != p.Issuer || st.Subject != p.Subject || st.Org != p.OrgID || st.Bundle != b.Bundle ||
		st.Op != b.Op || st.Target != b.Target || st.Args != d {
		return nil, ErrInvalid
	}
	return st.State, nil
}
