package page

import (
	"errors"
	"testing"
)

func TestSealedValuesOpenOnlyForTheirPurposeAndKey(t *testing.T) {
	key := make([]byte, 32)
	s, err := newSealer(key)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := newSealer(append([]byte{1}, key[1:]...))
	sealed, err := s.seal(purposeForm, formToken{Session: "n", Approval: "apr_1", Exp: 9})
	if err != nil {
		t.Fatal(err)
	}
	var ft formToken
	if err := s.open(purposeForm, sealed, &ft); err != nil || ft.Approval != "apr_1" {
		t.Fatalf("open() = %v, %+v", err, ft)
	}
	var sess session
	tests := map[string]error{
		"as a session":    s.open(purposeSession, sealed, &sess),
		"under other key": other.open(purposeForm, sealed, &ft),
		"flipped byte":    s.open(purposeForm, sealed[:10]+flip(sealed[10])+sealed[11:], &ft),
		"truncated":       s.open(purposeForm, sealed[:20], &ft),
		"empty":           s.open(purposeForm, "", &ft),
		"not base64":      s.open(purposeForm, "%%%", &ft),
	}
	for name, err := range tests {
		if !errors.Is(err, errUnsealed) {
			t.Errorf("%s: open() = %v, want errUnsealed", name, err)
		}
	}
}

func flip(b byte) string {
	if b == 'A' {
		return "B"
	}
	return "A"
}
