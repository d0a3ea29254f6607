package bundlesig

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"

	"golang.org/x/crypto/blake2b"
)

// Algorithm and layout constants of the minisign format.
const (
	keyIDSize = 8
	// pubKeyBlob is "Ed" || key id || Ed25519 public key.
	pubKeyBlob = 2 + keyIDSize + ed25519.PublicKeySize
	// secKeyBlob is sig alg, kdf alg, checksum alg, kdf salt, opslimit,
	// memlimit, then key id || Ed25519 secret key || checksum.
	secKeyBlob = 2 + 2 + 2 + 32 + 8 + 8 + keyIDSize + ed25519.PrivateKeySize + 32
	// maxKeyFile bounds what a key parser reads: a key file is a few
	// hundred bytes, anything much larger is not one.
	maxKeyFile = 4 << 10
)

var (
	algEd      = [2]byte{'E', 'd'} // Ed25519 key; legacy (not prehashed) signature
	algED      = [2]byte{'E', 'D'} // prehashed signature: Ed25519 over BLAKE2b-512
	kdfNone    = [2]byte{0, 0}     // an unencrypted secret key
	kdfScrypt  = [2]byte{'S', 'c'} // a password-encrypted secret key
	chkBlake2b = [2]byte{'B', '2'}
)

// KeyID is the 8 random bytes minisign stores with a key and each of its
// signatures, so a verifier picks the right public key.
type KeyID [keyIDSize]byte

// String is the key ID as minisign prints it: 16 upper-case hex digits of
// the bytes read as a little-endian integer.
func (id KeyID) String() string {
	return fmt.Sprintf("%016X", binary.LittleEndian.Uint64(id[:]))
}

// PublicKey is a minisign Ed25519 public key.
type PublicKey struct {
	ID  KeyID
	Key ed25519.PublicKey
}

// String is the key's base64 line, as the second line of a minisign .pub
// file and as plugins.trusted_keys.<name>.public_key takes it.
func (k PublicKey) String() string {
	b := make([]byte, 0, pubKeyBlob)
	b = append(b, algEd[:]...)
	b = append(b, k.ID[:]...)
	b = append(b, k.Key...)
	return base64.StdEncoding.EncodeToString(b)
}

// File is the key as a minisign .pub file.
func (k PublicKey) File() []byte {
	return []byte("untrusted comment: minisign public key " + k.ID.String() + "\n" + k.String() + "\n")
}

// Equal reports whether k and o are the same key.
func (k PublicKey) Equal(o PublicKey) bool { return k.ID == o.ID && k.Key.Equal(o.Key) }

// ParsePublicKey reads a public key: its base64 line alone, or a whole
// minisign .pub file (an "untrusted comment:" line, then the base64 line).
func ParsePublicKey(s string) (PublicKey, error) {
	if len(s) > maxKeyFile {
		return PublicKey{}, fmt.Errorf("public key: %d bytes, too long to be a minisign public key", len(s))
	}
	line, err := keyLine(s)
	if err != nil {
		return PublicKey{}, fmt.Errorf("public key: %w", err)
	}
	raw, err := base64.StdEncoding.DecodeString(line)
	if err != nil {
		return PublicKey{}, errors.New("public key: not base64 (want the line minisign -G or kadu plugins keygen wrote, starting \"RW\")")
	}
	if len(raw) != pubKeyBlob {
		return PublicKey{}, fmt.Errorf("public key: %d bytes decoded, want %d (a minisign Ed25519 public key)", len(raw), pubKeyBlob)
	}
	if !bytes.Equal(raw[:2], algEd[:]) {
		return PublicKey{}, fmt.Errorf("public key: algorithm %q, want \"Ed\"", raw[:2])
	}
	var k PublicKey
	copy(k.ID[:], raw[2:2+keyIDSize])
	k.Key = ed25519.PublicKey(bytes.Clone(raw[2+keyIDSize:]))
	return k, nil
}

