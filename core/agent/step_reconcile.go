package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/kobana/kadu/core/agent/internal/money"
	"github.com/kobana/kadu/core/agent/internal/reconcile"
	"github.com/kobana/kadu/core/agent/internal/statement"
)

// reconcileStep matches a receivables list against the statement credits.
type reconcileStep struct {
	Receivables         source      `json:"receivables"`
	DateWindowDays      *int        `json:"date_window_days"`      // default 3
	ToleranceCents      int64       `json:"tolerance_cents"`       // default 0
	TolerancePercent    json.Number `json:"tolerance_percent"`     // default 0; up to two decimals
	ToleranceWindowDays *int        `json:"tolerance_window_days"` // default date_window_days
}

const (
	defaultDateWindow = 3
	maxDateWindow     = 90
)

func (r *reconcileStep) validate(v *validation, at string) {
	v.needs(at, "transactions", "parse_statement")
	r.Receivables.validate(v, at+".receivables")
	for _, w := range []struct {
		name string
		days *int
	}{{"date_window_days", r.DateWindowDays}, {"tolerance_window_days", r.ToleranceWindowDays}} {
		if w.days != nil && (*w.days < 0 || *w.days > maxDateWindow) {
			v.addf(at+"."+w.name, "want 0 to %d days, got %d", maxDateWindow, *w.days)
		}
	}
	if r.ToleranceCents < 0 || r.ToleranceCents > 100_000_00 {
		v.addf(at+".tolerance_cents", "want 0 to 10000000 centavos, got %d", r.ToleranceCents)
	}
	if _, err := r.toleranceBasisPoints(); err != nil {
		v.addf(at+".tolerance_percent", "%v", err)
	}
}

func (r *reconcileStep) toleranceBasisPoints() (int64, error) {
	if r.TolerancePercent == "" {
		return 0, nil
	}
	bp, err := money.ParseAmount(string(r.TolerancePercent)) // "2.5" → 250: hundredths, as for centavos
	if err != nil || bp < 0 || bp > 100_00 {
		return 0, fmt.Errorf("want a number from 0 to 100 with at most two decimals, got %s", r.TolerancePercent)
	}
	return bp, nil
}

func (r *reconcileStep) options() reconcile.Options {
	o := reconcile.Options{DateWindowDays: defaultDateWindow, ToleranceCents: r.ToleranceCents}
	if r.DateWindowDays != nil {
		o.DateWindowDays = *r.DateWindowDays
	}
	o.ToleranceWindowDays = o.DateWindowDays
	if r.ToleranceWindowDays != nil {
		o.ToleranceWindowDays = *r.ToleranceWindowDays
	}
	o.ToleranceBasisPoints, _ = r.toleranceBasisPoints()
	return o
}

func (r *reconcileStep) run(ctx context.Context, ex *execution) (string, error) {
	src, err := ex.load(ctx, r.Receivables)
	if err != nil {
		return "", err
	}
	var recv []reconcile.Receivable
	if src.json != nil {
		recv, err = reconcile.FromJSON(src.json)
	} else {
		recv, err = reconcile.ParseReceivables(ctx, src.data)
	}
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", inputErrorf("%s: %v", src.name, err)
	}
	txs := make([]statement.Transaction, len(ex.st.Transactions))
	for i, t := range ex.st.Transactions {
		txs[i] = t.Transaction
	}
	res, err := reconcile.Match(ctx, recv, txs, r.options())
	if err != nil {
		return "", err
	}
	if res == nil {
		return "", errors.New("reconcile: no result")
	}
	ex.st.Reconciliation = res
	c := res.Counts
	return fmt.Sprintf("matched %d of %d receivables (%d exact, %d within tolerance); %d unmatched (%s); %d unexpected credits (%s)",
		c.Matched, c.Receivables, c.MatchedExact, c.MatchedTolerance, c.Unmatched, money.FormatBRL(res.Totals.UnmatchedCents),
		c.UnexpectedCredits, money.FormatBRL(res.Totals.UnexpectedCreditsCents)), nil
}
