package statement

import (
	"context"
	"encoding/csv"
	"errors"
	"io"
	"strings"
)

// NewCSVReader reads text (already decoded) with the given separator,
// tolerating rows of different lengths and spaces after separators.
func NewCSVReader(text string, sep rune) *csv.Reader {
	r := csv.NewReader(strings.NewReader(text))
	r.Comma = sep
	r.FieldsPerRecord = -1
	r.TrimLeadingSpace = true
	return r
}

// ReadRecord reads the n-th record of r, checking ctx every 1,024 records.
// At the end it returns io.EOF; a malformed record is a *ParseError with
// its line number.
func ReadRecord(ctx context.Context, r *csv.Reader, n int) ([]string, error) {
	if n%1024 == 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	rec, err := r.Read()
	switch {
	case err == nil, errors.Is(err, io.EOF):
		return rec, err
	}
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return nil, &ParseError{Line: pe.Line, Msg: pe.Err.Error(), Err: err}
	}
	return nil, &ParseError{Line: 0, Msg: err.Error(), Err: err}
}
