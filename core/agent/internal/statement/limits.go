package statement

import (
	"errors"
	"fmt"
)

// ErrLimit is wrapped by the *ParseError a parser returns when the input
// crosses one of its Limits. The message names the line, what was counted
// and the limit: "line 12: 300 fields (limit 256)".
var ErrLimit = errors.New("statement limit exceeded")

// Default limits; see Limits.
const (
	DefaultMaxTransactions = 200_000
	DefaultMaxLineBytes    = 64 << 10
	DefaultMaxFields       = 256
	DefaultMaxRecords      = 2_000_000
	DefaultMaxDecodedBytes = 64 << 20
)

// Limits bound what a parser accepts and so the memory and time one file can
// cost: parsers read in one pass and keep at most one line (CSV) or one tag
// or text (OFX) besides the transactions they return, so memory is bounded
// by MaxLineBytes plus the transactions. A zero field takes its default.
type Limits struct {
	// MaxTransactions is the most transactions a statement may hold.
	// Default 200,000.
	MaxTransactions int
	// MaxLineBytes is the longest CSV line (a quoted field spanning lines
	// counts with its record) and the longest OFX text between two tags, in
	// bytes of decoded UTF-8 text. Default 64 KiB. ParseCSV allocates a
	// buffer of this size.
	MaxLineBytes int
	// MaxFields is the most fields in a CSV record and the most elements in
	// an OFX <STMTTRN>. Default 256: bank exports have about ten columns,
	// spreadsheets pad some with a few dozen empty ones.
	MaxFields int
	// MaxRecords is the most CSV records (lines, blank ones included).
	// Default 2,000,000.
	MaxRecords int
	// MaxDecodedBytes is the most text a file may decode to (Windows-1252
	// grows up to 3× in UTF-8). Default 64 MiB.
	MaxDecodedBytes int64
}

// withDefaults returns l with every zero or negative field set to its default.
func (l Limits) withDefaults() Limits {
	if l.MaxTransactions <= 0 {
		l.MaxTransactions = DefaultMaxTransactions
	}
	if l.MaxLineBytes <= 0 {
		l.MaxLineBytes = DefaultMaxLineBytes
	}
	if l.MaxFields <= 0 {
		l.MaxFields = DefaultMaxFields
	}
	if l.MaxRecords <= 0 {
		l.MaxRecords = DefaultMaxRecords
	}
	if l.MaxDecodedBytes <= 0 {
		l.MaxDecodedBytes = DefaultMaxDecodedBytes
	}
	return l
}

// limitError reports that line holds n of what (n > limit).
func limitError(line int, n int64, what string, limit int64) *ParseError {
	return &ParseError{Line: line, Msg: fmt.Sprintf("%d %s (limit %d)", n, what, limit), Err: ErrLimit}
}
