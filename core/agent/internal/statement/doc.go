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
// Everything here is a pure function of its input: safe for concurrent use,
// no state kept between calls.
package statement
