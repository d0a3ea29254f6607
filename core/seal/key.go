package seal

import (
	"crypto/hkdf"
	"crypto/sha256"
	"fmt"
)

// KeyLen is the length of every key a Ring takes (AES-256).
const KeyLen = 32

// DeriveKey returns the KeyLen-byte key of one use from master with
// HKDF-SHA256 (RFC 5869), info naming the use, so that a key derived for
// one use (say, cursors) never serves another (say, approval cookies),
// however the values look. Changing info changes the key: it is part of
// the format of what was sealed or signed with it.
func DeriveKey(master []byte, info string) ([]byte, error) {
	k, err := hkdf.Key(sha256.New, master, nil, info, KeyLen)
	if err != nil {
		return nil, fmt.Errorf("deriving the %q key: %w", info, err)
	}
	return k, nil
}
