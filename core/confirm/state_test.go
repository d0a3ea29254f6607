package confirm

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/mcp"
)

var t0 = time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)

func sealedFor(t testing.TB, r *keyRing, p *auth.Principal, tool, args string) (string, stateClaims) {
	t.Helper()
	b, err := newBinding(p, tool, json.RawMessage(args))
	if err != nil {
		t.Fatal(err)
	}
	c, err := newClaims(b, t0, DefaultStateTTL)
	if err != nil {
		t.Fatal(err)
	}
	s, err := r.seal(c)
	if err != nil {
		t.Fatal(err)
	}
	return s, c
}

func ring(t testing.TB, keys ...[]byte) *keyRing {
	t.Helper()
	r, err := newKeyRing(keys)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A state binds caller, tool, arguments and expiry, and opens under every
// key of the ring but never under a key outside it.
func TestStateBinding(t *testing.T) {
	r := ring(t, testKey(1))
	s, claims := sealedFor(t, r, alice, "kadu_tasks_run", `{"a":1,"b":[1,2]}`)
	bind := func(p *auth.Principal, tool, args string) binding {
		b, err := newBinding(p, tool, json.RawMessage(args))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	tests := []struct {
		name string
		b    binding
		now  time.Time
		want bool
	}{
		{"same call", bind(alice, "kadu_tasks_run", `{"a":1,"b":[1,2]}`), t0, true},
		{"reordered, 1.0", bind(alice, "kadu_tasks_run", `{"b":[1,2.0],"a":1.0}`), t0, true},
		{"last second", bind(alice, "kadu_tasks_run", `{"a":1,"b":[1,2]}`), t0.Add(DefaultStateTTL - time.Second), true},
		{"expired", bind(alice, "kadu_tasks_run", `{"a":1,"b":[1,2]}`), t0.Add(DefaultStateTTL), false},
		{"another person", bind(bob, "kadu_tasks_run", `{"a":1,"b":[1,2]}`), t0, false},
		{"another issuer", bind(dave, "kadu_tasks_run", `{"a":1,"b":[1,2]}`), t0, false},
		{"another organisation", bind(erin, "kadu_tasks_run", `{"a":1,"b":[1,2]}`), t0, false},
		{"another tool", bind(alice, "kadu_tasks_delete", `{"a":1,"b":[1,2]}`), t0, false},
		{"other arguments", bind(alice, "kadu_tasks_run", `{"a":2,"b":[1,2]}`), t0, false},
	}
	for _, tt := range tests {
		got, err := r.open(s)
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		if got != claims {
			t.Fatalf("open = %+v, want %+v", got, claims)
		}
		if ok := got.matches(tt.b, tt.now); ok != tt.want {
			t.Errorf("%s: matches = %t, want %t", tt.name, ok, tt.want)
		}
	}
}

func TestKeyRing(t *testing.T) {
	old, cur, other := testKey(1), testKey(2), testKey(3)
	s, _ := sealedFor(t, ring(t, old), alice, "x", `{}`)
	if _, err := ring(t, cur, old).open(s); err != nil {
		t.Errorf("a state sealed with a key still in the ring: %v", err)
	}
	if _, err := ring(t, cur, other).open(s); !errors.Is(err, errBadState) {
		t.Errorf("a state sealed with a removed key: %v, want errBadState", err)
	}
	// The first key seals.
	s2, _ := sealedFor(t, ring(t, cur, old), alice, "x", `{}`)
	if _, err := ring(t, cur).open(s2); err != nil {
		t.Errorf("sealed with Keys[0]: %v", err)
	}
	if _, err := ring(t, old).open(s2); err == nil {
		t.Error("a ring without Keys[0] opened its state")
	}
	// Two states of one call differ: each has its own nonce.
	a, ca := sealedFor(t, ring(t, cur), alice, "x", `{}`)
	b, cb := sealedFor(t, ring(t, cur), alice, "x", `{}`)
	if a == b || ca.Nonce == cb.Nonce || len(ca.Nonce) != 32 {
		t.Errorf("states %q and %q, nonces %q and %q", a, b, ca.Nonce, cb.Nonce)
	}
}

// A bundle's state, or anything else, is not ours and never opens.
func TestStateForeign(t *testing.T) {
	r := ring(t, testKey(1))
	for _, s := range []string{"", "bundle-state", "kc2.abc", "KC1.abc", statePrefix, statePrefix + "====", statePrefix + strings.Repeat("A", 40)} {
		if _, err := r.open(s); !errors.Is(err, errBadState) {
			t.Errorf("open(%q) = %v, want errBadState", s, err)
		}
	}
	if isOurs("bundle-state") || !isOurs(statePrefix+"x") {
		t.Error("isOurs mixes up states")
	}
}

func TestNewOptions(t *testing.T) {
	next := &fakeNext{}
	tests := []struct {
		name string
		opts Options
		want []string // substrings of the error; none: valid
	}{
		{"no store", Options{Next: next, Store: nil, Keys: [][]byte{testKey(1)}, PublicURL: "https://kadu.example.com"}, []string{"Options.Store"}},
		{"no keys", Options{Next: next, PublicURL: "https://kadu.example.com"}, []string{"Options.Keys is empty", "32-byte"}},
		{"short key", Options{Next: next, Keys: [][]byte{testKey(1), []byte("short")}, PublicURL: "https://x.test"}, []string{"Options.Keys[1] has 5 bytes"}},
		{"no next", Options{Keys: [][]byte{testKey(1)}, PublicURL: "https://x.test"}, []string{"Options.Next is required"}},
		{"bad URL", Options{Next: next, Keys: [][]byte{testKey(1)}, PublicURL: "kadu.example.com"}, []string{`Options.PublicURL "kadu.example.com"`}},
		{"URL with query", Options{Next: next, Keys: [][]byte{testKey(1)}, PublicURL: "https://x.test/?a=1"}, []string{"Options.PublicURL"}},
		{"negative TTL", Options{Next: next, Keys: [][]byte{testKey(1)}, PublicURL: "https://x.test", StateTTL: -1}, []string{"StateTTL"}},
	}
	for _, tt := range tests {
		_, err := New(tt.opts)
		for _, w := range tt.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %v, want it to mention %q", tt.name, err, w)
			}
		}
	}
}

