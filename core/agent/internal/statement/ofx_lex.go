package statement

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// maxRawTag is the most bytes between '<' and '>' of a tag: a 64-character
// name, a slash and some spaces.
const maxRawTag = 128

// ofxToken is a tag or the text after it. val is valid until the next call
// to ofxLexer.next.
type ofxToken struct {
	kind byte   // '<' open tag, '/' close tag, 't' text
	val  []byte // upper-case tag name, or the raw text
	line int
}

// ofxLexer splits decoded OFX text into tags and texts in one pass.
// Processing instructions and comments are skipped. It keeps one tag or one
// text (at most Limits.MaxLineBytes) at a time; nothing else grows with the
// input. It is not safe for concurrent use.
type ofxLexer struct {
	src  *bufio.Reader
	max  int // Limits.MaxLineBytes
	line int
	buf  []byte
}

// header reads up to and including the first "<OFX>" (any case) and returns
// what came before it. Beyond max bytes it fails.
func (l *ofxLexer) header() (string, error) {
	var h []byte
	for {
		c, err := l.src.ReadByte()
		if errors.Is(err, io.EOF) {
			return "", &ParseError{Line: 1, Msg: "no <OFX> element"}
		}
		if err != nil {
			return "", fmt.Errorf("line %d: %w", l.line, err)
		}
		h = append(h, c)
		if c == '\n' {
			l.line++
		}
		if n := len(h); n >= 5 && c == '>' && bytes.EqualFold(h[n-5:], []byte("<OFX>")) {
			return string(h[:n-5]), nil
		}
		if len(h) > l.max {
			return "", &ParseError{Line: 1, Msg: fmt.Sprintf("no <OFX> element in the first %d bytes", l.max), Err: ErrLimit}
		}
	}
}

// next returns the next token, io.EOF at the end of the input, a
// *ParseError for malformed input, or the source's error wrapped with the
// line.
func (l *ofxLexer) next() (ofxToken, error) {
	for {
		c, err := l.src.ReadByte()
		if err != nil {
			return ofxToken{}, l.readErr(err)
		}
		if c != '<' {
			if err := l.src.UnreadByte(); err != nil {
				return ofxToken{}, err
			}
			t, ok, err := l.text()
			if err != nil || ok {
				return t, err
			}
			continue
		}
		head, _ := l.src.Peek(3)
		switch {
		case bytes.HasPrefix(head, []byte("!--")):
			if err := l.skip("-->", "unclosed comment"); err != nil {
				return ofxToken{}, err
			}
			continue
		case bytes.HasPrefix(head, []byte("?")):
			if err := l.skip("?>", "unclosed processing instruction"); err != nil {
				return ofxToken{}, err
			}
			continue
		}
		return l.tag()
	}
}

func (l *ofxLexer) readErr(err error) error {
	if errors.Is(err, io.EOF) {
		return io.EOF
	}
	var pe *ParseError
	if errors.As(err, &pe) {
		return err
	}
	return fmt.Errorf("line %d: %w", l.line, err)
}

// text reads up to the next '<' or the end. ok is false for text that is
// only white space, which is no token.
func (l *ofxLexer) text() (t ofxToken, ok bool, err error) {
	l.buf = l.buf[:0]
	for {
		chunk, err := l.src.ReadSlice('<')
		if errors.Is(err, bufio.ErrBufferFull) {
			err = nil
		} else if err == nil {
			chunk = chunk[:len(chunk)-1]
			if err := l.src.UnreadByte(); err != nil {
				return t, false, err
			}
			err = io.EOF // end of this text
		}
		l.buf = append(l.buf, chunk...)
		if len(l.buf) > l.max {
			if len(bytes.TrimSpace(l.buf)) > 0 {
				return t, false, l.tooLong(err)
			}
			l.line += bytes.Count(l.buf, []byte{'\n'}) // white space between aggregates
			l.buf = l.buf[:0]
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				return t, false, l.readErr(err)
			}
			break
		}
	}
	t = ofxToken{kind: 't', val: l.buf, line: l.line + leadingNewlines(l.buf)}
	l.line += bytes.Count(l.buf, []byte{'\n'})
	return t, len(bytes.TrimSpace(l.buf)) > 0, nil
}

// tooLong counts the rest of a text past the limit, without keeping it,
// and reports it. err is what the read that crossed the limit returned.
func (l *ofxLexer) tooLong(err error) error {
	line := l.line + leadingNewlines(l.buf)
	n := int64(len(l.buf))
	for errors.Is(err, bufio.ErrBufferFull) || err == nil {
		var chunk []byte
		chunk, err = l.src.ReadSlice('<')
		n += int64(len(chunk))
		if err == nil {
			n-- // the '<'
			break
		}
	}
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return l.readErr(err)
	}
	return limitError(line, n, "bytes of text between two tags", int64(l.max))
}

// skip discards input up to and including end; the '<' is read.
func (l *ofxLexer) skip(end, unclosed string) error {
	start := l.line
	last := end[len(end)-1]
	var tail []byte // the bytes before last, across reads
	for {
		chunk, err := l.src.ReadSlice(last)
		l.line += bytes.Count(chunk, []byte{'\n'})
		if err == nil {
			seen := append(tail, chunk...)
			if bytes.HasSuffix(seen, []byte(end)) {
				return nil
			}
		} else if !errors.Is(err, bufio.ErrBufferFull) {
			if errors.Is(err, io.EOF) {
				return &ParseError{Line: start, Msg: unclosed}
			}
			return l.readErr(err)
		}
		tail = append(tail[:0], chunk[max(0, len(chunk)-len(end)):]...)
	}
}

// tag reads a tag after its '<'.
func (l *ofxLexer) tag() (ofxToken, error) {
	line := l.line
	l.buf = l.buf[:0]
	for {
		c, err := l.src.ReadByte()
		if errors.Is(err, io.EOF) {
			return ofxToken{}, &ParseError{Line: line, Msg: "unclosed tag"}
		}
		if err != nil {
			return ofxToken{}, l.readErr(err)
		}
		if c == '>' {
			break
		}
		if c == '\n' {
			l.line++
		}
		if l.buf = append(l.buf, c); len(l.buf) > maxRawTag {
			return ofxToken{}, &ParseError{Line: line, Msg: fmt.Sprintf("malformed tag <%s>", truncate(string(l.buf), 40))}
		}
	}
	raw := l.buf
	kind := byte('<')
	tag := raw
	if bytes.HasPrefix(tag, []byte("/")) {
		kind, tag = '/', tag[1:]
	}
	tag = bytes.TrimSpace(tag)
	if len(tag) == 0 || len(tag) > 64 || bytes.IndexFunc(tag, badTagRune) >= 0 {
		return ofxToken{}, &ParseError{Line: line, Msg: fmt.Sprintf("malformed tag <%s>", truncate(string(raw), 40))}
	}
	for i, c := range tag {
		if 'a' <= c && c <= 'z' {
			tag[i] = c - 'a' + 'A'
		}
	}
	return ofxToken{kind: kind, val: tag, line: line}, nil
}

func leadingNewlines(s []byte) int {
	n := 0
	for _, c := range s {
		switch c {
		case '\n':
			n++
		case ' ', '\t':
		default:
			return n
		}
	}
	return n
}

func badTagRune(r rune) bool {
	return (r < 'A' || r > 'Z') && (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '.' && r != '_'
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
