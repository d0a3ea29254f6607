package statement

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"strings"

	"github.com/kobana/kadu/core/agent/internal/money"
)

// knownTrnType reports the TRNTYPE values of OFX 1.6 and 2.x.
func knownTrnType(t string) bool {
	switch t {
	case "CREDIT", "DEBIT", "INT", "DIV", "FEE", "SRVCHG", "DEP", "ATM", "POS", "XFER", "CHECK", "PAYMENT",
		"CASH", "DIRECTDEP", "DIRECTDEBIT", "REPEATPMT", "HOLD", "OTHER":
		return true
	}
	return false
}

// ParseOFX reads an OFX statement from r in one pass, SGML (OFX 1.x, leaf
// elements not closed) or XML (OFX 2.x). It reads every STMTTRN (bank and
// credit-card statements alike): TRNTYPE (optional; one of the OFX types
// when present), DTPOSTED and TRNAMT (required), FITID, NAME and MEMO. The
// sign of TRNAMT is authoritative, as the OFX specification says.
// BANKID/ACCTID and CURDEF are kept in the Statement. A missing <OFX>
// element, an unclosed or nested STMTTRN, a malformed tag, a repeated field,
// an unreadable date or amount, and input beyond lim (text longer than
// MaxLineBytes, a STMTTRN with more than MaxFields elements) is a
// *ParseError. Nesting is not tracked beyond STMTTRN, so deep nesting costs
// nothing. An error reading r is returned wrapped with the line reached.
// ParseOFX checks ctx every 1,024 transactions.
func ParseOFX(ctx context.Context, r io.Reader, lim Limits) (*Statement, error) {
	lim = lim.withDefaults()
	lx := &ofxLexer{
		src:  bufio.NewReaderSize(newTextReader(r, lim.MaxDecodedBytes), 64<<10),
		max:  lim.MaxLineBytes,
		line: 1,
	}
	h, err := lx.header()
	if err != nil {
		return nil, err
	}
	if err := checkOFXHeader(h); err != nil {
		return nil, err
	}
	st := &Statement{Format: "ofx"}
	var (
		inTrn    bool
		trnLine  int
		fields   = map[string]string{} // of the open STMTTRN; reused
		lines    = map[string]int{}
		leaf     []byte // the last opened tag, waiting for its text; nil after a close
		leafBuf  []byte
		bankID   string
		acctID   string
		closed   bool // saw </OFX>
		counter  int
		txns     txnBuffer
		lastLine = lx.line
	)
	for {
		t, err := lx.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		lastLine = t.line
		switch t.kind {
		case '<':
			leafBuf = append(leafBuf[:0], t.val...)
			leaf = leafBuf
			if string(t.val) == "STMTTRN" {
				if inTrn {
					return nil, &ParseError{Line: t.line, Msg: fmt.Sprintf("<STMTTRN> inside the <STMTTRN> opened at line %d", trnLine)}
				}
				inTrn, trnLine = true, t.line
				clear(fields)
				clear(lines)
			}
		case '/':
			leaf = nil
			switch string(t.val) {
			case "STMTTRN":
				if !inTrn {
					return nil, &ParseError{Line: t.line, Msg: "</STMTTRN> without <STMTTRN>"}
				}
				inTrn = false
				if counter++; counter%1024 == 0 {
					if err := ctx.Err(); err != nil {
						return nil, err
					}
				}
				if txns.len() >= lim.MaxTransactions {
					return nil, &ParseError{Line: trnLine, Msg: fmt.Sprintf("more than %d transactions", lim.MaxTransactions), Err: ErrLimit}
				}
				tx, err := ofxTransaction(fields, lines, trnLine)
				if err != nil {
					return nil, err
				}
				txns.add(tx)
			case "OFX":
				if inTrn {
					return nil, &ParseError{Line: t.line, Msg: fmt.Sprintf("</OFX> before </STMTTRN> of the transaction at line %d", trnLine)}
				}
				closed = true
			}
		case 't':
			if leaf == nil {
				continue
			}
			if inTrn {
				if _, dup := fields[string(leaf)]; dup {
					return nil, &ParseError{Line: t.line, Msg: fmt.Sprintf("<%s> repeated in the transaction at line %d", leaf, trnLine)}
				}
				if len(fields) >= lim.MaxFields {
					return nil, limitError(t.line, int64(len(fields)+1), fmt.Sprintf("elements in the transaction at line %d", trnLine), int64(lim.MaxFields))
				}
				name := string(leaf)
				fields[name], lines[name] = ofxText(t.val), t.line
			} else {
				switch string(leaf) {
				case "CURDEF":
					if st.Currency == "" {
						st.Currency = ofxText(t.val)
					}
				case "BANKID":
					if bankID == "" {
						bankID = ofxText(t.val)
					}
				case "ACCTID":
					if acctID == "" {
						acctID = ofxText(t.val)
					}
				}
			}
			leaf = nil
		}
	}
	if inTrn {
		return nil, &ParseError{Line: trnLine, Msg: "<STMTTRN> is never closed"}
	}
	if !closed {
		return nil, &ParseError{Line: lastLine, Msg: "</OFX> missing: the file is truncated"}
	}
	st.Transactions = txns.slice()
	switch {
	case bankID != "" && acctID != "":
		st.Account = bankID + "/" + acctID
	default:
		st.Account = acctID
	}
	return st, nil
}

