// Package categorize assigns categories to bank transactions with ordered
// keyword rules, and holds the default rules for the descriptors Brazilian
// banks print (PIX, TED, BOLETO, TARIFA, IOF, SALARIO…).
//
// A Rules value is immutable once built and safe for concurrent use.
package categorize

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kobana/kadu/core/agent/internal/statement"
)

// Direction restricts a rule to credits or debits.
type Direction string

// Directions a rule may have; "" means any.
const (
	Any    Direction = ""
	Credit Direction = "credit"
	Debit  Direction = "debit"
)

// Rule gives Category to a transaction whose description contains one of
// Keywords. A keyword matches whole words of the description after Fold
// (case and accents ignored): "TED" matches "TED RECEBIDA" but not "TEDESCO";
// a trailing "*" matches a word prefix ("SALARI*" matches "SALARIOS").
type Rule struct {
	Category  string    `json:"category"`
	Keywords  []string  `json:"keywords"`
	Direction Direction `json:"direction,omitempty"`
}

// Rules is an ordered list of compiled rules; the first that matches wins.
type Rules struct {
	rules []compiled
}

type compiled struct {
	category string
	dir      Direction
	keywords [][]string // each keyword as folded words; last word may end in '*'
}

// Compile checks and prepares rules. Each rule needs a category (at most 64
// characters) and at least one non-empty keyword; Direction must be "",
// "credit" or "debit".
func Compile(rules []Rule) (*Rules, error) {
	out := &Rules{rules: make([]compiled, 0, len(rules))}
	var errs []error
	for i, r := range rules {
		c := compiled{category: strings.TrimSpace(r.Category), dir: r.Direction}
		switch {
		case c.category == "":
			errs = append(errs, fmt.Errorf("rules[%d].category: required", i))
		case len(c.category) > 64:
			errs = append(errs, fmt.Errorf("rules[%d].category: at most 64 characters", i))
		}
		if r.Direction != Any && r.Direction != Credit && r.Direction != Debit {
			errs = append(errs, fmt.Errorf("rules[%d].direction: want \"credit\", \"debit\" or absent, got %q", i, r.Direction))
		}
		if len(r.Keywords) == 0 {
			errs = append(errs, fmt.Errorf("rules[%d].keywords: at least one keyword", i))
		}
		for j, k := range r.Keywords {
			words := strings.Fields(statement.Fold(k))
			if len(words) == 0 || words[0] == "*" {
				errs = append(errs, fmt.Errorf("rules[%d].keywords[%d]: empty keyword", i, j))
				continue
			}
			c.keywords = append(c.keywords, words)
		}
		out.rules = append(out.rules, c)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// Then returns the rules of r followed by those of next.
func (r *Rules) Then(next *Rules) *Rules {
	out := &Rules{rules: make([]compiled, 0, len(r.rules)+len(next.rules))}
	out.rules = append(append(out.rules, r.rules...), next.rules...)
	return out
}

// Category returns the category of the first rule matching a transaction
// with this description and amount, and false when none matches.
func (r *Rules) Category(description string, amountCents int64) (string, bool) {
	words := strings.FieldsFunc(statement.Fold(description), func(c rune) bool {
		return (c < 'A' || c > 'Z') && (c < '0' || c > '9')
	})
	for _, rule := range r.rules {
		if rule.dir == Credit && amountCents <= 0 || rule.dir == Debit && amountCents >= 0 {
			continue
		}
		for _, kw := range rule.keywords {
			if containsWords(words, kw) {
				return rule.category, true
			}
		}
	}
	return "", false
}

// containsWords reports whether kw occurs as consecutive words of words.
func containsWords(words, kw []string) bool {
	for i := 0; i+len(kw) <= len(words); i++ {
		ok := true
		for j, k := range kw {
			w := words[i+j]
			if p, isPrefix := strings.CutSuffix(k, "*"); isPrefix && j == len(kw)-1 {
				ok = strings.HasPrefix(w, p)
			} else {
				ok = w == k
			}
			if !ok {
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}
