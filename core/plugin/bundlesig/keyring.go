package bundlesig

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"

	"golang.org/x/crypto/blake2b"
)

// Keyring is the set of trusted public keys, by the operator's name for
// each. Several keys at once let a signer rotate: trust the new key, sign
// with it, then drop the old one. A Keyring is immutable and safe for
// concurrent use; the zero value (and nil) trusts no key.
type Keyring struct {
	byID  map[KeyID]named
	names []string // sorted
}

type named struct {
	name string
	key  PublicKey
}

// NewKeyring trusts keys, by name. Two names for one key ID are refused:
// a signature could not say which of them made it.
func NewKeyring(keys map[string]PublicKey) (*Keyring, error) {
	kr := &Keyring{byID: make(map[KeyID]named, len(keys))}
	for _, name := range slices.Sorted(maps.Keys(keys)) {
		k := keys[name]
		if other, ok := kr.byID[k.ID]; ok {
			return nil, fmt.Errorf("trusted keys %q and %q have the same key ID %s; keep one of them", other.name, name, k.ID)
		}
		kr.byID[k.ID] = named{name: name, key: k}
		kr.names = append(kr.names, name)
	}
	return kr, nil
}

// Names returns the trusted keys' names, sorted.
func (kr *Keyring) Names() []string {
	if kr == nil {
		return nil
	}
	return slices.Clone(kr.names)
}

// Fingerprint identifies the keyring's content (names and keys), so a
// reload can tell whether trust changed.
func (kr *Keyring) Fingerprint() string {
	if kr == nil || len(kr.names) == 0 {
		return ""
	}
	lines := make([]string, 0, len(kr.byID))
	for _, e := range kr.byID {
		lines = append(lines, e.name+"="+e.key.String()+"\n")
	}
	slices.Sort(lines)
	sum := sha256.Sum256([]byte(strings.Join(lines, "")))
	return hex.EncodeToString(sum[:])
}

// Verified is a signature Verify accepted.
type Verified struct {
	KeyName   string // the operator's name of the trusted key that signed
	KeyID     KeyID
	Statement Statement
}

// Verify checks sigFile against module: that a trusted key made it, that
// it signs these bytes and its trusted comment, and that the comment is a
// statement for this module's sha256 (moduleSHA256, lower-case hex).
// Whether the statement's name and version are the bundle's is for the
// caller, which knows them only after reading the manifest: see
// Verified.Check.
func (kr *Keyring) Verify(sigFile, module []byte, moduleSHA256 string) (Verified, error) {
	s, err := ParseSignature(sigFile)
	if err != nil {
		return Verified{}, err
	}
	var trusted named
	var ok bool
	if kr != nil {
		trusted, ok = kr.byID[s.KeyID]
	}
	if !ok {
		have := "none is configured"
		if names := kr.Names(); len(names) > 0 {
			have = "trusted: " + strings.Join(names, ", ")
		}
		return Verified{}, fmt.Errorf("%w: key ID %s is not in plugins.trusted_keys (%s); add the signer's public key "+
			"there, or ask the publisher for a bundle signed with a trusted key", ErrUntrusted, s.KeyID, have)
	}
	if !s.verify(trusted.key, module) {
		return Verified{}, fmt.Errorf("%w: the module or the trusted comment was changed after key %q (ID %s) signed it; "+
			"sign the bundle again", ErrInvalid, trusted.name, s.KeyID)
	}
	st, err := ParseStatement(s.TrustedComment)
	if err != nil {
		return Verified{}, fmt.Errorf("%w: %w", ErrMismatch, err)
	}
	if st.SHA256 != moduleSHA256 {
		return Verified{}, fmt.Errorf("%w: it names sha256 %s, the module has %s", ErrMismatch, st.SHA256, moduleSHA256)
	}
	return Verified{KeyName: trusted.name, KeyID: s.KeyID, Statement: st}, nil
}

// verify checks both Ed25519 signatures of s with k.
func (s *Signature) verify(k PublicKey, module []byte) bool {
	h := blake2b.Sum512(module)
	return ed25519.Verify(k.Key, h[:], s.Sig[:]) && ed25519.Verify(k.Key, s.globalMessage(), s.GlobalSig[:])
}

// Check refuses a signature made for another bundle name or version than
// the manifest's.
func (v Verified) Check(name, version string) error {
	if v.Statement.Name != name || v.Statement.Version != version {
		return fmt.Errorf("%w: it signs %s@%s, the module's manifest is %s@%s; sign this version", ErrMismatch,
			v.Statement.Name, v.Statement.Version, name, version)
	}
	return nil
}
