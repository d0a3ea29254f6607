// Package reconcile matches a list of receivables (what customers owe) with
// the credits of a bank statement (what came in).
//
// Everything here is a pure function of its input and safe for concurrent use.
package reconcile

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/kobana/kadu/core/agent/internal/money"
	"github.com/kobana/kadu/core/agent/internal/statement"
)

// Receivable is an amount a payer owes by a due date.
type Receivable struct {
	ID          string         `json:"id"`
	Payer       string         `json:"payer"`
	DueDate     statement.Date `json:"due_date"`
	AmountCents int64          `json:"amount_cents"` // > 0
}

// MaxReceivables bounds a receivables list.
const MaxReceivables = 100_000

// ParseReceivables reads a receivables list in JSON (see FromJSON) or CSV
// (see ParseCSV), telling them apart by the first non-blank character.
func ParseReceivables(ctx context.Context, data []byte) ([]Receivable, error) {
	head := strings.TrimSpace(statement.Decode(data[:min(len(data), 1024)]))
	if strings.HasPrefix(head, "[") || strings.HasPrefix(head, "{") {
		return FromJSON([]byte(statement.Decode(data)))
	}
	return ParseCSV(ctx, data)
}

// jsonReceivable is the accepted JSON shape; unknown fields are ignored, so
// a list exported from another system can be used as it is.
type jsonReceivable struct {
	ID          json.RawMessage `json:"id"`
	Payer       string          `json:"payer"`
	DueDate     string          `json:"due_date"`
	Amount      json.RawMessage `json:"amount"`
	AmountCents json.RawMessage `json:"amount_cents"`
}

// FromJSON reads a JSON array of receivables, or an object with the array
// under "receivables". Each element has "id" (string or integer), "payer",
// "due_date" (any form statement.ParseDate reads) and either "amount_cents"
// (integer) or "amount" (a string such as "1.234,56" or a number such as
// 1234.56). Errors name the element: "receivables[3].due_date: …".
func FromJSON(raw []byte) ([]Receivable, error) {
	raw = bytes.TrimSpace(raw)
	if bytes.HasPrefix(raw, []byte("{")) {
		var wrap struct {
			Receivables json.RawMessage `json:"receivables"`
		}
		if err := json.Unmarshal(raw, &wrap); err != nil {
			return nil, fmt.Errorf("receivables: %w", err)
		}
		if wrap.Receivables == nil {
			return nil, errors.New(`receivables: want an array or an object with "receivables"`)
		}
		raw = wrap.Receivables
	}
	// Element by element, so that a long list of small elements ("[{},{},…]")
	// fails at MaxReceivables instead of first decoding every one of them.
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	tok, err := dec.Token()
	switch {
	case err != nil:
		return nil, fmt.Errorf("receivables: %w", err)
	case tok == nil: // null
		return []Receivable{}, nil
	case tok != json.Delim('['):
		return nil, fmt.Errorf("receivables: want an array, got %v", tok)
	}
	var out []Receivable
	seen := make(map[string]int)
	for i := 0; dec.More(); i++ {
		if i >= MaxReceivables {
			return nil, fmt.Errorf("receivables: more than %d", MaxReceivables)
		}
		var it jsonReceivable
		if err := dec.Decode(&it); err != nil {
			return nil, fmt.Errorf("receivables[%d]: %w", i, err)
		}
		at := func(field string) string { return fmt.Sprintf("receivables[%d].%s", i, field) }
		id, err := jsonID(it.ID)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", at("id"), err)
		}
		r := Receivable{ID: id, Payer: strings.TrimSpace(it.Payer)}
		if r.DueDate, err = statement.ParseDate(it.DueDate); err != nil {
			return nil, fmt.Errorf("%s: %w", at("due_date"), err)
		}
		switch {
		case it.AmountCents != nil:
			n, err := strconv.ParseInt(string(it.AmountCents), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%s: want an integer number of centavos, got %s", at("amount_cents"), it.AmountCents)
			}
			r.AmountCents = n
		case it.Amount != nil:
			s := string(it.Amount)
			if strings.HasPrefix(s, `"`) {
				if err := json.Unmarshal(it.Amount, &s); err != nil {
					return nil, fmt.Errorf("%s: %w", at("amount"), err)
				}
			} else if strings.ContainsAny(s, "eE") {
				return nil, fmt.Errorf("%s: exponents are not accepted, got %s", at("amount"), s)
			}
			if r.AmountCents, err = money.ParseAmount(s); err != nil {
				return nil, fmt.Errorf("%s: %w", at("amount"), err)
			}
		default:
			return nil, fmt.Errorf("%s: required (or amount_cents)", at("amount"))
		}
		if err := check(r); err != nil {
			return nil, fmt.Errorf("receivables[%d]: %w", i, err)
		}
		if j, dup := seen[r.ID]; dup {
			return nil, fmt.Errorf("%s: %q repeats receivables[%d].id", at("id"), r.ID, j)
		}
		seen[r.ID] = i
		out = append(out, r)
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("receivables: %w", err)
	}
	if out == nil {
		out = []Receivable{}
	}
	return out, nil
}

