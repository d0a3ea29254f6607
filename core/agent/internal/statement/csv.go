package statement

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/kobana/kadu/core/agent/internal/money"
)

// CSVOptions tune ParseCSV. The zero value detects everything.
type CSVOptions struct {
	// Separator is the field separator; 0 detects it among ';', '\t', ',' and '|'.
	Separator rune
	// Columns names header cells to use instead of detecting them. A name is
	// compared with the header after Fold; empty fields are detected.
	Columns Columns
	// KeepBalanceRows keeps rows whose description starts with "SALDO"
	// (opening, daily and closing balances), which are skipped by default.
	KeepBalanceRows bool
	Limits
}

// Columns names the header cells of a CSV statement.
type Columns struct {
	Date        string `json:"date,omitempty"`
	Description string `json:"description,omitempty"`
	Amount      string `json:"amount,omitempty"` // signed amount
	Credit      string `json:"credit,omitempty"` // money in (unsigned)
	Debit       string `json:"debit,omitempty"`  // money out (unsigned or negative)
	ID          string `json:"id,omitempty"`     // document number
	Type        string `json:"type,omitempty"`   // "C"/"D", "CREDITO"/"DEBITO": signs Amount
}

// layout is where each role sits in a record; -1 = absent.
type layout struct {
	date, desc, amount, credit, debit, id, kind int
	header                                      []string // folded header cells, nil when headerless
}

func (l layout) maxIndex() int {
	return max(l.date, l.desc, l.amount, l.credit, l.debit, l.id, l.kind)
}

// headerScan is how many records may precede the header (bank title lines,
// account and period lines).
const headerScan = 30