// keyLine returns the one base64 line of a key given alone or as a file
// with an untrusted comment first.
func keyLine(s string) (string, error) {
	var lines []string
	for l := range strings.Lines(s) {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	switch {
	case len(lines) == 1 && !strings.HasPrefix(lines[0], "untrusted comment:"):
		return lines[0], nil
	case len(lines) == 2 && strings.HasPrefix(lines[0], "untrusted comment:"):
		return lines[1], nil
	case len(lines) == 0:
		return "", errors.New("empty")
	}
	return "", errors.New("want one base64 line, optionally after an \"untrusted comment:\" line")
}

// SecretKey is a minisign Ed25519 secret key.
type SecretKey struct {
	ID  KeyID
	Key ed25519.PrivateKey
}

// Public returns the public half of k.
func (k SecretKey) Public() PublicKey {
	return PublicKey{ID: k.ID, Key: k.Key.Public().(ed25519.PublicKey)}
}

// GenerateKey creates a key pair with a random key ID, reading randomness
// from rnd (crypto/rand when nil).
func GenerateKey(rnd io.Reader) (SecretKey, error) {
	if rnd == nil {
		rnd = rand.Reader
	}
	var k SecretKey
	if _, err := io.ReadFull(rnd, k.ID[:]); err != nil {
		return SecretKey{}, fmt.Errorf("generating a key ID: %w", err)
	}
	_, priv, err := ed25519.GenerateKey(rnd)
	if err != nil {
		return SecretKey{}, fmt.Errorf("generating an Ed25519 key: %w", err)
	}
	k.Key = priv
	return k, nil
}

// File is k as an unencrypted minisign secret key file (what minisign -G -W
// writes): it must be kept like a password, readable by its owner only.
func (k SecretKey) File() []byte {
	b := make([]byte, 0, secKeyBlob)
	b = append(b, algEd[:]...)
	b = append(b, kdfNone[:]...)
	b = append(b, chkBlake2b[:]...)
	b = append(b, make([]byte, 32+8+8)...) // no kdf: salt and limits unused
	b = append(b, k.ID[:]...)
	b = append(b, k.Key...)
	sum := secretChecksum(k.ID, k.Key)
	b = append(b, sum[:]...)
	return []byte("untrusted comment: minisign secret key (unencrypted; keep it private)\n" +
		base64.StdEncoding.EncodeToString(b) + "\n")
}

// secretChecksum is minisign's BLAKE2b-256 over the algorithm, the key ID
// and the secret key, which detects a damaged (or wrongly decrypted) key.
func secretChecksum(id KeyID, key []byte) [32]byte {
	h, _ := blake2b.New256(nil) // no key: cannot fail
	h.Write(algEd[:])
	h.Write(id[:])
	h.Write(key)
	var sum [32]byte
	h.Sum(sum[:0])
	return sum
}

// ParseSecretKey reads an unencrypted minisign secret key file. A
// password-encrypted key (minisign's default) is refused with what to do:
// sign with minisign itself, or use a key from kadu plugins keygen.
func ParseSecretKey(data []byte) (SecretKey, error) {
	if len(data) > maxKeyFile {
		return SecretKey{}, fmt.Errorf("secret key: %d bytes, too long to be a minisign secret key", len(data))
	}
	line, err := keyLine(string(data))
	if err != nil {
		return SecretKey{}, fmt.Errorf("secret key: %w", err)
	}
	raw, err := base64.StdEncoding.DecodeString(line)
	if err != nil {
		return SecretKey{}, errors.New("secret key: not base64 (want a file written by kadu plugins keygen or minisign -G -W)")
	}
	if len(raw) != secKeyBlob {
		return SecretKey{}, fmt.Errorf("secret key: %d bytes decoded, want %d (a minisign Ed25519 secret key)", len(raw), secKeyBlob)
	}
	if !bytes.Equal(raw[:2], algEd[:]) || !bytes.Equal(raw[4:6], chkBlake2b[:]) {
		return SecretKey{}, fmt.Errorf("secret key: algorithms %q/%q, want \"Ed\"/\"B2\"", raw[:2], raw[4:6])
	}
	switch kdf := [2]byte(raw[2:4]); kdf {
	case kdfNone:
	case kdfScrypt:
		return SecretKey{}, errors.New("secret key: encrypted with a password, which kadu plugins sign does not read; " +
			"sign with `minisign -S` (see the partner guide), or use a key from `kadu plugins keygen`")
	default:
		return SecretKey{}, fmt.Errorf("secret key: unknown key derivation %q", kdf[:])
	}
	body := raw[2+2+2+32+8+8:]
	var k SecretKey
	copy(k.ID[:], body[:keyIDSize])
	k.Key = ed25519.PrivateKey(bytes.Clone(body[keyIDSize : keyIDSize+ed25519.PrivateKeySize]))
	if sum := secretChecksum(k.ID, k.Key); !bytes.Equal(sum[:], body[keyIDSize+ed25519.PrivateKeySize:]) {
		return SecretKey{}, errors.New("secret key: checksum mismatch, the file is damaged")
	}
	// The secret key's last 32 bytes are its public key: check that they
	// belong to the seed, or a damaged file would sign with a key no one trusts.
	if !bytes.Equal(ed25519.NewKeyFromSeed(k.Key.Seed()), k.Key) {
		return SecretKey{}, errors.New("secret key: its public half does not match its seed, the file is damaged")
	}
	return k, nil
}
