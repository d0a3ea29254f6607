package bundlesig

import (
	"crypto/ed25519"
	"strings"
	"testing"
)

func ed25519Sign(k SecretKey, msg []byte) []byte { return ed25519.Sign(k.Key, msg) }

// FuzzParseSignature: no input panics, and what parses writes back to a
// file that parses to the same signature.
func FuzzParseSignature(f *testing.F) {
	k, _ := GenerateKey(strings.NewReader(strings.Repeat("seed", 20)))
	f.Add(Sign(k, []byte("m"), Statement{Name: "a", Version: "1.0.0", SHA256: strings.Repeat("0", 64)}))
	f.Add([]byte("untrusted comment: \n\ntrusted comment: \n\n"))
	f.Add([]byte("untrusted comment: x\nRUQ=\ntrusted comment: y\nAA==\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseSignature(data)
		if err != nil {
			return
		}
		again, err := ParseSignature(s.File())
		if err != nil || *again != *s {
			t.Fatalf("a parsed signature does not survive File: %v", err)
		}
		_, _ = ParseStatement(s.TrustedComment)
	})
}

// FuzzParseKeys: no input panics either key parser, and a parsed public
// key writes back to itself.
func FuzzParseKeys(f *testing.F) {
	k, _ := GenerateKey(strings.NewReader(strings.Repeat("seed", 20)))
	f.Add(string(k.File()))
	f.Add(string(k.Public().File()))
	f.Add(k.Public().String())
	f.Add("untrusted comment: x\n\n")
	f.Fuzz(func(t *testing.T, s string) {
		if pub, err := ParsePublicKey(s); err == nil {
			if again, err := ParsePublicKey(pub.String()); err != nil || !again.Equal(pub) {
				t.Fatalf("a parsed public key does not survive String: %v", err)
			}
		}
		if sk, err := ParseSecretKey([]byte(s)); err == nil {
			if again, err := ParseSecretKey(sk.File()); err != nil || !again.Key.Equal(sk.Key) {
				t.Fatalf("a parsed secret key does not survive File: %v", err)
			}
		}
	})
}

// FuzzParseStatement: a statement that parses prints back to the same
// trusted comment, so it can be read one way only.
func FuzzParseStatement(f *testing.F) {
	f.Add("kadu-bundle name=a version=1.0.0 sha256=" + strings.Repeat("a", 64))
	f.Add("kadu-bundle name= version= sha256=")
	f.Add("timestamp:1\tfile:x")
	f.Fuzz(func(t *testing.T, tc string) {
		st, err := ParseStatement(tc)
		if err != nil {
			return
		}
		if got := st.TrustedComment(); got != tc {
			t.Fatalf("ParseStatement(%q) prints back as %q", tc, got)
		}
	})
}
