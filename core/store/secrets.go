package store

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/ed25519"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// SecretKeys encrypts the secrets the store keeps — webhook signing
// secrets and the bodies of idempotency records, which repeat a secret for
// 24 h — with AES-256-GCM under keys derived from master keys (for Kadu,
// api.signing_key and the former ones) by HKDF-SHA256 with a purpose label,
// so the master key itself never encrypts anything.
//
// A stored value is "v1:<key id>:<base64url of nonce ‖ ciphertext>"; the key
// id is derived from the master key by HKDF with another label and reveals
// nothing about it. Each value is bound (as GCM additional data) to its row
// and column, so a ciphertext copied into another row does not open.
//
// The first key encrypts; every key decrypts. To rotate, make the new
// master key the first and keep the old one after it: Open re-encrypts
// every webhook secret under the new key at start, after which the old key
// is needed only for idempotency records younger than 24 h.
//
// A SecretKeys is immutable and safe for concurrent use.
type SecretKeys struct {
	keys []secretKey // keys[0] encrypts
}

type secretKey struct {
	id   string
	aead cipher.AEAD
	// checkpoint signs the audit trail's checkpoints (audit_purge.go).
	checkpoint ed25519.PrivateKey
}

// Purpose labels of the HKDF derivations: changing one makes every stored
// secret unreadable.
const (
	secretsKeyLabel   = "kadu/store/secrets-at-rest/aes-256-gcm/v1"
	secretsKeyIDLabel = "kadu/store/secrets-at-rest/key-id/v1"
	sealedPrefix      = "v1:"
)

// MinMasterKeyLen is the shortest master key NewSecretKeys accepts, in bytes.
const MinMasterKeyLen = 32

// NewSecretKeys derives the keys from masters: the first encrypts, all
// decrypt. Each master key must have at least MinMasterKeyLen bytes;
// duplicates are dropped.
func NewSecretKeys(masters ...[]byte) (*SecretKeys, error) {
	if len(masters) == 0 {
		return nil, errors.New("store: NewSecretKeys: no master key")
	}
	k := &SecretKeys{}
	seen := map[string]bool{}
	for i, m := range masters {
		if len(m) < MinMasterKeyLen {
			return nil, fmt.Errorf("store: secret master key %d is %d bytes; want at least %d", i, len(m), MinMasterKeyLen)
		}
		raw, err := hkdf.Key(sha256.New, m, nil, secretsKeyLabel, 32)
		if err != nil {
			return nil, fmt.Errorf("store: deriving secret key %d: %w", i, err)
		}
		idRaw, err := hkdf.Key(sha256.New, m, nil, secretsKeyIDLabel, 8)
		if err != nil {
			return nil, fmt.Errorf("store: deriving secret key id %d: %w", i, err)
		}
		id := hex.EncodeToString(idRaw)
		if seen[id] {
			continue
		}
		seen[id] = true
		block, err := aes.NewCipher(raw)
		if err != nil {
			return nil, fmt.Errorf("store: secret key %d: %w", i, err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("store: secret key %d: %w", i, err)
		}
		checkpoint, err := deriveCheckpointKey(m)
		if err != nil {
			return nil, fmt.Errorf("store: secret key %d: %w", i, err)
		}
		k.keys = append(k.keys, secretKey{id: id, aead: aead, checkpoint: checkpoint})
	}
	return k, nil
}

// CurrentID is the id of the key that encrypts, as it appears in stored
// values.
func (k *SecretKeys) CurrentID() string { return k.keys[0].id }

// seal encrypts plain for the place aad names.
func (k *SecretKeys) seal(plain []byte, aad string) (string, error) {
	key := k.keys[0]
	nonce := make([]byte, key.aead.NonceSize(), key.aead.NonceSize()+len(plain)+key.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("store: encrypting a secret: %w", err)
	}
	out := key.aead.Seal(nonce, nonce, plain, []byte(aad))
	return sealedPrefix + key.id + ":" + base64.RawURLEncoding.EncodeToString(out), nil
}

// open decrypts a value seal made for aad. current reports whether the
// key that sealed it is the one that encrypts now.
func (k *SecretKeys) open(sealed, aad string) (plain []byte, current bool, err error) {
	rest, ok := strings.CutPrefix(sealed, sealedPrefix)
	id, enc, ok2 := strings.Cut(rest, ":")
	if !ok || !ok2 {
		return nil, false, errors.New("store: encrypted secret is malformed")
	}
	for i, key := range k.keys {
		if key.id != id {
			continue
		}
		raw, err := base64.RawURLEncoding.DecodeString(enc)
		if err != nil || len(raw) < key.aead.NonceSize() {
			return nil, false, errors.New("store: encrypted secret is malformed")
		}
		n := key.aead.NonceSize()
		plain, err := key.aead.Open(nil, raw[:n], raw[n:], []byte(aad))
		if err != nil {
			return nil, false, fmt.Errorf("store: encrypted secret (key %s) does not open: altered, or copied from another row", id)
		}
		if plain == nil {
			plain = []byte{}
		}
		return plain, i == 0, nil
	}
	return nil, false, fmt.Errorf("store: secret was encrypted with key %s, which is not among the configured keys "+
		"(was the signing key changed without keeping the former one as a previous key?)", id)
}

// isSealed reports whether a stored value is encrypted. A webhook secret in
// clear starts with "whsec_", an idempotency body is JSON: neither starts
// with "v1:".
func isSealed(s string) bool { return strings.HasPrefix(s, sealedPrefix) }

// sealString is seal for a column: with no keys the value is stored as it
// is (tests that never configure keys).
func (k *SecretKeys) sealString(plain, aad string) (string, error) {
	if k == nil || plain == "" {
		return plain, nil
	}
	return k.seal([]byte(plain), aad)
}

// openString is open for a column: a value in clear is returned as it is
// (rows written before encryption, until Open re-encrypts them).
func (k *SecretKeys) openString(stored, aad string) (string, error) {
	if !isSealed(stored) {
		return stored, nil
	}
	if k == nil {
		return "", errors.New("store: secret is encrypted, but the store was opened without SecretKeys")
	}
	plain, _, err := k.open(stored, aad)
	return string(plain), err
}
