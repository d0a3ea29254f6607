package statement

import (
	"bytes"
	"io"
	"unicode/utf16"
	"unicode/utf8"
)

// decodeChunk is how much raw input textReader decodes at a time; a line
// longer than this is decoded in pieces cut at character boundaries.
const decodeChunk = 32 << 10

// textReader is the streaming form of Decode: it reads the bytes of an
// exported file and returns UTF-8 text with "\r\n" and "\r" turned into
// "\n". A BOM selects UTF-8 or UTF-16; otherwise each line (or piece of a
// long line) that is not valid UTF-8 is read as Windows-1252, so one stray
// byte does not turn the rest of a UTF-8 file into mojibake.
//
// It keeps decodeChunk bytes of input and at most three times that of
// output. After maxText bytes of output it fails with an ErrLimit
// *ParseError; errors from the source are returned as they are.
// A textReader is not safe for concurrent use.
type textReader struct {
	src     io.Reader
	maxText int64

	raw      []byte // undecoded input: raw[r:w]
	r, w     int
	srcErr   error // from src, returned once raw is drained
	started  bool  // BOM checked
	utf16    int   // 0: not UTF-16; 1: little endian; 2: big endian
	surr     rune  // a high surrogate waiting for its pair (UTF-16)
	lastCR   bool  // the last byte emitted came from '\r'
	out      []byte
	off      int
	total    int64 // bytes of text emitted
	newlines int   // '\n' emitted, for the line of a limit error
	err      error // sticky, returned after out is drained
}

var _ io.Reader = (*textReader)(nil)

func newTextReader(src io.Reader, maxText int64) *textReader {
	return &textReader{src: src, maxText: maxText, raw: make([]byte, decodeChunk)}
}

func (t *textReader) Read(p []byte) (int, error) {
	for t.off == len(t.out) {
		if t.err != nil {
			return 0, t.err
		}
		t.fill()
	}
	n := copy(p, t.out[t.off:])
	t.off += n
	return n, nil
}

// more reads from src into raw until raw holds at least want bytes, raw is
// full or src fails.
func (t *textReader) more(want int) {
	if t.r > 0 {
		t.w = copy(t.raw, t.raw[t.r:t.w])
		t.r = 0
	}
	for empty := 0; t.w < want && t.w < len(t.raw) && t.srcErr == nil; {
		n, err := t.src.Read(t.raw[t.w:])
		t.w += n
		switch {
		case err != nil:
			t.srcErr = err
		case n > 0:
			empty = 0
		default:
			if empty++; empty == 100 { // as bufio does for a reader that returns nothing
				t.srcErr = io.ErrNoProgress
			}
		}
	}
}

// fill decodes the next piece of input into out, or sets err.
func (t *textReader) fill() {
	t.out, t.off = t.out[:0], 0
	if !t.started {
		t.started = true
		t.more(3)
		switch b := t.raw[:t.w]; {
		case bytes.HasPrefix(b, []byte{0xEF, 0xBB, 0xBF}):
			t.r = 3
		case bytes.HasPrefix(b, []byte{0xFF, 0xFE}):
			t.r, t.utf16 = 2, 1
		case bytes.HasPrefix(b, []byte{0xFE, 0xFF}):
			t.r, t.utf16 = 2, 2
		}
	}
	if t.w-t.r < 4 || bytes.IndexByte(t.raw[t.r:t.w], '\n') < 0 {
		t.more(len(t.raw))
	}
	if t.r == t.w {
		t.err = t.srcErr
		if t.err == nil {
			t.err = io.ErrNoProgress
		}
		return
	}
	if t.utf16 != 0 {
		t.fill16()
	} else {
		t.fill8()
	}
	t.total += int64(len(t.out))
	if t.total > t.maxText {
		t.err = limitError(t.newlines+1, t.total, "bytes of text", t.maxText)
		t.out = t.out[:0]
		return
	}
	t.newlines += bytes.Count(t.out, []byte{'\n'})
}

// fill8 decodes one line, or a piece of a long line cut before a character
// that does not fit.
func (t *textReader) fill8() {
	b := t.raw[t.r:t.w]
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b = b[:i+1]
	} else if t.srcErr == nil {
		b = b[:runeCut(b)]
	}
	t.r += len(b)
	if utf8.Valid(b) {
		t.emit(b)
		return
	}
	for _, c := range b {
		switch {
		case c < 0x80:
			t.emitByte(c)
		case c < 0xA0:
			t.out = append(t.out, cp1252[c-0x80]...)
			t.lastCR = false
		default: // Latin-1 is the identity on the rest
			t.out = utf8.AppendRune(t.out, rune(c))
			t.lastCR = false
		}
	}
}

// runeCut returns how much of b to decode now so that a character split at
// the end of b is decoded whole with the next piece.
func runeCut(b []byte) int {
	for k := 1; k <= 3 && k <= len(b); k++ {
		c := b[len(b)-k]
		if c < 0x80 {
			return len(b)
		}
		if c >= 0xC0 { // a leading byte: does its character fit?
			need := 2
			if c >= 0xF0 {
				need = 4
			} else if c >= 0xE0 {
				need = 3
			}
			if need > k {
				return len(b) - k
			}
			return len(b)
		}
	}
	return len(b)
}

// fill16 decodes the raw input as UTF-16 code units; a trailing odd byte
// waits for more input (and is dropped at the end, as Decode does).
func (t *textReader) fill16() {
	b := t.raw[t.r:t.w]
	b = b[:len(b)&^1]
	if len(b) == 0 { // one odd byte at the end of the input
		t.r = t.w
		return
	}
	t.r += len(b)
	for i := 0; i < len(b); i += 2 {
		var u uint16
		if t.utf16 == 2 {
			u = uint16(b[i])<<8 | uint16(b[i+1])
		} else {
			u = uint16(b[i+1])<<8 | uint16(b[i])
		}
		r := rune(u)
		if t.surr != 0 {
			if pair := utf16.DecodeRune(t.surr, r); pair != utf8.RuneError {
				t.surr = 0
				t.emitRune(pair)
				continue
			}
			t.surr = 0
			t.emitRune(utf8.RuneError)
		}
		switch {
		case utf16.IsSurrogate(r) && r < 0xDC00:
			t.surr = r
		case utf16.IsSurrogate(r):
			t.emitRune(utf8.RuneError)
		default:
			t.emitRune(r)
		}
	}
	if t.srcErr != nil && t.r >= t.w-1 && t.surr != 0 {
		t.surr = 0
		t.emitRune(utf8.RuneError)
	}
}

func (t *textReader) emitRune(r rune) {
	if r < utf8.RuneSelf {
		t.emitByte(byte(r))
		return
	}
	t.out = utf8.AppendRune(t.out, r)
	t.lastCR = false
}

// emit appends valid UTF-8 text, normalising line endings.
func (t *textReader) emit(b []byte) {
	if !t.lastCR && bytes.IndexByte(b, '\r') < 0 {
		t.out = append(t.out, b...)
		return
	}
	for _, c := range b {
		t.emitByte(c)
	}
}

func (t *textReader) emitByte(c byte) {
	switch {
	case c == '\r':
		t.out = append(t.out, '\n')
		t.lastCR = true
	case c == '\n' && t.lastCR:
		t.lastCR = false
	default:
		t.out = append(t.out, c)
		t.lastCR = false
	}
}
