package page

import (
	"errors"
	"testing"
	"time"

	"github.com/kobana/kadu/core/seal"
)

func TestSealedValuesOpenOnlyForTheirPurposeUntilExpiry(t *testing.T) {
	s, err := seal.New(maxSealedLen, make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1000, 0)
	sealed, err := s.Seal(purposeForm, formToken{Session: "n", Approval: "apr_1", Exp: 1009})
	if err != nil {
		t.Fatal(err)
	}
	var ft formToken
	if err := s.Open(purposeForm, sealed, &ft, time.Unix(1009, 999)); err != nil || ft.Approval != "apr_1" {
		t.Fatalf("Open() = %v, %+v", err, ft)
	}
	tests := map[string]error{
		"as a session":    s.Open(purposeSession, sealed, &session{}, now),
		"as a sign-in":    s.Open(purposeSignIn, sealed, &signIn{}, now),
		"once it expired": s.Open(purposeForm, sealed, &formToken{}, time.Unix(1010, 0)),
	}
	for name, err := range tests {
		if !errors.Is(err, seal.ErrInvalid) {
			t.Errorf("%s: Open() = %v, want seal.ErrInvalid", name, err)
		}
	}
}
