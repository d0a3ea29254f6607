package devauth

import (
	"testing"
	"time"

	"github.com/kobana/kadu/core/seal"
)

// TestSealedValuesOfEarlierBuildsStillOpen pins the key derivation, the
// purposes and the sealed format: a client_id sealed by an earlier build
// (before core/seal existed) under master key "0123…cdef" must still open,
// or every registered client would have to register again after an upgrade.
func TestSealedValuesOfEarlierBuildsStillOpen(t *testing.T) {
	const earlier = "fbHrHxJDsQ2igQE2w7N2zrHZydufBAIuR-DAIEYkhoNi18tWS8ZZdiN0x6OG3LH3eroePyXVuZdeyCLNiFGLP2tAJ-OglDTl5g"
	key, err := seal.DeriveKey([]byte("0123456789abcdef0123456789abcdef"), infoSealKey)
	if err != nil {
		t.Fatal(err)
	}
	r, err := seal.New(maxSealedLen, key)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Name     string   `json:"n"`
		Redirect []string `json:"r"`
	}
	if err := r.Open(purposeClient, earlier, &got, time.Now()); err != nil {
		t.Fatalf("a client_id of an earlier build: %v", err)
	}
	if got.Name != "Inspector" || len(got.Redirect) != 1 || got.Redirect[0] != "http://localhost/cb" {
		t.Fatalf("opened %+v", got)
	}
}
