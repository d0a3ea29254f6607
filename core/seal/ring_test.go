package seal

import (
	"errors"
	"strings"
	"testing"
	"time"
)

type claims struct {
	Who string `json:"w"`
	Exp int64  `json:"e"`
}

func (c *claims) ExpiresAt() time.Time { return time.Unix(c.Exp, 0) }

type plain struct {
	Who string `json:"w"`
}

func key(b byte) []byte { return []byte(strings.Repeat(string(rune(b)), KeyLen)) }

func mustRing(t testing.TB, maxLen int, keys ...[]byte) *Ring {
	t.Helper()
	r, err := New(maxLen, keys...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestOpenRefusesWhatItShould(t *testing.T) {
	now := time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)
	r := mustRing(t, 1024, key('a'))
	sealed, err := r.Seal("session", &claims{Who: "ana", Exp: now.Add(time.Minute).Unix()})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(sealed, "ana") {
		t.Fatal("the sealed value shows its content")
	}
	tests := []struct {
		name    string
		ring    *Ring
		purpose string
		sealed  string
		at      time.Time
		ok      bool
	}{
		{name: "same key and purpose, before expiry", ring: r, purpose: "session", sealed: sealed, at: now, ok: true},
		{name: "a second before expiry", ring: r, purpose: "session", sealed: sealed, at: now.Add(time.Minute - time.Second), ok: true},
		{name: "at expiry", ring: r, purpose: "session", sealed: sealed, at: now.Add(time.Minute)},
		{name: "another purpose", ring: r, purpose: "form", sealed: sealed, at: now},
		{name: "another key", ring: mustRing(t, 1024, key('b')), purpose: "session", sealed: sealed, at: now},
		{name: "over the ring's length", ring: mustRing(t, len(sealed)-1, key('a')), purpose: "session", sealed: sealed, at: now},
		{name: "tampered", ring: r, purpose: "session", sealed: flip(sealed), at: now},
		{name: "truncated", ring: r, purpose: "session", sealed: sealed[:len(sealed)-4], at: now},
		{name: "too short for a nonce", ring: r, purpose: "session", sealed: "AAAA", at: now},
		{name: "not base64url", ring: r, purpose: "session", sealed: "%%%", at: now},
		{name: "empty", ring: r, purpose: "session", sealed: "", at: now},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got claims
			err := tt.ring.Open(tt.purpose, tt.sealed, &got, tt.at)
			if tt.ok {
				if err != nil || got.Who != "ana" {
					t.Fatalf("Open() = %+v, %v; want ana back", got, err)
				}
				return
			}
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Open() = %+v, %v; want ErrInvalid", got, err)
			}
		})
	}
}

func TestRotationOpensWithAnyKeySealsWithTheFirst(t *testing.T) {
	now := time.Now()
	old := mustRing(t, 1024, key('a'))
	rotated := mustRing(t, 1024, key('b'), key('a'))
	newOnly := mustRing(t, 1024, key('b'))
	inFlight, err := old.Seal("p", plain{Who: "ana"})
	if err != nil {
		t.Fatal(err)
	}
	var got plain
	if err := rotated.Open("p", inFlight, &got, now); err != nil || got.Who != "ana" {
		t.Fatalf("a value sealed under the previous key: %+v, %v; want it to open during rotation", got, err)
	}
	fresh, err := rotated.Seal("p", plain{Who: "bo"})
	if err != nil {
		t.Fatal(err)
	}
	if err := newOnly.Open("p", fresh, &got, now); err != nil || got.Who != "bo" {
		t.Fatalf("a value sealed during rotation: %+v, %v; want it sealed under the new key", got, err)
	}
	if err := newOnly.Open("p", inFlight, &got, now); !errors.Is(err, ErrInvalid) {
		t.Fatalf("the previous key's value after it was removed: %v; want ErrInvalid", err)
	}
}