// ofxText is the value of an element: entities resolved, spaces trimmed.
func ofxText(b []byte) string {
	return strings.TrimSpace(html.UnescapeString(string(bytes.TrimSpace(b))))
}

func ofxTransaction(f map[string]string, lines map[string]int, line int) (Transaction, error) {
	tx := Transaction{Line: line, ID: f["FITID"], Type: strings.ToUpper(f["TRNTYPE"])}
	if _, ok := f["TRNTYPE"]; ok && !knownTrnType(tx.Type) {
		return tx, &ParseError{Line: lines["TRNTYPE"], Msg: fmt.Sprintf("unknown TRNTYPE %q", f["TRNTYPE"])}
	}
	dt, ok := f["DTPOSTED"]
	if !ok || dt == "" {
		return tx, &ParseError{Line: line, Msg: "transaction without DTPOSTED"}
	}
	d, err := parseOFXDate(dt)
	if err != nil {
		return tx, &ParseError{Line: lines["DTPOSTED"], Msg: fmt.Sprintf("DTPOSTED: %v", err), Err: err}
	}
	tx.Date = d
	amt, ok := f["TRNAMT"]
	if !ok || amt == "" {
		return tx, &ParseError{Line: line, Msg: "transaction without TRNAMT"}
	}
	if tx.AmountCents, err = money.ParseAmount(amt); err != nil {
		return tx, &ParseError{Line: lines["TRNAMT"], Msg: fmt.Sprintf("TRNAMT: %v", err), Err: err}
	}
	name, memo := f["NAME"], f["MEMO"]
	switch {
	case name == "" || strings.EqualFold(name, memo):
		tx.Description = memo
	case memo == "":
		tx.Description = name
	default:
		tx.Description = name + " - " + memo
	}
	return tx, nil
}

// parseOFXDate reads YYYYMMDD[HHMMSS[.XXX]][[gmt offset[:tz name]]]; only the
// date is kept.
func parseOFXDate(s string) (Date, error) {
	if len(s) < 8 {
		return 0, fmt.Errorf("%w %q: want YYYYMMDD", ErrDate, s)
	}
	for i := 0; i < 8; i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Errorf("%w %q: want YYYYMMDD", ErrDate, s)
		}
	}
	rest := s[8:]
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		if c == '[' {
			if !strings.HasSuffix(rest, "]") {
				return 0, fmt.Errorf("%w %q: unclosed time zone", ErrDate, s)
			}
			break
		}
		if (c < '0' || c > '9') && c != '.' {
			return 0, fmt.Errorf("%w %q: unexpected %q", ErrDate, s, c)
		}
	}
	return ParseDate(s[:4] + "-" + s[4:6] + "-" + s[6:8])
}

// checkOFXHeader accepts an SGML header ("OFXHEADER:100" lines), an XML
// prolog (<?xml …?><?OFX …?>) or nothing.
func checkOFXHeader(h string) error {
	line := 1
	for raw := range strings.SplitSeq(h, "\n") {
		l := strings.TrimSpace(raw)
		switch {
		case l == "", strings.HasPrefix(l, "<?"), strings.HasPrefix(l, "<!--"):
		case strings.Contains(l, ":") && !strings.Contains(l, "<"):
			key, _, _ := strings.Cut(l, ":")
			if strings.TrimSpace(key) == "" || strings.ContainsAny(key, " \t") {
				return &ParseError{Line: line, Msg: fmt.Sprintf("malformed OFX header line %q", l)}
			}
		default:
			return &ParseError{Line: line, Msg: fmt.Sprintf("unexpected text before <OFX>: %q", truncate(l, 40))}
		}
		line++
	}
	return nil
}
