package statement

import (
	"bufio"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"unicode"
	"unicode/utf8"
)

// detectPrefix is how much text DetectSeparator and NewRecordReader look at
// to pick a separator.
const detectPrefix = 64 << 10

// RecordReader reads the records of a CSV file in one pass, within Limits:
// it decodes the file as Decode does, checks each line's length, each
// record's fields and the number of records before encoding/csv splits the
// record, and reports the first violation as an ErrLimit *ParseError with
// the line number, after the records before it. Memory stays within a
// small multiple of Limits.MaxLineBytes whatever the input.
//
// A RecordReader is not safe for concurrent use. The slice Read returns is
// reused by the next call; its strings are not.
type RecordReader struct {
	csv  *csv.Reader
	gate *gate
	sep  rune
	n    int
}

// NewRecordReader reads CSV records from the bytes of r (any encoding Decode
// reads) with separator sep, or, when sep is 0, the one DetectSeparator
// picks from the first 64 KiB of text. Rows of different lengths and spaces
// after separators are accepted.
func NewRecordReader(r io.Reader, sep rune, lim Limits) *RecordReader {
	lim = lim.withDefaults()
	text := bufio.NewReaderSize(newTextReader(r, lim.MaxDecodedBytes), max(lim.MaxLineBytes+1, detectPrefix))
	if sep == 0 {
		// A failed read is returned again by the first Read below.
		head, err := text.Peek(detectPrefix)
		if err == nil { // cut: the last line may be partial
			if i := lastIndexNL(head); i >= 0 {
				head = head[:i+1]
			}
		}
		sep = DetectSeparator(string(head))
	}
	g := &gate{src: text, sep: sep, lim: lim, line: 1}
	cr := csv.NewReader(g)
	cr.Comma = sep
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	cr.ReuseRecord = true
	return &RecordReader{csv: cr, gate: g, sep: sep}
}

// Separator returns the separator in use (detected or given).
func (r *RecordReader) Separator() rune { return r.sep }

// Read returns the next non-blank-line record and the line it starts on,
// checking ctx every 1,024 records. At the end it returns io.EOF; a
// malformed record or a crossed limit is a *ParseError with its line.
func (r *RecordReader) Read(ctx context.Context) ([]string, int, error) {
	if r.n++; r.n%1024 == 1 {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
	}
	rec, err := r.csv.Read()
	switch {
	case err == nil:
		line, _ := r.csv.FieldPos(0)
		return rec, line, nil
	case errors.Is(err, io.EOF):
		return nil, 0, io.EOF
	}
	var ce *csv.ParseError
	if errors.As(err, &ce) {
		return nil, 0, &ParseError{Line: ce.Line, Msg: ce.Err.Error(), Err: err}
	}
	var pe *ParseError
	if errors.As(err, &pe) {
		return nil, 0, err
	}
	return nil, 0, fmt.Errorf("line %d: %w", r.gate.line, err) // the source failed
}

// gate passes decoded text to encoding/csv line by line, checking Limits
// first. It tracks quotes as csv does, to know where a record ends. An
// error is returned only once every line before it has been passed on, so
// the records before a violation are read (and may fail on their own)
// first.
type gate struct {
	src *bufio.Reader
	sep rune
	lim Limits

	line     int    // line number of the next line to read
	pending  []byte // what is left of the line being passed on
	err      error  // sticky
	recLine  int    // line the current record started on
	recBytes int    // bytes of the current record so far
	fields   int    // fields of the current record so far
	inQuote  bool   // inside a quoted field at the end of the last line
	records  int
}

func (g *gate) Read(p []byte) (int, error) {
	for len(g.pending) == 0 {
		if g.err != nil {
			return 0, g.err
		}
		g.next()
	}
	n := copy(p, g.pending)
	g.pending = g.pending[n:]
	return n, nil
}

// next reads one line into pending, or sets err.
func (g *gate) next() {
	line, err := g.src.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		n := int64(len(line))
		for errors.Is(err, bufio.ErrBufferFull) { // count it without keeping it
			line, err = g.src.ReadSlice('\n')
			n += int64(len(line))
		}
		if err != nil && !errors.Is(err, io.EOF) {
			g.err = err
			return
		}
		g.err = limitError(g.line, n-trailingNL(line), "bytes in one line", int64(g.lim.MaxLineBytes))
		return
	}
	if len(line) == 0 {
		g.err = err
		if err == nil {
			g.err = io.ErrNoProgress
		}
		return
	}
	if !g.inQuote {
		g.recLine, g.recBytes, g.fields = g.line, 0, 1
	}
	g.recBytes += len(line) - int(trailingNL(line))
	if g.recBytes > g.lim.MaxLineBytes {
		what := "bytes in one line"
		if g.recLine != g.line {
			what = fmt.Sprintf("bytes in the record from line %d", g.recLine)
		}
		g.err = limitError(g.line, int64(g.recBytes), what, int64(g.lim.MaxLineBytes))
		return
	}
	g.scan(line)
	if !g.inQuote || err != nil {
		if g.fields > g.lim.MaxFields {
			g.err = limitError(g.recLine, int64(g.fields), "fields", int64(g.lim.MaxFields))
			return
		}
		if g.records++; g.records > g.lim.MaxRecords {
			g.err = limitError(g.recLine, int64(g.records), "records", int64(g.lim.MaxRecords))
			return
		}
	}
	g.line++
	g.pending = line
	if err != nil {
		g.err = err // passed on after the line
	}
}

// scan counts the fields of line, continuing the record's quote state. Like
// encoding/csv with TrimLeadingSpace, a quote opens a quoted field only at
// the start of a field, after spaces; "" inside one is an escaped quote.
func (g *gate) scan(line []byte) {
	start := !g.inQuote // at the start of a field
	for i := 0; i < len(line); {
		r, size := rune(line[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRune(line[i:])
		}
		i += size
		switch {
		case g.inQuote:
			if r == '"' {
				if i < len(line) && line[i] == '"' {
					i++
				} else {
					g.inQuote = false
				}
			}
		case r == g.sep:
			g.fields++
			start = true
		case start && r == '"':
			g.inQuote, start = true, false
		case start && unicode.IsSpace(r) && r != '\n':
		default:
			start = false
		}
	}
}

func trailingNL(b []byte) int64 {
	if len(b) > 0 && b[len(b)-1] == '\n' {
		return 1
	}
	return 0
}

func lastIndexNL(b []byte) int {
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == '\n' {
			return i
		}
	}
	return -1
}
