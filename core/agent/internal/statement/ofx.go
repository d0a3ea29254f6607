package statement

import (
	"context"
	"fmt"
	"html"
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

// ofxToken is a tag or the text after it.
type ofxToken struct {
	kind byte // '<' open tag, '/' close tag, 't' text
	val  string
	line int
}

// ParseOFX reads an OFX statement, SGML (OFX 1.x, leaf elements not closed)
// or XML (OFX 2.x). It reads every STMTTRN (bank and credit-card
// statements alike): TRNTYPE (optional; one of the OFX types when present),
// DTPOSTED and TRNAMT (required), FITID, NAME and MEMO. The sign of TRNAMT is
// authoritative, as the OFX specification says. BANKID/ACCTID and CURDEF are
// kept in the Statement. A missing <OFX> element, an unclosed or nested
// STMTTRN, a malformed tag, a repeated field or an unreadable date or amount
// is a *ParseError. ParseOFX checks ctx every 1,024 transactions.
func ParseOFX(ctx context.Context, data []byte, lim Limits) (*Statement, error) {
	text := Decode(data)
	start := indexFold(text, "<OFX>")
	if start < 0 {
		return nil, &ParseError{Line: 1, Msg: "no <OFX> element"}
	}
	if err := checkOFXHeader(text[:start]); err != nil {
		return nil, err
	}
	toks, err := tokenizeOFX(text, start)
	if err != nil {
		return nil, err
	}
	st := &Statement{Format: "ofx"}
	var (
		inTrn   bool
		trnLine int
		fields  map[string]string
		lines   map[string]int
		leaf    string // the last opened tag, waiting for its text
		bankID  string
		acctID  string
		closed  bool // saw </OFX>
		limit   = lim.maxTransactions()
		counter int
	)
	for _, t := range toks {
		switch t.kind {
		case '<':
			leaf = t.val
			if t.val == "STMTTRN" {
				if inTrn {
					return nil, &ParseError{Line: t.line, Msg: fmt.Sprintf("<STMTTRN> inside the <STMTTRN> opened at line %d", trnLine)}
				}
				inTrn, trnLine = true, t.line
				fields, lines = map[string]string{}, map[string]int{}
			}
		case '/':
			leaf = ""
			switch t.val {
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
				if len(st.Transactions) >= limit {
					return nil, &ParseError{Line: trnLine, Msg: fmt.Sprintf("more than %d transactions", limit)}
				}
				tx, err := ofxTransaction(fields, lines, trnLine)
				if err != nil {
					return nil, err
				}
				st.Transactions = append(st.Transactions, tx)
			case "OFX":
				if inTrn {
					return nil, &ParseError{Line: t.line, Msg: fmt.Sprintf("</OFX> before </STMTTRN> of the transaction at line %d", trnLine)}
				}
				closed = true
			}
		case 't':
			if leaf == "" {
				continue
			}
			val := strings.TrimSpace(html.UnescapeString(t.val))
			if inTrn {
				if _, dup := fields[leaf]; dup {
					return nil, &ParseError{Line: t.line, Msg: fmt.Sprintf("<%s> repeated in the transaction at line %d", leaf, trnLine)}
				}
				fields[leaf], lines[leaf] = val, t.line
			} else {
				switch leaf {
				case "CURDEF":
					if st.Currency == "" {
						st.Currency = val
					}
				case "BANKID":
					if bankID == "" {
						bankID = val
					}
				case "ACCTID":
					if acctID == "" {
						acctID = val
					}
				}
			}
			leaf = ""
		}
	}
	if inTrn {
		return nil, &ParseError{Line: trnLine, Msg: "<STMTTRN> is never closed"}
	}
	if !closed {
		last := 1
		if len(toks) > 0 {
			last = toks[len(toks)-1].line
		}
		return nil, &ParseError{Line: last, Msg: "</OFX> missing: the file is truncated"}
	}
	switch {
	case bankID != "" && acctID != "":
		st.Account = bankID + "/" + acctID
	default:
		st.Account = acctID
	}
	return st, nil
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

// tokenizeOFX splits text from start into tags and texts. Processing
// instructions and comments are skipped.
func tokenizeOFX(text string, start int) ([]ofxToken, error) {
	line := 1 + strings.Count(text[:start], "\n")
	var toks []ofxToken
	i := start
	for i < len(text) {
		if text[i] != '<' {
			j := strings.IndexByte(text[i:], '<')
			if j < 0 {
				j = len(text) - i
			}
			chunk := text[i : i+j]
			if strings.TrimSpace(chunk) != "" {
				toks = append(toks, ofxToken{kind: 't', val: chunk, line: line + leadingNewlines(chunk)})
			}
			line += strings.Count(chunk, "\n")
			i += j
			continue
		}
		switch {
		case strings.HasPrefix(text[i:], "<!--"):
			j := strings.Index(text[i:], "-->")
			if j < 0 {
				return nil, &ParseError{Line: line, Msg: "unclosed comment"}
			}
			line += strings.Count(text[i:i+j], "\n")
			i += j + 3
			continue
		case strings.HasPrefix(text[i:], "<?"):
			j := strings.Index(text[i:], "?>")
			if j < 0 {
				return nil, &ParseError{Line: line, Msg: "unclosed processing instruction"}
			}
			line += strings.Count(text[i:i+j], "\n")
			i += j + 2
			continue
		}
		j := strings.IndexByte(text[i:], '>')
		if j < 0 {
			return nil, &ParseError{Line: line, Msg: "unclosed tag"}
		}
		tag := text[i+1 : i+j]
		kind := byte('<')
		if strings.HasPrefix(tag, "/") {
			kind, tag = '/', tag[1:]
		}
		tag = strings.TrimSpace(tag)
		if tag == "" || len(tag) > 64 || strings.IndexFunc(tag, badTagRune) >= 0 {
			return nil, &ParseError{Line: line, Msg: fmt.Sprintf("malformed tag <%s>", truncate(text[i+1:i+j], 40))}
		}
		toks = append(toks, ofxToken{kind: kind, val: strings.ToUpper(tag), line: line})
		i += j + 1
	}
	return toks, nil
}

func leadingNewlines(s string) int {
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

func indexFold(s, sub string) int {
	// OFX tags are ASCII; a case-insensitive search over bytes is enough.
	n := len(sub)
	for i := 0; i+n <= len(s); i++ {
		if strings.EqualFold(s[i:i+n], sub) {
			return i
		}
	}
	return -1
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
