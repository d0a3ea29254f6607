package reconcile

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/kobana/kadu/core/agent/internal/statement"
)

// Options tune Match.
type Options struct {
	// DateWindowDays is how far (in days, either side) a credit's date may be
	// from the due date for an exact-amount match.
	DateWindowDays int
	// ToleranceCents and ToleranceBasisPoints (hundredths of a percent of the
	// receivable) allow a second pass matching credits whose amount differs by
	// at most the larger of the two (late fees, bank discounts). Both zero: no
	// second pass.
	ToleranceCents       int64
	ToleranceBasisPoints int64
	// ToleranceWindowDays is the date window of the tolerance pass.
	ToleranceWindowDays int
}

// Pair is one receivable matched with one credit.
type Pair struct {
	ReceivableID    string         `json:"receivable_id"`
	Payer           string         `json:"payer"`
	DueDate         statement.Date `json:"due_date"`
	AmountCents     int64          `json:"amount_cents"`
	TransactionID   string         `json:"transaction_id"`
	TransactionDate statement.Date `json:"transaction_date"`
	CreditCents     int64          `json:"credit_cents"`
	DifferenceCents int64          `json:"difference_cents"` // credit − amount
	DaysFromDue     int            `json:"days_from_due"`    // > 0: paid late
	Kind            string         `json:"kind"`             // "exact" or "tolerance"
	PayerInText     bool           `json:"payer_in_description"`
}

// Credit is a statement credit no receivable claimed.
type Credit struct {
	TransactionID string         `json:"transaction_id"`
	Date          statement.Date `json:"date"`
	Description   string         `json:"description"`
	AmountCents   int64          `json:"amount_cents"`
}

// Counts are the sizes of a Result.
type Counts struct {
	Receivables       int `json:"receivables"`
	Matched           int `json:"matched"`
	MatchedExact      int `json:"matched_exact"`
	MatchedTolerance  int `json:"matched_tolerance"`
	Unmatched         int `json:"unmatched_receivables"`
	Credits           int `json:"credits"`
	UnexpectedCredits int `json:"unexpected_credits"`
}

// Totals are the sums of a Result, in centavos.
type Totals struct {
	ReceivablesCents       int64 `json:"receivables_cents"`
	MatchedCents           int64 `json:"matched_cents"`  // receivable amounts matched
	ReceivedCents          int64 `json:"received_cents"` // credits matched
	DifferenceCents        int64 `json:"difference_cents"`
	UnmatchedCents         int64 `json:"unmatched_receivables_cents"`
	CreditsCents           int64 `json:"credits_cents"`
	UnexpectedCreditsCents int64 `json:"unexpected_credits_cents"`
}

// Result is the outcome of Match. Matched and UnmatchedReceivables follow
// the receivables' order; UnexpectedCredits follows the statement's.
type Result struct {
	Matched              []Pair       `json:"matched"`
	UnmatchedReceivables []Receivable `json:"unmatched_receivables"`
	UnexpectedCredits    []Credit     `json:"unexpected_credits"`
	Counts               Counts       `json:"counts"`
	Totals               Totals       `json:"totals"`
}

// candidate is a possible (receivable, credit) pair.
type candidate struct {
	r, c   int
	payer  bool
	diff   int64 // |credit − amount|
	days   int   // |credit date − due date|
	signed int   // credit date − due date
}

