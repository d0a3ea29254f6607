package blob

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckKey(t *testing.T) {
	tests := []struct {
		name string
		key  string
		ok   bool
	}{
		{name: "organisation and file", key: "org_019a/file_019b", ok: true},
		{name: "one segment", key: "file_1", ok: true},
		{name: "dots inside a name", key: "org/report.v1.csv", ok: true},
		{name: "spaces and unicode", key: "org 1/relatório março", ok: true},
		{name: "query and fragment characters", key: "org/a?b#c%d", ok: true},
		{name: "longest allowed", key: strings.Repeat("a", maxKeyLen), ok: true},
		{name: "empty", key: ""},
		{name: "too long", key: strings.Repeat("a", maxKeyLen+1)},
		{name: "leading slash", key: "/org/file"},
		{name: "trailing slash", key: "org/file/"},
		{name: "empty segment", key: "org//file"},
		{name: "parent segment", key: "org/../other/file"},
		{name: "parent at start", key: "../file"},
		{name: "double dot inside a name", key: "org/a..b"},
		{name: "dot segment", key: "org/./file"},
		{name: "backslash", key: `org\..\file`},
		{name: "newline", key: "org/fi\nle"},
		{name: "NUL", key: "org/fi\x00le"},
		{name: "DEL", key: "org/fi\x7fle"},
		{name: "C1 control", key: "org/fi\u0085le"},
		{name: "invalid UTF-8", key: "org/fi\xffle"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkKey(tt.key)
			if tt.ok && err != nil {
				t.Errorf("checkKey(%q) = %v, want nil", tt.key, err)
			}
			if !tt.ok && !errors.Is(err, ErrInvalidKey) {
				t.Errorf("checkKey(%q) = %v, want ErrInvalidKey", tt.key, err)
			}
		})
	}
}

// TestBadKeyRefusedEverywhere checks that every operation refuses a key
// that could leave the bucket, before touching storage.
func TestBadKeyRefusedEverywhere(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	const key = "../outside"
	_, _, errA := f.bucket.Attributes(ctx, key)
	_, errR := f.bucket.NewReader(ctx, key)
	errW := f.bucket.WriteAll(ctx, key, "text/plain", []byte("x"))
	errD := f.bucket.Delete(ctx, key)
	_, errS := f.bucket.SignedDownload(ctx, key, "a.txt", t0.Add(60e9))
	for name, err := range map[string]error{"Attributes": errA, "NewReader": errR, "WriteAll": errW, "Delete": errD, "SignedDownload": errS} {
		if !errors.Is(err, ErrInvalidKey) {
			t.Errorf("%s(%q) = %v, want ErrInvalidKey", name, key, err)
		}
	}
}
