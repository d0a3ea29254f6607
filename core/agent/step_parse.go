package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/kobana/kadu/core/agent/internal/statement"
)

// parseStatement reads a bank statement (CSV or OFX) and appends its
// transactions to the execution's.
type parseStatement struct {
	Source          source            `json:"source"`
	Format          string            `json:"format"`    // "auto" (default), "csv", "ofx"
	Separator       string            `json:"separator"` // CSV: ";", ",", "tab", "|"; default detected
	Columns         statement.Columns `json:"columns"`   // CSV: header names, default detected
	KeepBalanceRows bool              `json:"keep_balance_rows"`
	Period          *period           `json:"period"`
}

// period keeps only transactions dated from From to To, inclusive. Either
// From/To (either may be empty: open end) or Pointer (to an object with
// "from" and "to", such as an ask step's answer).
type period struct {
	From    string `json:"from,omitempty"`
	To      string `json:"to,omitempty"`
	Pointer string `json:"pointer,omitempty"`
}

func (p *parseStatement) validate(v *validation, at string) {
	p.Source.validate(v, at+".source")
	switch p.Format {
	case "", "auto", "csv", "ofx":
	default:
		v.addf(at+".format", `want "auto", "csv" or "ofx", got %q`, p.Format)
	}
	if _, err := separatorRune(p.Separator); err != nil {
		v.addf(at+".separator", "%v", err)
	}
	if p.Period != nil {
		p.Period.validate(v, at+".period")
	}
}

func (p *period) validate(v *validation, at string) {
	if p.Pointer != "" {
		if p.From != "" || p.To != "" {
			v.addf(at, "set either from/to or pointer")
		}
		validatePointer(v, at+".pointer", p.Pointer)
		return
	}
	if p.From == "" && p.To == "" {
		v.addf(at, "set from, to or pointer")
		return
	}
	if _, _, err := parsePeriod(p.From, p.To); err != nil {
		v.addf(at, "%v", err)
	}
}

// parsePeriod returns the bounds of a period; an empty end is open.
func parsePeriod(from, to string) (lo, hi statement.Date, err error) {
	lo, hi = statement.Date(-1<<31), statement.Date(1<<31-1)
	if from != "" {
		if lo, err = statement.ParseDate(from); err != nil {
			return lo, hi, fmt.Errorf("from: %w", err)
		}
	}
	if to != "" {
		if hi, err = statement.ParseDate(to); err != nil {
			return lo, hi, fmt.Errorf("to: %w", err)
		}
	}
	if lo > hi {
		return lo, hi, errors.New("from is after to")
	}
	return lo, hi, nil
}

func separatorRune(s string) (rune, error) {
	switch s {
	case "":
		return 0, nil
	case ";", ",", "|":
		return rune(s[0]), nil
	case "tab", "\t":
		return '\t', nil
	}
	return 0, fmt.Errorf(`want ";", ",", "|" or "tab", got %q`, s)
}

func (p *parseStatement) run(ctx context.Context, ex *execution) (string, error) {
	lo, hi, err := p.bounds(ex)
	if err != nil {
		return "", err
	}
	sep, _ := separatorRune(p.Separator)
	room := ex.opts.MaxTransactions - len(ex.st.Transactions)
	if room <= 0 {
		return "", inputErrorf("the execution already holds %d transactions, the most it may", ex.opts.MaxTransactions)
	}
	// The file is parsed as it is read from the blob store: a statement is
	// never held whole, and a hostile one fails at the first line past a limit.
	name, rc, err := ex.stream(ctx, p.Source)
	if err != nil {
		return "", err
	}
	defer rc.Close()
	lim := statement.Limits{
		MaxTransactions: room,
		MaxLineBytes:    ex.opts.Parse.MaxLineBytes,
		MaxFields:       ex.opts.Parse.MaxFields,
		MaxRecords:      ex.opts.Parse.MaxRecords,
		MaxDecodedBytes: ex.opts.Parse.MaxDecodedBytes,
	}
	stmt, err := statement.Parse(ctx, rc, p.Format, name, statement.CSVOptions{
		Separator: sep, Columns: p.Columns, KeepBalanceRows: p.KeepBalanceRows, Limits: lim,
	})
	if err != nil {
		var ie *inputError
		if errors.As(err, &ie) {
			return "", ie // the file is larger than a step reads
		}
		var pe *statement.ParseError
		if errors.As(err, &pe) {
			return "", inputErrorf("%s: %v", name, pe)
		}
		return "", err
	}
	used := make(map[string]bool, len(ex.st.Transactions))
	for _, t := range ex.st.Transactions {
		used[t.ID] = true
	}
	rep := sourceReport{Step: ex.step.ID, Name: name, Format: stmt.Format, Account: stmt.Account, Skipped: stmt.Skipped}
	for _, t := range stmt.Transactions {
		if t.Date < lo || t.Date > hi {
			rep.OutsidePeriod++
			continue
		}
		if t.ID == "" || used[t.ID] {
			t.ID = fmt.Sprintf("%s:%d", ex.step.ID, t.Line)
		}
		used[t.ID] = true
		ex.st.Transactions = append(ex.st.Transactions, txn{Transaction: t, Source: ex.step.ID})
		rep.Transactions++
	}
	ex.st.Sources = append(ex.st.Sources, rep)
	msg := fmt.Sprintf("read %d transactions from %s (%s", rep.Transactions, name, stmt.Format)
	if rep.Skipped > 0 {
		msg += fmt.Sprintf(", %d rows skipped", rep.Skipped)
	}
	if rep.OutsidePeriod > 0 {
		msg += fmt.Sprintf(", %d outside the period", rep.OutsidePeriod)
	}
	return msg + ")", nil
}

// bounds resolves the period filter; no period means no bounds.
func (p *parseStatement) bounds(ex *execution) (lo, hi statement.Date, err error) {
	switch {
	case p.Period == nil:
		return parsePeriod("", "")
	case p.Period.Pointer != "":
		raw, ok := ex.lookup(p.Period.Pointer)
		var v struct {
			From string `json:"from"`
			To   string `json:"to"`
		}
		if !ok || json.Unmarshal(raw, &v) != nil {
			return lo, hi, inputErrorf("%s: want an object with \"from\" and \"to\" dates", p.Period.Pointer)
		}
		lo, hi, err = parsePeriod(v.From, v.To)
		if err != nil {
			return lo, hi, inputErrorf("period at %s: %v", p.Period.Pointer, err)
		}
		return lo, hi, nil
	}
	return parsePeriod(p.Period.From, p.Period.To)
}