func TestCanAsk(t *testing.T) {
	tests := []struct {
		era  mcp.Era
		caps string
		want bool
	}{
		{mcp.Era2026, capsForm, true},
		{mcp.Era2026, capsFormOnly, true},
		{mcp.Era2026, capsFormURL, true},
		{mcp.Era2026, capsURLOnly, false},
		{mcp.Era2026, capsNone, false},
		{mcp.Era2026, `{"elicitation":null}`, false},
		{mcp.Era2026, `{"elicitation":true}`, false},
		{mcp.Era2025, capsForm, false},
	}
	for _, tt := range tests {
		var caps map[string]json.RawMessage
		if err := json.Unmarshal([]byte(tt.caps), &caps); err != nil {
			t.Fatal(err)
		}
		if got := canAsk(&mcp.ClientContext{Era: tt.era, Capabilities: caps}); got != tt.want {
			t.Errorf("era %v caps %s: canAsk = %t, want %t", tt.era, tt.caps, got, tt.want)
		}
	}
}

// FuzzOpenState: whatever a client sends as requestState, open never
// panics, and nothing but a state sealed under the ring opens — a
// forgery or a mangled state fails, and what opens carries exactly the
// claims that were sealed.
func FuzzOpenState(f *testing.F) {
	r := ring(f, testKey(1))
	// Fixed claims: the fuzzing workers are other processes, and a seed
	// sealed in one must carry what every process expects.
	claims := stateClaims{Issuer: alice.Issuer, Subject: alice.Subject, Org: alice.OrgID, Tool: "kadu_tasks_run",
		Args: strings.Repeat("ab", 32), Expiry: t0.Add(DefaultStateTTL).Unix(), Nonce: strings.Repeat("cd", 16)}
	valid, err := r.seal(claims)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(valid)
	f.Add(valid[:len(valid)-1])
	f.Add(flip(valid, 20))
	f.Add(statePrefix)
	f.Add(statePrefix + "AAAA")
	f.Add("bundle-state")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		got, err := r.open(s)
		if err != nil {
			if !errors.Is(err, errBadState) {
				t.Fatalf("open(%q) error %v, want errBadState", s, err)
			}
			return
		}
		// Base64 has a few spellings of the same bytes; any that opens
		// must carry the sealed claims, since GCM authenticates them.
		if got != claims {
			t.Fatalf("open(%q) = %+v, a state that was never sealed", s, got)
		}
	})
}

// FuzzParseAnswer: any inputResponses.confirm is an answer or the -32602
// that names the field; only the exact accept shape runs the tool.
func FuzzParseAnswer(f *testing.F) {
	for _, s := range []string{`{"action":"accept","content":{"confirm":true}}`, `{"action":"accept","content":{"confirm":false}}`,
		`{"action":"decline"}`, `{"action":"cancel"}`, `{"action":"accept"}`, `null`, `[]`, `{"action":"accept","content":{"confirm":"true"}}`,
		`{"Action":"accept","content":{"confirm":true}}`, `{"action":"accept","content":{"confirm":null}}`, `{"action":null}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ans, err := parseAnswer(map[string]json.RawMessage{confirmKey: json.RawMessage(s)})
		if err != nil {
			if err.Code != mcp.CodeInvalidParams || !strings.Contains(err.Message, "inputResponses.confirm") {
				t.Fatalf("parseAnswer(%s) error %v", s, err)
			}
			return
		}
		if ans == answerAccept {
			var v struct {
				Action  string `json:"action"`
				Content struct {
					Confirm bool `json:"confirm"`
				} `json:"content"`
			}
			if json.Unmarshal([]byte(s), &v) != nil || v.Action != "accept" || !v.Content.Confirm {
				t.Fatalf("parseAnswer(%s) accepted it", s)
			}
		}
	})
}
