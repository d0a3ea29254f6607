package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/kobana/kadu/core/agent/internal/categorize"
)

// categorizeStep gives every transaction a category: the step's own rules
// first, then (unless use_default_rules is false) the built-in ones, then
// default_category.
type categorizeStep struct {
	Rules           []categorize.Rule `json:"rules"`
	UseDefaultRules *bool             `json:"use_default_rules"` // default true
	DefaultCategory string            `json:"default_category"`  // default "outros"

	compiled *categorize.Rules // set by validate
}

const maxRules = 500

func (c *categorizeStep) validate(v *validation, at string) {
	v.needs(at, "transactions", "parse_statement")
	if len(c.Rules) > maxRules {
		v.addf(at+".rules", "at most %d rules", maxRules)
		return
	}
	if len(c.DefaultCategory) > 64 {
		v.addf(at+".default_category", "at most 64 characters")
	}
	own, err := categorize.Compile(c.Rules)
	if err != nil {
		for _, e := range unjoin(err) {
			where, msg, _ := strings.Cut(e.Error(), ": ")
			v.addf(at+"."+where, "%s", msg)
		}
		return
	}
	if c.UseDefaultRules == nil || *c.UseDefaultRules {
		def, err := categorize.Compile(categorize.Default())
		if err != nil {
			v.addf(at, "built-in rules: %v", err) // a bug; tested
			return
		}
		own = own.Then(def)
	}
	c.compiled = own
}

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

func (c *categorizeStep) run(ctx context.Context, ex *execution) (string, error) {
	if c.compiled == nil {
		return "", errors.New("categorize: rules not compiled") // validate always runs first
	}
	fallback := c.DefaultCategory
	if fallback == "" {
		fallback = categorize.DefaultCategory
	}
	seen := map[string]bool{}
	unmatched := 0
	for i := range ex.st.Transactions {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return "", err
			}
		}
		t := &ex.st.Transactions[i]
		cat, ok := c.compiled.Category(t.Description, t.AmountCents)
		if !ok {
			cat = fallback
			unmatched++
		}
		t.Category = cat
		seen[cat] = true
	}
	ex.st.Categorized = true
	return fmt.Sprintf("categorized %d transactions into %d categories (%d without a matching rule: %s)",
		len(ex.st.Transactions), len(seen), unmatched, fallback), nil
}
