package auth

import (
	"errors"
	"net/http"
	"strings"
	"testing"
)

func TestBearerToken(t *testing.T) {
	tests := []struct {
		name    string
		values  []string
		want    string
		wantErr error
	}{
		{name: "canonical", values: []string{"Bearer abc.def.ghi"}, want: "abc.def.ghi"},
		{name: "case-insensitive scheme", values: []string{"bEaReR abc"}, want: "abc"},
		{name: "several spaces", values: []string{"Bearer    abc"}, want: "abc"},
		{name: "token68 alphabet and padding", values: []string{"Bearer aZ09-._~+/=="}, want: "aZ09-._~+/=="},
		{name: "outer whitespace", values: []string{"\t Bearer abc \t"}, want: "abc"},
		{name: "absent", wantErr: ErrNoToken},
		{name: "empty", values: []string{""}, wantErr: ErrNoToken},
		{name: "blank", values: []string{"  \t"}, wantErr: ErrNoToken},
		{name: "two headers", values: []string{"Bearer a", "Bearer b"}, wantErr: ErrMalformedAuthorization},
		{name: "scheme only", values: []string{"Bearer"}, wantErr: ErrMalformedAuthorization},
		{name: "other scheme", values: []string{"DPoP abc"}, wantErr: ErrMalformedAuthorization},
		{name: "scheme prefix", values: []string{"Bearerx abc"}, wantErr: ErrMalformedAuthorization},
		{name: "no space", values: []string{"Bearerabc"}, wantErr: ErrMalformedAuthorization},
		{name: "tab separator", values: []string{"Bearer\tabc"}, wantErr: ErrMalformedAuthorization},
		{name: "only padding", values: []string{"Bearer =="}, wantErr: ErrMalformedAuthorization},
		{name: "padding in the middle", values: []string{"Bearer ab=c"}, wantErr: ErrMalformedAuthorization},
		{name: "auth-params", values: []string{`Bearer realm="x"`}, wantErr: ErrMalformedAuthorization},
		{name: "two tokens", values: []string{"Bearer a b"}, wantErr: ErrMalformedAuthorization},
		{name: "non-ASCII", values: []string{"Bearer tökén"}, wantErr: ErrMalformedAuthorization},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for _, v := range tt.values {
				h.Add("Authorization", v)
			}
			got, err := bearerToken(h)
			if got != tt.want || !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("bearerToken(%q) = %q, %v; want %q, %v", tt.values, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func FuzzBearerToken(f *testing.F) {
	for _, seed := range []string{
		"Bearer abc.def.ghi", "bearer a", "BEARER   x==", "Bearer", "Bearer ", "Basic dXNlcjpwYXNz",
		"Bearer a b", "Bearer\tabc", "", " ", "Bearer =", "Bearer ab=c", `Bearer realm="x"`,
		"eyJhbGciOiJSUzI1NiJ9.e30.c2ln", "Bearer tökén", "Bearer \x00",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, v string) {
		h := http.Header{}
		h.Set("Authorization", v)
		tok, err := bearerToken(h)
		if err != nil {
			if tok != "" {
				t.Fatalf("bearerToken(%q) = %q with error %v", v, tok, err)
			}
			if !errors.Is(err, ErrNoToken) && !errors.Is(err, ErrMalformedAuthorization) {
				t.Fatalf("bearerToken(%q) error %v wraps neither sentinel", v, err)
			}
			// The reason is logged: it must never echo the header, so it is
			// one of a few fixed texts.
			switch err.Error() {
			case "no bearer token",
				"malformed Authorization header: the scheme is not Bearer",
				"malformed Authorization header: Bearer without a token",
				"malformed Authorization header: the credentials are not a token68":
			default:
				t.Fatalf("bearerToken(%q) error %q is not one of the fixed reasons", v, err)
			}
			return
		}
		if !isToken68(tok) || !strings.Contains(v, tok) {
			t.Fatalf("bearerToken(%q) = %q: not a token68 taken from the header", v, tok)
		}
		if !strings.EqualFold(strings.TrimLeft(v, " \t")[:6], "Bearer") {
			t.Fatalf("bearerToken(%q) accepted another scheme", v)
		}
		// Re-rendering the canonical form yields the same token.
		h.Set("Authorization", "Bearer "+tok)
		if again, err := bearerToken(h); err != nil || again != tok {
			t.Fatalf("round trip of %q = %q, %v", tok, again, err)
		}
	})
}
