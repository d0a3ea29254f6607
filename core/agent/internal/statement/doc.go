// Package statement reads bank statements exported by Brazilian banks, in CSV
// and in OFX (SGML 1.x and XML 2.x), into transactions with amounts in
// centavos and civil dates.
//
// Parsers are strict about what they understand: a row or a transaction they
// cannot read is an error naming its line (a *ParseError), never a silently
// dropped row. The only rows skipped on purpose are the ones a bank adds around
// the data (title lines before the header, balance lines, textual footers);
// Statement.Skipped counts them.
//
// Parsers read an io.Reader in one pass and keep at most one line (CSV) or
// one tag or text (OFX) besides the transactions they return, so a file costs
// memory bounded by Limits, not by its shape: the first line past a limit is
// a *ParseError wrapping ErrLimit ("line 2: 300 fields (limit 256)").
//
// Every function is safe for concurrent use and keeps no state between
// calls; a RecordReader is used by one goroutine.
package statement
