package auth

import (
	"errors"
	"net/http"
	"testing"
)

func TestQuote(t *testing.T) {
	tests := []struct{ in, want string }{
		{`kadu.read`, `"kadu.read"`},
		{`a"b`, `"a\"b"`},
		{`a\b`, `"a\\b"`},
		{"line\r\nbreak\x00\x7f", `"linebreak"`},
		{"tab\there", "\"tab\there\""},
		{"", `""`},
	}
	for _, tt := range tests {
		if got := quote(tt.in); got != tt.want {
			t.Errorf("quote(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestDescriptionText(t *testing.T) {
	if got, want := descriptionText("needs \"kadu.run\"\\ ünïcode\n"), "needs kadu.run ncode"; got != want {
		t.Fatalf("descriptionText() = %q, want %q", got, want)
	}
}

func TestChallengeSetHeadersMergesExposeHeaders(t *testing.T) {
	tests := []struct {
		name     string
		existing []string
		want     []string
	}{
		{name: "none", want: []string{"WWW-Authenticate"}},
		{name: "MCP endpoint's list", existing: []string{"MCP-Protocol-Version"}, want: []string{"MCP-Protocol-Version, WWW-Authenticate"}},
		{name: "already exposed", existing: []string{"MCP-Protocol-Version, www-authenticate"}, want: []string{"MCP-Protocol-Version, www-authenticate"}},
		{name: "several values", existing: []string{"A", "B"}, want: []string{"A, B, WWW-Authenticate"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for _, v := range tt.existing {
				h.Add("Access-Control-Expose-Headers", v)
			}
			h.Set("Cache-Control", "public")
			ch := &Challenge{Status: 401, Header: "Bearer x"}
			ch.SetHeaders(h)
			if got := h.Values("Access-Control-Expose-Headers"); !equalStrings(got, tt.want) {
				t.Fatalf("Access-Control-Expose-Headers = %q, want %q", got, tt.want)
			}
			if h.Get("Cache-Control") != "no-store" || h.Get("WWW-Authenticate") != "Bearer x" || h.Get("Retry-After") != "" {
				t.Fatalf("headers = %v", h)
			}
		})
	}
}

func TestChallengeError(t *testing.T) {
	reason := errors.Join(ErrInvalidToken, errors.New("audience"))
	ch := &Challenge{Status: 401, Reason: reason}
	if got, want := ch.Error(), "auth: 401: invalid token\naudience"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(ch, ErrInvalidToken) || errors.Unwrap(ch) != reason {
		t.Error("Unwrap does not reach the reason")
	}
	var target *Challenge
	if !errors.As(error(ch), &target) || target != ch {
		t.Error("errors.As(*Challenge) failed")
	}
	if got := (&Challenge{Status: 403}).Error(); got != "auth: 403" {
		t.Errorf("Error() without reason = %q", got)
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
