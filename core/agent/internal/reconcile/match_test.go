package reconcile

import (
	"context"
	"errors"
	"testing"

	"github.com/kobana/kadu/core/agent/internal/statement"
)

func date(t *testing.T, s string) statement.Date {
	t.Helper()
	d, err := statement.ParseDate(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestMatch(t *testing.T) {
	recv := []Receivable{
		{ID: "R1", Payer: "ACME Comércio LTDA", DueDate: date(t, "2026-03-10"), AmountCents: 100000},
		{ID: "R2", Payer: "Beta", DueDate: date(t, "2026-03-10"), AmountCents: 100000},
		{ID: "R3", Payer: "Gama", DueDate: date(t, "2026-03-15"), AmountCents: 50000},
		{ID: "R4", Payer: "Delta", DueDate: date(t, "2026-03-20"), AmountCents: 70000},
		{ID: "R5", Payer: "Épsilon", DueDate: date(t, "2026-03-01"), AmountCents: 30000},
	}
	txs := []statement.Transaction{
		{ID: "T1", Date: date(t, "2026-03-10"), AmountCents: 100000, Description: "PIX RECEBIDO BETA SERVICOS"},
		{ID: "T2", Date: date(t, "2026-03-11"), AmountCents: 100000, Description: "PIX RECEBIDO ACME"},
		{ID: "T3", Date: date(t, "2026-03-19"), AmountCents: 51000, Description: "LIQUIDACAO BOLETO"}, // late, with fee
		{ID: "T4", Date: date(t, "2026-03-20"), AmountCents: -70000, Description: "PAGAMENTO"},        // a debit
		{ID: "T5", Date: date(t, "2026-03-30"), AmountCents: 70000, Description: "TED"},               // too late
		{ID: "T6", Date: date(t, "2026-03-02"), AmountCents: 999, Description: "RENDIMENTO"},
		{ID: "T7", Date: date(t, "2026-03-01"), AmountCents: 30000, Description: "PIX EPSILON"},
	}
	res, err := Match(context.Background(), recv, txs, Options{DateWindowDays: 3, ToleranceBasisPoints: 250, ToleranceWindowDays: 5})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, m := range res.Matched {
		got[m.ReceivableID] = m.TransactionID + "/" + m.Kind
	}
	want := map[string]string{"R1": "T2/exact", "R2": "T1/exact", "R3": "T3/tolerance", "R5": "T7/exact"}
	if len(got) != len(want) {
		t.Fatalf("matched %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s matched %q, want %q", k, got[k], v)
		}
	}
	if len(res.UnmatchedReceivables) != 1 || res.UnmatchedReceivables[0].ID != "R4" {
		t.Errorf("unmatched = %+v, want R4", res.UnmatchedReceivables)
	}
	if len(res.UnexpectedCredits) != 2 || res.UnexpectedCredits[0].TransactionID != "T5" || res.UnexpectedCredits[1].TransactionID != "T6" {
		t.Errorf("unexpected credits = %+v, want T5, T6", res.UnexpectedCredits)
	}
	wantCounts := Counts{Receivables: 5, Matched: 4, MatchedExact: 3, MatchedTolerance: 1, Unmatched: 1, Credits: 6, UnexpectedCredits: 2}
	if res.Counts != wantCounts {
		t.Errorf("counts = %+v, want %+v", res.Counts, wantCounts)
	}
	wantTotals := Totals{
		ReceivablesCents: 350000, MatchedCents: 280000, ReceivedCents: 281000, DifferenceCents: 1000,
		UnmatchedCents: 70000, CreditsCents: 351999, UnexpectedCreditsCents: 70999,
	}
	if res.Totals != wantTotals {
		t.Errorf("totals = %+v, want %+v", res.Totals, wantTotals)
	}
	for _, m := range res.Matched {
		if m.ReceivableID == "R3" && (m.DaysFromDue != 4 || m.DifferenceCents != 1000) {
			t.Errorf("R3 days %d diff %d, want 4 and 1000", m.DaysFromDue, m.DifferenceCents)
		}
	}
}

func TestMatchNoTolerancePass(t *testing.T) {
	recv := []Receivable{{ID: "R", DueDate: date(t, "2026-03-10"), AmountCents: 100}}
	txs := []statement.Transaction{{ID: "T", Date: date(t, "2026-03-10"), AmountCents: 101}}
	res, err := Match(context.Background(), recv, txs, Options{DateWindowDays: 3})
	if err != nil || res.Counts.Matched != 0 {
		t.Fatalf("Match() = %+v, %v; want no match without a tolerance", res.Counts, err)
	}
}

func TestMatchCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Match(ctx, []Receivable{{ID: "R", AmountCents: 1}}, nil, Options{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Match(cancelled) = %v", err)
	}
}
