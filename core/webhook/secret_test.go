package webhook

import (
	"encoding/base64"
	"strings"
	"testing"
)

func TestNewSecret(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 100 {
		s, err := NewSecret()
		if err != nil {
			t.Fatalf("NewSecret() error = %v", err)
		}
		enc, ok := strings.CutPrefix(s, "whsec_")
		if !ok {
			t.Fatalf("NewSecret() = %q, want the whsec_ prefix", s)
		}
		key, err := base64.StdEncoding.DecodeString(enc)
		if err != nil || len(key) != 32 {
			t.Fatalf("NewSecret() key = %d bytes, %v; want 32 bytes of standard base64", len(key), err)
		}
		if seen[s] {
			t.Fatalf("NewSecret() returned %q twice", s)
		}
		seen[s] = true
		if got, err := ParseSecret(s); err != nil || string(got) != string(key) {
			t.Fatalf("ParseSecret(NewSecret()) = %x, %v; want %x", got, err, key)
		}
	}
}

func TestParseSecret(t *testing.T) {
	t.Parallel()
	b64 := func(n int) string { return base64.StdEncoding.EncodeToString(make([]byte, n)) }
	tests := []struct {
		name     string
		secret   string
		wantLen  int    // key bytes when accepted
		wantErr  string // substring of the error; "" when accepted
		mustHide string // text of the secret the error must not repeat
	}{
		{name: "reference vector (24 bytes)", secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", wantLen: 24},
		{name: "64 bytes, the maximum", secret: "whsec_" + b64(64), wantLen: 64},
		{name: "missing prefix", secret: "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", wantErr: `must start with "whsec_"`, mustHide: "MfKQ9r8G"},
		{name: "other scheme prefix", secret: "whsk_" + b64(32), wantErr: `must start with "whsec_"`},
		{name: "empty", secret: "", wantErr: `must start with "whsec_"`},
		{name: "not base64", secret: "whsec_not*base64*at*all*but*long*enough", wantErr: "standard base64", mustHide: "not*base64"},
		{name: "url-safe alphabet", secret: "whsec_" + strings.ReplaceAll(b64(32)+"-_", "=", ""), wantErr: "standard base64"},
		{name: "too short", secret: "whsec_" + b64(16), wantErr: "key is 16 bytes, want 24 to 64"},
		{name: "too long", secret: "whsec_" + b64(65), wantErr: "key is 65 bytes, want 24 to 64"},
		{name: "prefix only", secret: "whsec_", wantErr: "key is 0 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			key, err := ParseSecret(tt.secret)
			if tt.wantErr == "" {
				if err != nil || len(key) != tt.wantLen {
					t.Fatalf("ParseSecret() = %d bytes, %v; want %d bytes", len(key), err, tt.wantLen)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("ParseSecret() error = %v, want one containing %q", err, tt.wantErr)
			}
			if !strings.HasPrefix(err.Error(), "secret: ") {
				t.Errorf("ParseSecret() error = %q, want it to name the field (secret: …)", err)
			}
			if tt.mustHide != "" && strings.Contains(err.Error(), tt.mustHide) {
				t.Errorf("ParseSecret() error = %q repeats the secret", err)
			}
		})
	}
}
