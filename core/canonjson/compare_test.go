package canonjson

import (
	"slices"
	"testing"
	"unicode/utf16"
)

// compareUTF16Ref is the definition: the strings' UTF-16 code units,
// compared.
func compareUTF16Ref(a, b string) int {
	return slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
}

func TestCompareUTF16(t *testing.T) {
	tests := []struct{ a, b string }{
		{"", ""}, {"", "a"}, {"a", "b"}, {"ab", "a"}, {"\u20ac", "\U0001F600"}, // € after 😀 in UTF-16, before in bytes
		{"\U0001F600", "\U0001F601"}, {"\U0001F600", "\U00010000"}, {"\uffff", "\U00010000"},
		{"a\xffb", "a\uFFFDb"}, {"\xff", "a"}, {"é", "e\u0301"}, {"\U0001F600x", "\U0001F600"},
	}
	for _, tt := range tests {
		for _, p := range [][2]string{{tt.a, tt.b}, {tt.b, tt.a}} {
			if got, want := compareUTF16(p[0], p[1]), compareUTF16Ref(p[0], p[1]); got != want {
				t.Errorf("compareUTF16(%q, %q) = %d, want %d", p[0], p[1], got, want)
			}
		}
	}
}

func FuzzCompareUTF16(f *testing.F) {
	f.Add("a", "b")
	f.Add("\u20ac", "\U0001F600")
	f.Add("\xff\xfe", "\uFFFD")
	f.Fuzz(func(t *testing.T, a, b string) {
		if got, want := compareUTF16(a, b), compareUTF16Ref(a, b); got != want {
			t.Fatalf("compareUTF16(%q, %q) = %d, want %d", a, b, got, want)
		}
	})
}
