package auth

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckOrgID(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		id   string
		ok   bool
	}{
		{name: "development default", id: "org_dev", ok: true},
		{name: "dash and digits", id: "acme-1", ok: true},
		{name: "one character", id: "a", ok: true},
		{name: "UUID", id: "0199a3c2-7e51-7c1d-9c43-3b8e2f1a6d01", ok: true},
		{name: "64 characters", id: strings.Repeat("A", 64), ok: true},
		{name: "empty", id: ""},
		{name: "65 characters", id: strings.Repeat("a", 65)},
		{name: "double dot", id: "a..b"},
		{name: "single dot", id: "acme.com"},
		{name: "parent path", id: "../org_b"},
		{name: "slash", id: "org_a/file_x"},
		{name: "backslash", id: `org_a\x`},
		{name: "colon", id: "tenant:1"},
		{name: "space", id: "a b"},
		{name: "leading underscore", id: "_org"},
		{name: "leading dash", id: "-org"},
		{name: "newline", id: "org\nINFO forged"},
		{name: "non-ASCII letter", id: "organização"},
		{name: "NUL", id: "org\x00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := CheckOrgID(tt.id)
			if tt.ok {
				if err != nil {
					t.Fatalf("CheckOrgID(%q) = %v, want nil", tt.id, err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidOrgID) {
				t.Fatalf("CheckOrgID(%q) = %v, want ErrInvalidOrgID", tt.id, err)
			}
			if !strings.Contains(err.Error(), "letters, digits") {
				t.Errorf("CheckOrgID(%q) = %q; want the rule in words", tt.id, err)
			}
		})
	}
}

// FuzzCheckOrgID holds CheckOrgID to the properties its callers rely on:
// an accepted id is a single, dot-free path segment of at most 64 bytes
// that needs no escaping anywhere.
func FuzzCheckOrgID(f *testing.F) {
	for _, s := range []string{"org_dev", "a..b", "", "../x", "a/b", "Ω", strings.Repeat("z", 65)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if CheckOrgID(s) != nil {
			return
		}
		if s == "" || len(s) > MaxOrgIDLen || strings.ContainsAny(s, "./\\: \t\r\n%?#") {
			t.Fatalf("CheckOrgID accepted %q", s)
		}
		for _, r := range s {
			if r > 0x7e || r < 0x21 {
				t.Fatalf("CheckOrgID accepted %q with %U", s, r)
			}
		}
	})
}
