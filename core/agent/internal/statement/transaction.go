package statement

import "fmt"

// Transaction is one entry of a bank statement.
type Transaction struct {
	ID          string `json:"id"`             // FITID (OFX) or the document column (CSV); may be empty or repeated
	Date        Date   `json:"date"`           // posting date
	AmountCents int64  `json:"amount_cents"`   // > 0 credit (money in), < 0 debit (money out)
	Description string `json:"description"`    // NAME and MEMO (OFX) or the description column (CSV); untrusted text
	Type        string `json:"type,omitempty"` // OFX TRNTYPE ("CREDIT", "DEBIT", "FEE"…); empty for CSV
	Line        int    `json:"line"`           // 1-based line of the source where the transaction starts
}

// Statement is what a parser read from one file.
type Statement struct {
	Format       string        // "csv" or "ofx"
	Account      string        // OFX BANKID/ACCTID ("341/12345-6"); empty for CSV
	Currency     string        // OFX CURDEF ("BRL"); empty for CSV
	Transactions []Transaction // in file order
	Skipped      int           // rows deliberately skipped: balances, footers, informative lines
}

// ParseError reports input a parser could not read, with the 1-based line.
type ParseError struct {
	Line int
	Msg  string
	Err  error // underlying cause (ErrDate, money.ErrAmount, a csv error), may be nil
}

func (e *ParseError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }
func (e *ParseError) Unwrap() error { return e.Err }

// txnChunk is the most transactions txnBuffer allocates at a time.
const txnChunk = 4096

// txnBuffer collects transactions in fixed-size chunks: reading n of them
// allocates about 2n (the chunks, then the slice Statement holds) where
// append's 1.25× growth of a large slice allocates about 5n, all of it
// garbage but the last.
type txnBuffer struct {
	chunks [][]Transaction
	n      int
}

func (b *txnBuffer) add(t Transaction) {
	if len(b.chunks) == 0 || len(b.chunks[len(b.chunks)-1]) == cap(b.chunks[len(b.chunks)-1]) {
		// Small statements get small chunks: 64, then as many as so far.
		b.chunks = append(b.chunks, make([]Transaction, 0, min(txnChunk, max(64, b.n))))
	}
	last := &b.chunks[len(b.chunks)-1]
	*last = append(*last, t)
	b.n++
}

func (b *txnBuffer) len() int { return b.n }

// slice returns the transactions in one slice, or nil if there are none.
func (b *txnBuffer) slice() []Transaction {
	if b.n == 0 {
		return nil
	}
	if len(b.chunks) == 1 {
		return b.chunks[0]
	}
	out := make([]Transaction, 0, b.n)
	for _, c := range b.chunks {
		out = append(out, c...)
	}
	return out
}
