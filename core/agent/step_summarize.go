package agent

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/kobana/kadu/core/agent/internal/money"
	"github.com/kobana/kadu/core/agent/internal/reconcile"
	"github.com/kobana/kadu/core/agent/internal/statement"
)

// summarizeStep totals the transactions per category and direction and
// writes a short text about them and the reconciliation.
type summarizeStep struct {
	Language      string `json:"language"`       // "en" (default) or "pt-BR"
	TopCategories *int   `json:"top_categories"` // categories named in the text; default 3
}

// summary is the result of summarize.
type summary struct {
	From           string           `json:"from,omitempty"` // first transaction date
	To             string           `json:"to,omitempty"`   // last transaction date
	Transactions   int              `json:"transactions"`
	Credits        int              `json:"credits"`
	Debits         int              `json:"debits"`
	InflowCents    int64            `json:"inflow_cents"`
	OutflowCents   int64            `json:"outflow_cents"` // positive
	NetCents       int64            `json:"net_cents"`
	ByCategory     []categoryTotal  `json:"by_category"` // by name; only when categorized
	Reconciliation *reconcileTotals `json:"reconciliation,omitempty"`
	Text           string           `json:"text"`
}

type categoryTotal struct {
	Category     string `json:"category"`
	Count        int    `json:"count"`
	InflowCents  int64  `json:"inflow_cents"`
	OutflowCents int64  `json:"outflow_cents"`
	NetCents     int64  `json:"net_cents"`
}

type reconcileTotals struct {
	Counts reconcile.Counts `json:"counts"`
	Totals reconcile.Totals `json:"totals"`
}

func (s *summarizeStep) validate(v *validation, at string) {
	v.needs(at, "transactions", "parse_statement")
	switch s.Language {
	case "", "en", "pt-BR":
	default:
		v.addf(at+".language", `want "en" or "pt-BR", got %q`, s.Language)
	}
	if s.TopCategories != nil && (*s.TopCategories < 0 || *s.TopCategories > 20) {
		v.addf(at+".top_categories", "want 0 to 20, got %d", *s.TopCategories)
	}
}

func (s *summarizeStep) run(ctx context.Context, ex *execution) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	sum := &summary{ByCategory: []categoryTotal{}}
	byCat := map[string]*categoryTotal{}
	var lo, hi statement.Date
	for i, t := range ex.st.Transactions {
		if i == 0 || t.Date < lo {
			lo = t.Date
		}
		if i == 0 || t.Date > hi {
			hi = t.Date
		}
		sum.Transactions++
		if t.AmountCents > 0 {
			sum.Credits++
			sum.InflowCents += t.AmountCents
		} else {
			sum.Debits++
			sum.OutflowCents -= t.AmountCents
		}
		if !ex.st.Categorized {
			continue
		}
		c := byCat[t.Category]
		if c == nil {
			c = &categoryTotal{Category: t.Category}
			byCat[t.Category] = c
		}
		c.Count++
		if t.AmountCents > 0 {
			c.InflowCents += t.AmountCents
		} else {
			c.OutflowCents -= t.AmountCents
		}
		c.NetCents += t.AmountCents
	}
	sum.NetCents = sum.InflowCents - sum.OutflowCents
	if sum.Transactions > 0 {
		sum.From, sum.To = lo.String(), hi.String()
	}
	for _, k := range sortedKeys(byCat) {
		sum.ByCategory = append(sum.ByCategory, *byCat[k])
	}
	if r := ex.st.Reconciliation; r != nil {
		sum.Reconciliation = &reconcileTotals{Counts: r.Counts, Totals: r.Totals}
	}
	top := 3
	if s.TopCategories != nil {
		top = *s.TopCategories
	}
	sum.Text = sum.text(s.Language, top)
	ex.st.Summary = sum
	return fmt.Sprintf("inflow %s, outflow %s, net %s over %d transactions",
		money.FormatBRL(sum.InflowCents), money.FormatBRL(sum.OutflowCents), money.FormatBRL(sum.NetCents), sum.Transactions), nil
}

// text renders the summary in lang ("en" or "pt-BR").
func (s *summary) text(lang string, top int) string {
	pt := lang == "pt-BR"
	brl := money.FormatBRL
	date := func(iso string) string {
		if !pt || len(iso) != 10 {
			return iso
		}
		return iso[8:10] + "/" + iso[5:7] + "/" + iso[0:4]
	}
	var b strings.Builder
	switch {
	case s.Transactions == 0 && pt:
		b.WriteString("Nenhum lançamento no extrato.")
	case s.Transactions == 0:
		b.WriteString("No transactions in the statement.")
	case pt:
		fmt.Fprintf(&b, "%d lançamentos de %s a %s: entradas %s, saídas %s, resultado %s.",
			s.Transactions, date(s.From), date(s.To), brl(s.InflowCents), brl(s.OutflowCents), brl(s.NetCents))
	default:
		fmt.Fprintf(&b, "%d transactions from %s to %s: inflow %s, outflow %s, net %s.",
			s.Transactions, s.From, s.To, brl(s.InflowCents), brl(s.OutflowCents), brl(s.NetCents))
	}
	if top > 0 {
		outs := slices.Clone(s.ByCategory)
		outs = slices.DeleteFunc(outs, func(c categoryTotal) bool { return c.OutflowCents == 0 })
		slices.SortStableFunc(outs, func(a, b categoryTotal) int {
			return cmp.Or(cmp.Compare(b.OutflowCents, a.OutflowCents), cmp.Compare(a.Category, b.Category))
		})
		if len(outs) > top {
			outs = outs[:top]
		}
		if len(outs) > 0 {
			if pt {
				b.WriteString(" Maiores saídas: ")
			} else {
				b.WriteString(" Largest outflows: ")
			}
			for i, c := range outs {
				if i > 0 {
					b.WriteString("; ")
				}
				fmt.Fprintf(&b, "%s %s", c.Category, brl(c.OutflowCents))
			}
			b.WriteString(".")
		}
	}
	if r := s.Reconciliation; r != nil {
		c, t := r.Counts, r.Totals
		if pt {
			fmt.Fprintf(&b, " Conciliação: %d de %d recebíveis conciliados (%d exatos, %d com tolerância), %d em aberto (%s), %d créditos sem recebível (%s).",
				c.Matched, c.Receivables, c.MatchedExact, c.MatchedTolerance, c.Unmatched, brl(t.UnmatchedCents), c.UnexpectedCredits, brl(t.UnexpectedCreditsCents))
		} else {
			fmt.Fprintf(&b, " Reconciliation: %d of %d receivables matched (%d exact, %d within tolerance), %d unmatched (%s), %d unexpected credits (%s).",
				c.Matched, c.Receivables, c.MatchedExact, c.MatchedTolerance, c.Unmatched, brl(t.UnmatchedCents), c.UnexpectedCredits, brl(t.UnexpectedCreditsCents))
		}
	}
	return b.String()
}