func jsonID(raw json.RawMessage) (string, error) {
	if raw == nil {
		return "", errors.New("required")
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return strings.TrimSpace(s), nil
	}
	if _, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		return string(raw), nil
	}
	return "", fmt.Errorf("want a string or an integer, got %s", raw)
}

func check(r Receivable) error {
	switch {
	case r.ID == "":
		return errors.New("id: required")
	case len(r.ID) > 128:
		return errors.New("id: at most 128 characters")
	case r.AmountCents <= 0:
		return fmt.Errorf("amount: must be positive, got %s", money.FormatDecimal(r.AmountCents))
	}
	return nil
}

// ParseCSV reads receivables from CSV with a header row naming the columns
// (Portuguese or English): id (id, identificador, código, documento, nosso
// número, fatura), payer (payer, pagador, sacado, cliente, nome), due date
// (due_date, vencimento, data) and amount (amount, valor; or amount_cents /
// valor_centavos in centavos). The separator is detected as for statements.
// Errors are *statement.ParseError with the line; the file is read within
// the default statement.Limits (line length, fields, records).
func ParseCSV(ctx context.Context, data []byte) ([]Receivable, error) {
	r := statement.NewRecordReader(bytes.NewReader(data), 0, statement.Limits{})
	cols := map[string]int{}
	cents := false
	var out []Receivable
	seen := map[string]int{}
	for {
		rec, line, err := r.Read(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if blankRecord(rec) {
			continue
		}
		fail := func(format string, args ...any) error {
			return &statement.ParseError{Line: line, Msg: fmt.Sprintf(format, args...)}
		}
		if len(cols) == 0 {
			cols, cents = receivableHeader(rec)
			for _, k := range []string{"id", "due", "amount"} {
				if _, ok := cols[k]; !ok {
					return nil, fail("header must name the id, due date and amount columns (e.g. id;pagador;vencimento;valor)")
				}
			}
			continue
		}
		cell := func(k string) string {
			i, ok := cols[k]
			if !ok || i >= len(rec) {
				return ""
			}
			return strings.TrimSpace(rec[i])
		}
		rv := Receivable{ID: cell("id"), Payer: cell("payer")}
		if rv.DueDate, err = statement.ParseDate(cell("due")); err != nil {
			return nil, fail("due date: %v", err)
		}
		if cents {
			rv.AmountCents, err = strconv.ParseInt(cell("amount"), 10, 64)
			if err != nil {
				return nil, fail("amount: want an integer number of centavos, got %q", cell("amount"))
			}
		} else if rv.AmountCents, err = money.ParseAmount(cell("amount")); err != nil {
			return nil, fail("amount: %v", err)
		}
		if err := check(rv); err != nil {
			return nil, fail("%v", err)
		}
		if prev, dup := seen[rv.ID]; dup {
			return nil, fail("id %q repeats line %d", rv.ID, prev)
		}
		if len(out) >= MaxReceivables {
			return nil, fail("more than %d receivables", MaxReceivables)
		}
		seen[rv.ID] = line
		out = append(out, rv)
	}
	if len(cols) == 0 {
		return nil, &statement.ParseError{Line: 1, Msg: "empty receivables list"}
	}
	return out, nil
}

func blankRecord(rec []string) bool {
	for _, f := range rec {
		if strings.TrimSpace(f) != "" {
			return false
		}
	}
	return true
}

// receivableHeader maps roles to column indexes; cents reports an amount
// column in centavos.
func receivableHeader(rec []string) (cols map[string]int, cents bool) {
	cols = map[string]int{}
	set := func(k string, i int) {
		if _, ok := cols[k]; !ok {
			cols[k] = i
		}
	}
	for i, cell := range rec {
		f := strings.NewReplacer("_", " ", "-", " ", ".", " ", "(", " ", ")", " ", "$", " ").Replace(statement.Fold(cell))
		w := strings.Fields(f)
		if len(w) == 0 {
			continue
		}
		joined := strings.Join(w, " ")
		switch {
		case joined == "ID" || w[0] == "IDENTIFICADOR" || w[0] == "CODIGO" || w[0] == "DOCUMENTO" || joined == "NOSSO NUMERO" || w[0] == "FATURA" || w[0] == "TITULO" || joined == "NUMERO":
			set("id", i)
		case w[0] == "PAYER" || w[0] == "PAGADOR" || w[0] == "SACADO" || w[0] == "CLIENTE" || w[0] == "NOME" || w[0] == "CUSTOMER":
			set("payer", i)
		case joined == "DUE DATE" || w[0] == "DUE" || w[0] == "VENCIMENTO" || joined == "DATA VENCIMENTO" || joined == "DATA DE VENCIMENTO" || joined == "DT VENCIMENTO" || joined == "DATA":
			set("due", i)
		case w[0] == "AMOUNT" || w[0] == "VALOR":
			if _, ok := cols["amount"]; !ok {
				cents = strings.Contains(joined, "CENTS") || strings.Contains(joined, "CENTAVOS")
			}
			set("amount", i)
		}
	}
	return cols, cents
}