// Match pairs receivables with the credits (amount > 0) among txs, each used
// at most once, in two passes: exact amount within DateWindowDays, then, for
// what is left, amount within the tolerance and date within
// ToleranceWindowDays. In each pass all possible pairs are ranked and taken
// greedily: payer name found in the description first, then the smallest
// amount difference, the closest date, and the earlier receivable and
// credit. The result depends only on the inputs. Match checks ctx every
// 1,024 receivables and returns ctx.Err() if it is done.
func Match(ctx context.Context, recv []Receivable, txs []statement.Transaction, opts Options) (*Result, error) {
	var credits []int // indexes into txs
	for i, t := range txs {
		if t.AmountCents > 0 {
			credits = append(credits, i)
		}
	}
	// Credits sorted by amount for range lookups.
	byAmount := slices.Clone(credits)
	slices.SortStableFunc(byAmount, func(a, b int) int { return cmp.Compare(txs[a].AmountCents, txs[b].AmountCents) })
	payers := make([][]string, len(recv))
	for i, r := range recv {
		payers[i] = payerWords(r.Payer)
	}
	descWords := make(map[int][]string, len(credits))
	words := func(c int) []string {
		w, ok := descWords[c]
		if !ok {
			w = strings.FieldsFunc(statement.Fold(txs[c].Description), notAlnum)
			descWords[c] = w
		}
		return w
	}

	matchedR := make([]int, len(recv)) // credit index + 1, 0 = none
	kind := make([]string, len(recv))
	usedC := make(map[int]bool, len(credits))
	pass := func(name string, window int, allowed func(Receivable) int64) error {
		var cands []candidate
		for ri, r := range recv {
			if ri%1024 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			if matchedR[ri] != 0 {
				continue
			}
			tol := allowed(r)
			lo, _ := slices.BinarySearchFunc(byAmount, r.AmountCents-tol, func(c int, v int64) int { return cmp.Compare(txs[c].AmountCents, v) })
			for _, c := range byAmount[lo:] {
				t := txs[c]
				if t.AmountCents > r.AmountCents+tol {
					break
				}
				if usedC[c] {
					continue
				}
				signed := int(t.Date - r.DueDate)
				days := max(signed, -signed)
				if days > window {
					continue
				}
				diff := t.AmountCents - r.AmountCents
				cands = append(cands, candidate{
					r: ri, c: c, signed: signed, days: days, diff: max(diff, -diff),
					payer: containsAny(words(c), payers[ri]),
				})
			}
		}
		slices.SortFunc(cands, func(a, b candidate) int {
			if a.payer != b.payer {
				if a.payer {
					return -1
				}
				return 1
			}
			return cmp.Or(cmp.Compare(a.diff, b.diff), cmp.Compare(a.days, b.days), cmp.Compare(a.r, b.r), cmp.Compare(a.c, b.c))
		})
		for _, p := range cands {
			if matchedR[p.r] != 0 || usedC[p.c] {
				continue
			}
			matchedR[p.r], kind[p.r] = p.c+1, name
			usedC[p.c] = true
		}
		return nil
	}
	if err := pass("exact", opts.DateWindowDays, func(Receivable) int64 { return 0 }); err != nil {
		return nil, err
	}
	if opts.ToleranceCents > 0 || opts.ToleranceBasisPoints > 0 {
		err := pass("tolerance", opts.ToleranceWindowDays, func(r Receivable) int64 {
			return max(opts.ToleranceCents, r.AmountCents*opts.ToleranceBasisPoints/10_000)
		})
		if err != nil {
			return nil, err
		}
	}

	res := &Result{Matched: []Pair{}, UnmatchedReceivables: []Receivable{}, UnexpectedCredits: []Credit{}}
	for ri, r := range recv {
		res.Totals.ReceivablesCents += r.AmountCents
		if matchedR[ri] == 0 {
			res.UnmatchedReceivables = append(res.UnmatchedReceivables, r)
			res.Totals.UnmatchedCents += r.AmountCents
			continue
		}
		t := txs[matchedR[ri]-1]
		m := Pair{
			ReceivableID: r.ID, Payer: r.Payer, DueDate: r.DueDate, AmountCents: r.AmountCents,
			TransactionID: t.ID, TransactionDate: t.Date, CreditCents: t.AmountCents,
			DifferenceCents: t.AmountCents - r.AmountCents, DaysFromDue: int(t.Date - r.DueDate),
			Kind: kind[ri], PayerInText: containsAny(words(matchedR[ri]-1), payers[ri]),
		}
		res.Matched = append(res.Matched, m)
		res.Totals.MatchedCents += r.AmountCents
		res.Totals.ReceivedCents += t.AmountCents
		if m.Kind == "exact" {
			res.Counts.MatchedExact++
		} else {
			res.Counts.MatchedTolerance++
		}
	}
	for _, c := range credits {
		t := txs[c]
		res.Totals.CreditsCents += t.AmountCents
		if usedC[c] {
			continue
		}
		res.UnexpectedCredits = append(res.UnexpectedCredits, Credit{TransactionID: t.ID, Date: t.Date, Description: t.Description, AmountCents: t.AmountCents})
		res.Totals.UnexpectedCreditsCents += t.AmountCents
	}
	res.Totals.DifferenceCents = res.Totals.ReceivedCents - res.Totals.MatchedCents
	res.Counts.Receivables = len(recv)
	res.Counts.Matched = len(res.Matched)
	res.Counts.Unmatched = len(res.UnmatchedReceivables)
	res.Counts.Credits = len(credits)
	res.Counts.UnexpectedCredits = len(res.UnexpectedCredits)
	return res, nil
}

func notAlnum(c rune) bool { return (c < 'A' || c > 'Z') && (c < '0' || c > '9') }

// payerStop reports words too common in company and person names to
// identify a payer.
func payerStop(w string) bool {
	switch w {
	case "LTDA", "EPP", "EIRELI", "DAS", "DOS", "CIA", "COMERCIO", "SERVICOS", "INDUSTRIA", "BRASIL":
		return true
	}
	return false
}

// payerWords returns the first two distinctive words of a payer's name.
func payerWords(name string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(statement.Fold(name), notAlnum) {
		if len(w) >= 3 && !payerStop(w) {
			out = append(out, w)
			if len(out) == 2 {
				break
			}
		}
	}
	return out
}

func containsAny(words, want []string) bool {
	for _, w := range want {
		if slices.Contains(words, w) {
			return true
		}
	}
	return false
}
