package stateseal

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kobana/kadu/core/auth"
)

func TestSealBindsStateToCallerAndCall(t *testing.T) {
	s, err := New(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)
	p := &auth.Principal{Issuer: "https://issuer.test", Subject: "user-a", OrgID: "org_a"}
	base := Binding{Principal: p, Bundle: "tasks", Op: "tools/call", Target: "kadu_tasks_delete", Args: json.RawMessage(`{"id":"tsk_1","n":1}`)}
	sealed, err := s.Seal(base, json.RawMessage(`{"step":1}`), now)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(sealed, "step") {
		t.Fatal("the sealed state shows its content")
	}
	other := *p
	other.OrgID = "org_b"
	otherUser := *p
	otherUser.Subject = "someone-else"
	otherIssuer := *p
	otherIssuer.Issuer = "https://other.test"
	tests := []struct {
		name   string
		b      Binding
		sealed string
		at     time.Time
		ok     bool
	}{
		{name: "same call, same caller", b: base, sealed: sealed, at: now.Add(time.Minute), ok: true},
		{name: "same arguments, reordered and 1.0 for 1", b: with(base, func(b *Binding) { b.Args = json.RawMessage(`{"n":1.0,"id":"tsk_1"}`) }), sealed: sealed, at: now, ok: true},
		{name: "expired after 10 minutes", b: base, sealed: sealed, at: now.Add(TTL), ok: false},
		{name: "another organisation", b: with(base, func(b *Binding) { b.Principal = &other }), sealed: sealed, at: now},
		{name: "another user", b: with(base, func(b *Binding) { b.Principal = &otherUser }), sealed: sealed, at: now},
		{name: "another issuer", b: with(base, func(b *Binding) { b.Principal = &otherIssuer }), sealed: sealed, at: now},
		{name: "another tool", b: with(base, func(b *Binding) { b.Target = "kadu_tasks_get" }), sealed: sealed, at: now},
		{name: "another op", b: with(base, func(b *Binding) { b.Op = "prompts/get" }), sealed: sealed, at: now},
		{name: "another bundle", b: with(base, func(b *Binding) { b.Bundle = "files" }), sealed: sealed, at: now},
		{name: "other arguments", b: with(base, func(b *Binding) { b.Args = json.RawMessage(`{"id":"tsk_2","n":1}`) }), sealed: sealed, at: now},
		{name: "truncated", b: base, sealed: sealed[:len(sealed)-4], at: now},
		{name: "not base64", b: base, sealed: "%%%", at: now},
		{name: "empty", b: base, sealed: "", at: now},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.Open(tt.b, tt.sealed, tt.at)
			if tt.ok {
				if err != nil || string(got) != `{"step":1}` {
					t.Fatalf("open() = %s, %v; want the state back", got, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("open() = %s, want an error", got)
			}
		})
	}
}

func TestSealKeysDiffer(t *testing.T) {
	a, _ := New(nil)
	b, _ := New(nil)
	bind := Binding{Principal: &auth.Principal{OrgID: "o"}, Op: "tools/call", Target: "t"}
	now := time.Now()
	sealed, err := a.Seal(bind, json.RawMessage(`1`), now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Open(bind, sealed, now); err == nil {
		t.Fatal("a state sealed with one random key opened with another")
	}
}

func with(b Binding, f func(*Binding)) Binding {
	f(&b)
	return b
}
