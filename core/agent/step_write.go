package agent

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/kobana/kadu/core/agent/internal/reconcile"
)

// writeOutput writes results to an output file through Sink.WriteFile.
type writeOutput struct {
	Content   string `json:"content"`   // see contentProducer
	Format    string `json:"format"`    // "csv" (default) or "json"
	Filename  string `json:"filename"`  // default "<content>.<format>"
	Separator string `json:"separator"` // CSV: "," (default), ";", "|" or "tab"
}

// contentProducer maps each content to what must have produced it.
func contentProducer(content string) (produced, step string, ok bool) {
	switch content {
	case "transactions":
		return "transactions", "parse_statement", true
	case "reconciliation", "unmatched_receivables", "unexpected_credits":
		return "reconciliation", "reconcile", true
	case "summary":
		return "summary", "summarize", true
	case "all":
		return "transactions", "parse_statement", true
	}
	return "", "", false
}

const maxFilename = 100

func (w *writeOutput) validate(v *validation, at string) {
	produced, step, ok := contentProducer(w.Content)
	switch {
	case w.Content == "":
		v.addf(at+".content", "required: transactions, reconciliation, unmatched_receivables, unexpected_credits, summary or all")
	case !ok:
		v.addf(at+".content", "unknown content %q (want transactions, reconciliation, unmatched_receivables, unexpected_credits, summary or all)", w.Content)
	default:
		v.needs(at+".content", produced, step)
	}
	switch w.Format {
	case "", "csv":
		if w.Content == "all" {
			v.addf(at+".format", `content "all" is written as JSON only`)
		}
	case "json":
	default:
		v.addf(at+".format", `want "csv" or "json", got %q`, w.Format)
	}
	if w.Filename != "" && !validFilename(w.Filename) {
		v.addf(at+".filename", "want 1 to %d letters, digits, spaces, dots, dashes and underscores, not starting with a dot", maxFilename)
	}
	if _, err := separatorRune(w.Separator); err != nil {
		v.addf(at+".separator", "%v", err)
	}
}

func validFilename(s string) bool {
	if s == "" || len(s) > maxFilename || s[0] == '.' || strings.TrimSpace(s) != s {
		return false
	}
	for _, c := range s {
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') && !strings.ContainsRune(" ._-", c) {
			return false
		}
	}
	return true
}

func (w *writeOutput) run(ctx context.Context, ex *execution) (string, error) {
	format := w.Format
	if format == "" {
		format = "csv"
	}
	name := w.Filename
	if name == "" {
		name = w.Content
	}
	if !strings.HasSuffix(strings.ToLower(name), "."+format) {
		name += "." + format
	}
	var data []byte
	var err error
	contentType := "application/json"
	if format == "json" {
		data, err = w.json(ex)
	} else {
		contentType = "text/csv; charset=utf-8"
		data, err = w.csv(ctx, ex)
	}
	if err != nil {
		return "", err
	}
	id, err := ex.sink.WriteFile(ctx, name, contentType, data)
	if err != nil {
		return "", fmt.Errorf("writing %s: %w", name, err)
	}
	ex.st.Files = append(ex.st.Files, outputFile{Step: ex.step.ID, FileID: id, Filename: name, ContentType: contentType, Bytes: len(data)})
	return fmt.Sprintf("wrote %s (%d bytes)", name, len(data)), nil
}

func (w *writeOutput) json(ex *execution) ([]byte, error) {
	st := ex.st
	var v any
	switch w.Content {
	case "transactions":
		v = nonNil(st.Transactions)
	case "reconciliation":
		v = st.Reconciliation
	case "unmatched_receivables":
		v = nonNil(st.Reconciliation.UnmatchedReceivables)
	case "unexpected_credits":
		v = nonNil(st.Reconciliation.UnexpectedCredits)
	case "summary":
		v = st.Summary
	case "all":
		v = struct {
			Summary        *summary          `json:"summary,omitempty"`
			Reconciliation *reconcile.Result `json:"reconciliation,omitempty"`
			Transactions   []txn             `json:"transactions"`
		}{st.Summary, st.Reconciliation, nonNil(st.Transactions)}
	}
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", w.Content, err)
	}
	return append(data, '\n'), nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func (w *writeOutput) csv(ctx context.Context, ex *execution) ([]byte, error) {
	var buf bytes.Buffer
	cw := csv.NewWriter(&buf)
	if sep, _ := separatorRune(w.Separator); sep != 0 {
		cw.Comma = sep
	}
	st := ex.st
	i64 := func(n int64) string { return strconv.FormatInt(n, 10) }
	rows := [][]string{}
	switch w.Content {
	case "transactions":
		rows = append(rows, []string{"id", "date", "description", "amount_cents", "category", "type", "source", "line"})
		for i, t := range st.Transactions {
			if i%1024 == 0 {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
			}
			rows = append(rows, []string{cell(t.ID), t.Date.String(), cell(t.Description), i64(t.AmountCents), cell(t.Category), t.Type, t.Source, strconv.Itoa(t.Line)})
		}
	case "reconciliation":
		rows = append(rows, []string{"status", "receivable_id", "payer", "due_date", "amount_cents", "transaction_id", "transaction_date", "credit_cents", "difference_cents", "days_from_due", "kind"})
		r := st.Reconciliation
		for _, m := range r.Matched {
			rows = append(rows, []string{"matched", cell(m.ReceivableID), cell(m.Payer), m.DueDate.String(), i64(m.AmountCents), cell(m.TransactionID), m.TransactionDate.String(), i64(m.CreditCents), i64(m.DifferenceCents), strconv.Itoa(m.DaysFromDue), m.Kind})
		}
		for _, u := range r.UnmatchedReceivables {
			rows = append(rows, []string{"unmatched", cell(u.ID), cell(u.Payer), u.DueDate.String(), i64(u.AmountCents), "", "", "", "", "", ""})
		}
		for _, c := range r.UnexpectedCredits {
			rows = append(rows, []string{"unexpected_credit", "", "", "", "", cell(c.TransactionID), c.Date.String(), i64(c.AmountCents), "", "", ""})
		}
	case "unmatched_receivables":
		rows = append(rows, []string{"receivable_id", "payer", "due_date", "amount_cents"})
		for _, u := range st.Reconciliation.UnmatchedReceivables {
			rows = append(rows, []string{cell(u.ID), cell(u.Payer), u.DueDate.String(), i64(u.AmountCents)})
		}
	case "unexpected_credits":
		rows = append(rows, []string{"transaction_id", "date", "description", "amount_cents"})
		for _, c := range st.Reconciliation.UnexpectedCredits {
			rows = append(rows, []string{cell(c.TransactionID), c.Date.String(), cell(c.Description), i64(c.AmountCents)})
		}
	case "summary":
		rows = append(rows, []string{"category", "count", "inflow_cents", "outflow_cents", "net_cents"})
		s := st.Summary
		for _, c := range s.ByCategory {
			rows = append(rows, []string{cell(c.Category), strconv.Itoa(c.Count), i64(c.InflowCents), i64(c.OutflowCents), i64(c.NetCents)})
		}
		rows = append(rows, []string{"TOTAL", strconv.Itoa(s.Transactions), i64(s.InflowCents), i64(s.OutflowCents), i64(s.NetCents)})
	}
	if err := cw.WriteAll(rows); err != nil {
		return nil, fmt.Errorf("encoding %s: %w", w.Content, err)
	}
	return buf.Bytes(), nil
}

// cell neutralises text a spreadsheet would run as a formula (CSV
// injection): statement descriptions and payer names are untrusted.
func cell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}