// ParseCSV reads a CSV bank statement from r in one pass: an optional
// preamble, a header row (detected from Portuguese and English column names:
// Data, Descrição/Histórico, Valor, Crédito/Débito, Documento, Saldo…) or,
// when no header is found, rows of date, description and amount in that
// order. Quoted fields, a BOM, UTF-16 and Windows-1252 text are handled (see
// Decode).
//
// Rows without a date, rows whose date cell is text without digits (footers
// such as "Total"), rows with neither amount nor credit/debit, balance rows
// (see CSVOptions.KeepBalanceRows) and repeated header rows are skipped and
// counted. Any other row that cannot be read, and input beyond
// CSVOptions.Limits, is a *ParseError. An error reading r is returned
// wrapped with the line reached. ParseCSV checks ctx every 1,024 rows.
func ParseCSV(ctx context.Context, r io.Reader, opts CSVOptions) (*Statement, error) {
	sep := opts.Separator
	if sep == '"' || sep == '\n' || sep == '\r' || sep == 0xFFFD || sep < ' ' && sep != '\t' && sep != 0 {
		return nil, &ParseError{Line: 1, Msg: fmt.Sprintf("invalid separator %q", sep)}
	}
	lim := opts.Limits.withDefaults()
	rr := NewRecordReader(r, sep, lim)

	st := &Statement{Format: "csv"}
	var lay *layout
	var pending [][]string // records read before the layout is known
	var pendingLines []int
	var txns txnBuffer
	for {
		rec, line, err := rr.Read(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if blank(rec) {
			continue
		}
		if lay == nil {
			l, err := findHeader(rec, opts.Columns)
			if err != nil {
				return nil, &ParseError{Line: line, Msg: err.Error()}
			}
			if l != nil {
				lay = l
				st.Skipped += len(pending) // preamble
				pending = nil
				continue
			}
			pending = append(pending, slices.Clone(rec)) // Read reuses rec
			pendingLines = append(pendingLines, line)
			if len(pending) < headerScan && !looksLikeData(rec) {
				continue
			}
			if opts.Columns != (Columns{}) {
				return nil, &ParseError{Line: line, Msg: "no header row with the configured column names"}
			}
			// No header: infer the layout from the first row that looks like data.
			idx := -1
			for i, p := range pending {
				if looksLikeData(p) {
					idx = i
					break
				}
			}
			if idx < 0 {
				return nil, &ParseError{Line: line, Msg: "no header row (Data, Descrição, Valor…) and no row with a date and an amount"}
			}
			inferred := inferLayout(pending[idx])
			lay = &inferred
			st.Skipped += idx
			for i := idx; i < len(pending); i++ {
				if err := addRow(st, &txns, lay, pending[i], pendingLines[i], opts, lim.MaxTransactions); err != nil {
					return nil, err
				}
			}
			pending = nil
			continue
		}
		if err := addRow(st, &txns, lay, rec, line, opts, lim.MaxTransactions); err != nil {
			return nil, err
		}
	}
	if lay == nil {
		if len(pending) == 0 {
			return nil, &ParseError{Line: 1, Msg: "empty statement"}
		}
		return nil, &ParseError{Line: pendingLines[0], Msg: "no header row (Data, Descrição, Valor…) and no row with a date and an amount"}
	}
	st.Transactions = txns.slice()
	return st, nil
}

// addRow reads one record after the layout is known.
func addRow(st *Statement, txns *txnBuffer, lay *layout, rec []string, line int, opts CSVOptions, limit int) error {
	if lay.header != nil && sameHeader(rec, lay.header) {
		st.Skipped++ // header repeated on every page of some exports
		return nil
	}
	cell := func(i int) string {
		if i < 0 || i >= len(rec) {
			return ""
		}
		return strings.TrimSpace(rec[i])
	}
	fail := func(err error, format string, args ...any) error {
		return &ParseError{Line: line, Msg: fmt.Sprintf(format, args...), Err: err}
	}
	dateCell := cell(lay.date)
	if dateCell == "" || !strings.ContainsAny(dateCell, "0123456789") {
		st.Skipped++ // footers ("Total", "Saldo em conta"), notes, continuation lines
		return nil
	}
	if len(rec) <= lay.maxIndex() && lay.header != nil {
		return fail(nil, "want at least %d fields, got %d", lay.maxIndex()+1, len(rec))
	}
	date, err := ParseDate(dateCell)
	if err != nil {
		return fail(err, "column %d: %v", lay.date+1, err)
	}
	desc := cell(lay.desc)
	if !opts.KeepBalanceRows && isBalance(desc) {
		st.Skipped++
		return nil
	}
	var amount int64
	switch amountCell := cell(lay.amount); {
	case lay.amount >= 0 && amountCell != "":
		amount, err = money.ParseAmount(amountCell)
		if err != nil {
			return fail(err, "column %d: %v", lay.amount+1, err)
		}
		switch kind := Fold(cell(lay.kind)); kind {
		case "D", "DEBITO", "DEBIT", "DB", "SAIDA":
			amount = -abs(amount)
		case "C", "CREDITO", "CREDIT", "CR", "ENTRADA":
			amount = abs(amount)
		}
	case lay.credit >= 0 || lay.debit >= 0:
		credit, debit := cell(lay.credit), cell(lay.debit)
		var c, d int64
		if credit != "" {
			if c, err = money.ParseAmount(credit); err != nil {
				return fail(err, "column %d: %v", lay.credit+1, err)
			}
		}
		if debit != "" {
			if d, err = money.ParseAmount(debit); err != nil {
				return fail(err, "column %d: %v", lay.debit+1, err)
			}
		}
		if credit == "" && debit == "" {
			st.Skipped++ // informative line ("lançamentos futuros")
			return nil
		}
		if c != 0 && d != 0 {
			return fail(nil, "both credit (%s) and debit (%s) are set", credit, debit)
		}
		amount = abs(c) - abs(d)
	default:
		st.Skipped++ // a dated line with no amount
		return nil
	}
	if txns.len() >= limit {
		return fail(nil, "more than %d transactions", limit)
	}
	txns.add(Transaction{
		ID:          cell(lay.id),
		Date:        date,
		AmountCents: amount,
		Description: desc,
		Line:        line,
	})
	return nil
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

func blank(rec []string) bool {
	for _, f := range rec {
		if strings.TrimSpace(f) != "" {
			return false
		}
	}
	return true
}

// isBalance reports a balance line: "SALDO ANTERIOR", "Saldo do dia", "S A L D O".
func isBalance(desc string) bool {
	return foldedHasPrefix(desc, "SALDO") || foldedHasPrefix(desc, "S A L D O")
}

// foldedHasPrefix reports whether Fold(s) starts with prefix (upper-case
// ASCII, single spaces) without building Fold(s): it runs once per row.
func foldedHasPrefix(s, prefix string) bool {
	i, space := 0, true
	for _, r := range s {
		if i == len(prefix) {
			return true
		}
		if r == ' ' || r == '\t' || r == '\n' || r == '\u00A0' {
			if !space {
				if prefix[i] != ' ' {
					return false
				}
				i, space = i+1, true
			}
			continue
		}
		space = false
		if foldRune(r) != rune(prefix[i]) {
			return false
		}
		i++
	}
	return i == len(prefix)
}

// DetectSeparator picks, among ';', '\t', ',' and '|', the separator that
// splits the first 40 non-blank lines of the first 64 KiB of text into the
// most rows of one width (three to Limits.MaxFields fields); ';' when none
// does. It allocates nothing per line, whatever the text.
func DetectSeparator(text string) rune {
	text = text[:min(len(text), detectPrefix)]
	seps := [...]rune{';', '\t', ',', '|'}
	var widths [len(seps)][40]int
	n := 0
	for line := range strings.SplitSeq(text, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		for i, sep := range seps {
			widths[i][n] = countFields(line, sep, DefaultMaxFields)
		}
		if n++; n == 40 {
			break
		}
	}
	best, bestScore := ';', 0
	for i, sep := range seps {
		score := 0
		for j := range n {
			w := widths[i][j]
			if w < 3 || w > DefaultMaxFields {
				continue
			}
			same := 0
			for k := range n {
				if widths[i][k] == w {
					same++
				}
			}
			score = max(score, same)
		}
		if score > bestScore {
			best, bestScore = sep, score
		}
	}
	return best
}

// countFields counts the fields of one line split by sep, quotes read
// lazily, up to limit+1.
func countFields(line string, sep rune, limit int) int {
	n, inQuote, start, closed := 1, false, true, false
	for _, r := range line {
		switch {
		case inQuote:
			if r == '"' {
				inQuote, closed = false, true
			}
			continue
		case closed && r == '"': // "" inside a quoted field
			inQuote = true
		case r == sep:
			if n++; n > limit {
				return n
			}
			start = true
		case start && r == '"':
			inQuote, start = true, false
		case start && (r == ' ' || r == '\t' && sep != '\t'):
		default:
			start = false
		}
		closed = false
	}
	return n
}

type role int

const (
	roleNone role = iota
	roleDate
	roleDesc
	roleAmount
	roleCredit
	roleDebit
	roleBalance
	roleID
	roleKind
)

// headerWords folds a header cell and turns punctuation into spaces:
// "Valor (R$)" → "VALOR R", "D/C" → "D C".
func headerWords(cell string) string {
	f := Fold(cell)
	b := []byte(f)
	for i, c := range b {
		if (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
			b[i] = ' '
		}
	}
	return strings.Join(strings.Fields(string(b)), " ")
}

func hasWord(words string, ws ...string) bool {
	for w := range strings.FieldsSeq(words) {
		for _, want := range ws {
			if w == want {
				return true
			}
		}
	}
	return false
}

func classify(cell string) role {
	c := headerWords(cell)
	first, _, _ := strings.Cut(c, " ")
	switch {
	case c == "":
		return roleNone
	case first == "DATA" || first == "DATE" || first == "DT" || first == "DIA":
		return roleDate
	case c == "D C" || c == "C D" || c == "DC" || first == "TIPO" || first == "NATUREZA" || first == "TYPE" ||
		hasWord(c, "CREDITO", "CREDIT") && hasWord(c, "DEBITO", "DEBIT"):
		return roleKind
	case hasWord(c, "CREDITO", "CREDITOS", "CREDIT", "CREDITS", "ENTRADA", "ENTRADAS"):
		return roleCredit
	case hasWord(c, "DEBITO", "DEBITOS", "DEBIT", "DEBITS", "SAIDA", "SAIDAS"):
		return roleDebit
	case hasWord(c, "SALDO", "BALANCE"):
		return roleBalance
	case hasWord(c, "VALOR", "AMOUNT", "QUANTIA", "MONTANTE", "VLR", "IMPORTE"):
		return roleAmount
	case hasWord(c, "DOCUMENTO", "DOC", "ID", "FITID", "IDENTIFICADOR", "NUMERO", "REFERENCIA", "REF", "AUTENTICACAO"):
		return roleID
	case strings.HasPrefix(c, "DESCRI") || strings.HasPrefix(c, "HISTORIC") || strings.HasPrefix(c, "LANCAMENTO") ||
		strings.HasPrefix(c, "DETALHE") || hasWord(c, "MEMO", "ESTABELECIMENTO", "NOME", "NARRATIVA", "FAVORECIDO"):
		return roleDesc
	}
	return roleNone
}

// findHeader returns the layout if rec is a header row, nil if it is not.
func findHeader(rec []string, cols Columns) (*layout, error) {
	l := layout{date: -1, desc: -1, amount: -1, credit: -1, debit: -1, id: -1, kind: -1}
	if cols != (Columns{}) {
		folded := make([]string, len(rec))
		for i, c := range rec {
			folded[i] = Fold(strings.TrimSpace(c))
		}
		find := func(name string) int {
			if name == "" {
				return -1
			}
			for i, c := range folded {
				if c == Fold(name) {
					return i
				}
			}
			return -2
		}
		wanted := []struct {
			name string
			dst  *int
		}{
			{cols.Date, &l.date}, {cols.Description, &l.desc}, {cols.Amount, &l.amount},
			{cols.Credit, &l.credit}, {cols.Debit, &l.debit}, {cols.ID, &l.id}, {cols.Type, &l.kind},
		}
		found := 0
		for _, w := range wanted {
			*w.dst = find(w.name)
			if *w.dst >= 0 {
				found++
			}
		}
		if found == 0 {
			return nil, nil
		}
		for _, w := range wanted {
			if *w.dst == -2 {
				return nil, fmt.Errorf("header has no column %q", w.name)
			}
		}
		// Roles not named are detected as usual.
		auto, _ := findHeader(rec, Columns{})
		if auto != nil {
			for _, p := range []struct{ dst, src *int }{
				{&l.date, &auto.date}, {&l.desc, &auto.desc}, {&l.id, &auto.id}, {&l.kind, &auto.kind},
			} {
				if *p.dst < 0 {
					*p.dst = *p.src
				}
			}
			if l.amount < 0 && l.credit < 0 && l.debit < 0 {
				l.amount, l.credit, l.debit = auto.amount, auto.credit, auto.debit
			}
		}
		if l.date < 0 || (l.amount < 0 && l.credit < 0 && l.debit < 0) {
			return nil, errors.New("configured columns need a date and an amount (or credit/debit) column")
		}
		l.header = folded
		return &l, nil
	}
	for i, cell := range rec {
		var dst *int
		switch classify(cell) {
		case roleDate:
			dst = &l.date
		case roleDesc:
			dst = &l.desc
		case roleAmount:
			dst = &l.amount
		case roleCredit:
			dst = &l.credit
		case roleDebit:
			dst = &l.debit
		case roleID:
			dst = &l.id
		case roleKind:
			dst = &l.kind
		}
		if dst != nil && *dst < 0 {
			*dst = i
		}
	}
	if l.date < 0 || (l.amount < 0 && l.credit < 0 && l.debit < 0) {
		return nil, nil
	}
	// A date column whose header cell is a date is data, not a header.
	if _, err := ParseDate(rec[l.date]); err == nil {
		return nil, nil
	}
	l.header = make([]string, len(rec))
	for i, c := range rec {
		l.header[i] = Fold(strings.TrimSpace(c))
	}
	return &l, nil
}

func sameHeader(rec, header []string) bool {
	if len(rec) != len(header) {
		return false
	}
	for i := range rec {
		if Fold(strings.TrimSpace(rec[i])) != header[i] {
			return false
		}
	}
	return true
}

// looksLikeData reports a record with a date field and another amount field.
func looksLikeData(rec []string) bool {
	l := inferLayout(rec)
	return l.date >= 0 && l.amount >= 0
}

// inferLayout places date, description and amount for a headerless file:
// the first date field, the first field with letters after it, and the first
// amount after the description (or after the date).
func inferLayout(rec []string) layout {
	l := layout{date: -1, desc: -1, amount: -1, credit: -1, debit: -1, id: -1, kind: -1}
	for i, f := range rec {
		if _, err := ParseDate(f); err == nil && strings.TrimSpace(f) != "" {
			l.date = i
			break
		}
	}
	if l.date < 0 {
		return l
	}
	for i := l.date + 1; i < len(rec); i++ {
		if strings.IndexFunc(rec[i], isLetter) >= 0 {
			if _, err := money.ParseAmount(rec[i]); err != nil {
				l.desc = i
				break
			}
		}
	}
	from := max(l.date, l.desc) + 1
	for i := from; i < len(rec); i++ {
		if _, err := money.ParseAmount(rec[i]); err == nil {
			l.amount = i
			break
		}
	}
	return l
}

func isLetter(r rune) bool {
	return r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= 0xC0 && r <= 0x24F
}
