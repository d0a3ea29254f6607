package bundlesig

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"testing"
)

// BenchmarkVerify measures what a signature adds to loading a bundle: a
// Go guest is 2 to 10 MiB, hashed once more (BLAKE2b-512) and checked with
// two Ed25519 verifications.
func BenchmarkVerify(b *testing.B) {
	for _, size := range []int{2 << 20, 10 << 20} {
		module := make([]byte, size)
		rand.Read(module)
		sum := sha256.Sum256(module)
		k, _ := GenerateKey(nil)
		st := Statement{Name: "bench", Version: "1.0.0", SHA256: hex.EncodeToString(sum[:])}
		sig := Sign(k, module, st)
		kr, _ := NewKeyring(map[string]PublicKey{"k": k.Public()})
		b.Run(fmt.Sprintf("%dMiB", size>>20), func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				if _, err := kr.Verify(sig, module, st.SHA256); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