func TestValueWithoutExpiryOpensAnyTime(t *testing.T) {
	r := mustRing(t, 1024, key('a'))
	sealed, err := r.Seal("client", plain{Who: "ana"})
	if err != nil {
		t.Fatal(err)
	}
	var got plain
	if err := r.Open("client", sealed, &got, time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)); err != nil || got.Who != "ana" {
		t.Fatalf("Open() = %+v, %v", got, err)
	}
}

func TestSealRefusesWhatItCouldNotOpen(t *testing.T) {
	r := mustRing(t, 64, key('a'))
	if _, err := r.Seal("p", plain{Who: strings.Repeat("x", 100)}); err == nil {
		t.Fatal("sealed a value longer than the ring opens")
	}
}

func TestNewRefusesBadKeys(t *testing.T) {
	for name, keys := range map[string][][]byte{
		"none":      nil,
		"short":     {make([]byte, 16)},
		"one short": {key('a'), make([]byte, 31)},
	} {
		if _, err := New(1024, keys...); err == nil {
			t.Errorf("%s: New accepted it", name)
		}
	}
}

func TestRandomRingsDiffer(t *testing.T) {
	a, _ := NewRandom(1024)
	b, _ := NewRandom(1024)
	sealed, err := a.Seal("p", plain{Who: "ana"})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Open("p", sealed, &plain{}, time.Now()); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a value of one random ring opened in another: %v", err)
	}
}

func TestDeriveKeySeparatesUses(t *testing.T) {
	master := key('m')
	a, err := DeriveKey(master, "kadu/api-cursors/v1")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := DeriveKey(master, "kadu/blob-urls/v1")
	again, _ := DeriveKey(master, "kadu/api-cursors/v1")
	if len(a) != KeyLen || string(a) == string(b) || string(a) != string(again) || string(a) == string(master) {
		t.Fatalf("DeriveKey: want %d stable bytes per use, distinct across uses and from the master", KeyLen)
	}
}

// pinned is claims{Who: "ana", Exp: 1800000060} sealed for purpose "p"
// under key('a'). It pins the format: values sealed before an upgrade
// (devauth client_ids and refresh tokens live for days) must still open.
const pinned = "4HlQc7YURUH9VxZpqYZq1ZVGKoP6zvn0NbMmylTQ-bs8BU1YjW2nAI-fIiOwH1UJywQhppAd"

func TestFormatIsStable(t *testing.T) {
	var got claims
	if err := mustRing(t, 4096, key('a')).Open("p", pinned, &got, time.Unix(1_800_000_000, 0)); err != nil || got.Who != "ana" {
		t.Fatalf("a value sealed by an earlier build: %+v, %v; want it to open", got, err)
	}
}

// FuzzOpen holds Open to its contract on any input: it never panics, and
// nothing but the untouched sealed value opens.
func FuzzOpen(f *testing.F) {
	r := mustRing(f, 4096, key('b'), key('a'))
	now := time.Unix(1_800_000_000, 0)
	f.Add(pinned)
	f.Add(flip(pinned))
	f.Add(pinned[:len(pinned)-1])
	f.Add(pinned[:len(pinned)-1] + "e")
	f.Add("")
	f.Add("AAAA")
	f.Add(strings.Repeat("A", 40))
	f.Fuzz(func(t *testing.T, s string) {
		var got claims
		err := r.Open("p", s, &got, now)
		if s == pinned {
			if err != nil || got.Who != "ana" {
				t.Fatalf("the untouched value: %+v, %v; want it to open", got, err)
			}
			return
		}
		if err == nil {
			t.Fatalf("Open(%q) opened %+v: only the sealed value may", s, got)
		}
		if !errors.Is(err, ErrInvalid) {
			t.Fatalf("Open(%q) = %v; want ErrInvalid", s, err)
		}
	})
}

// flip changes one character in the middle of a sealed value.
func flip(s string) string {
	i := len(s) / 2
	c := byte('A')
	if s[i] == 'A' {
		c = 'B'
	}
	return s[:i] + string(c) + s[i+1:]
}
