package statement

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf16"
)

// TestTextReader checks the streaming decoder where it cuts its input: at
// decodeChunk bytes inside a long line, between the two units of a UTF-16
// surrogate pair, between "\r" and "\n"; and that it decides UTF-8 or
// Windows-1252 line by line.
func TestTextReader(t *testing.T) {
	long := strings.Repeat("a", decodeChunk-1) // the next character straddles the cut
	pad16 := (decodeChunk - 2) / 2             // UTF-16 units before the cut, after the BOM
	emoji := utf16.Encode([]rune("😀"))
	units := append(make([]uint16, 0, pad16+3), make([]uint16, pad16-1)...)
	for i := range units {
		units[i] = 'x'
	}
	units = append(units, emoji[0], emoji[1], '\r', '\n')
	le := []byte{0xFF, 0xFE}
	be := []byte{0xFE, 0xFF}
	for _, u := range units {
		le = append(le, byte(u), byte(u>>8))
		be = append(be, byte(u>>8), byte(u))
	}
	want16 := strings.Repeat("x", pad16-1) + "😀\n"
	tests := []struct {
		name string
		in   []byte
		want string
	}{
		{"UTF-8 character across the cut", []byte(long + "ç;1\n"), long + "ç;1\n"},
		{"CRLF across the cut", []byte(long + "\r\nb"), long + "\nb"},
		{"lone CR", []byte("a\rb\r\n\rc"), "a\nb\n\nc"},
		{"Windows-1252 line, then UTF-8", []byte("Servi\xe7o\nServiço\n"), "Serviço\nServiço\n"},
		{"Windows-1252 in a long line", []byte(long + "\xe7\xe7;\xe7\n"), long + "çç;ç\n"},
		{"UTF-16LE surrogate pair across the cut", le, want16},
		{"UTF-16BE surrogate pair across the cut", be, want16},
		{"UTF-16 lone surrogate, odd byte", []byte{0xFF, 0xFE, 0x3D, 0xD8, 'a', 0, 'b'}, "\uFFFDa"},
		{"UTF-16 high surrogate at the end", []byte{0xFF, 0xFE, 'a', 0, 0x3D, 0xD8}, "a\uFFFD"},
		{"BOM only", []byte{0xEF, 0xBB, 0xBF}, ""},
		{"empty", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, r := range []io.Reader{bytes.NewReader(tt.in), iotest.OneByteReader(bytes.NewReader(tt.in)), iotest.DataErrReader(bytes.NewReader(tt.in))} {
				got, err := io.ReadAll(newTextReader(r, 1<<30))
				if err != nil || string(got) != tt.want {
					t.Fatalf("decoded %d bytes %q…, %v; want %d bytes %q…", len(got), tail(string(got)), err, len(tt.want), tail(tt.want))
				}
			}
		})
	}
}

func tail(s string) string { return s[max(0, len(s)-20):] }

func TestFoldedHasPrefix(t *testing.T) {
	for _, s := range []string{"SALDO ANTERIOR", "  saldo do dia", "Sáldo", "S A L D O", "S  a\u00A0L D O X", "SALD", "S A L D", "S A L D ", "SALDOS", "X SALDO", "", "S\tA\tL\tD\tO"} {
		for _, prefix := range []string{"SALDO", "S A L D O"} {
			if got, want := foldedHasPrefix(s, prefix), strings.HasPrefix(Fold(s), prefix); got != want {
				t.Errorf("foldedHasPrefix(%q, %q) = %v, want %v (as Fold)", s, prefix, got, want)
			}
		}
	}
}
