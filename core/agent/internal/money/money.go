// Package money reads and writes amounts of Brazilian reais as integer
// centavos. It never uses floating point.
package money

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// ErrAmount is wrapped by every error ParseAmount returns.
var ErrAmount = errors.New("invalid amount")

// maxCents bounds parsed amounts (one quadrillion reais) so that sums of a few
// million of them cannot overflow int64.
const maxCents = 100_000_000_000_000_000

// ParseAmount reads an amount of money written the way Brazilian bank exports
// and spreadsheets write it and returns it in centavos.
//
// Accepted: an optional sign ("-" or "+") before or after the number, or
// parentheses around it; an optional "R$" or "BRL" before the number; an
// optional "C" (credit) or "D" (debit, negative) after it; digits with at
// most one decimal separator followed by one or two digits; and grouping
// separators in groups of three. The decimal separator is the last of "," and
// "." when both occur ("1.234,56", "1,234.56"); when only one kind occurs, it
// is a grouping separator if every group after it has exactly three digits
// ("1.234", "1.234.567") and a decimal separator if it occurs once followed by
// one or two digits ("1234,5", "-1234.56"). Anything else, including three
// decimals, is an error wrapping ErrAmount.
func ParseAmount(s string) (int64, error) {
	orig := s
	fail := func(why string) (int64, error) {
		return 0, fmt.Errorf("%w %q: %s", ErrAmount, orig, why)
	}
	s = strings.TrimSpace(s)
	neg, signs := false, 0
	if strings.HasPrefix(s, "(") && strings.HasSuffix(s, ")") {
		neg, signs = true, 1
		s = strings.TrimSpace(s[1 : len(s)-1])
	}
	leadingSign := func() {
		if s != "" && (s[0] == '-' || s[0] == '+') {
			neg = neg != (s[0] == '-')
			signs++
			s = strings.TrimSpace(s[1:])
		}
	}
	// The sign may come before the currency ("-R$ 10,00") or after it ("R$ -10,00").
	leadingSign()
	for _, cur := range []string{"R$", "r$", "BRL", "brl"} {
		if strings.HasPrefix(s, cur) {
			s = strings.TrimSpace(s[len(cur):])
			break
		}
	}
	leadingSign()
	// Trailing markers: "1.234,56-", "1.234,56 D", "1.234,56C".
	if n := len(s); n > 1 {
		switch s[n-1] {
		case '-', 'D', 'd':
			neg = !neg
			signs++
			s = strings.TrimSpace(s[:n-1])
		case '+', 'C', 'c':
			signs++
			s = strings.TrimSpace(s[:n-1])
		}
	}
	if signs > 1 {
		return fail("more than one sign")
	}
	if s == "" {
		return fail("no digits")
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isDigit(c) && c != '.' && c != ',' {
			return fail(fmt.Sprintf("unexpected character %q", rune(c)))
		}
	}
	intPart, frac, err := splitDecimal(s)
	if err != nil {
		return fail(err.Error())
	}
	var cents int64
	for i := 0; i < len(intPart); i++ {
		cents = cents*10 + int64(intPart[i]-'0')
		if cents > maxCents/100 {
			return fail("too large")
		}
	}
	cents *= 100
	switch len(frac) {
	case 1:
		cents += int64(frac[0]-'0') * 10
	case 2:
		cents += int64(frac[0]-'0')*10 + int64(frac[1]-'0')
	}
	if neg {
		cents = -cents
	}
	return cents, nil
}

// splitDecimal returns the integer digits (grouping removed) and the one or
// two fractional digits of an unsigned amount made of digits, '.' and ','.
func splitDecimal(s string) (intPart, frac string, err error) {
	lastDot, lastComma := strings.LastIndexByte(s, '.'), strings.LastIndexByte(s, ',')
	var dec, group byte
	switch {
	case lastDot < 0 && lastComma < 0:
		return s, "", nil
	case lastDot >= 0 && lastComma >= 0:
		if lastDot > lastComma {
			dec, group = '.', ','
		} else {
			dec, group = ',', '.'
		}
	default:
		sep := byte('.')
		if lastComma >= 0 {
			sep = ','
		}
		// One separator followed by one or two digits is the decimal one.
		if after := len(s) - strings.IndexByte(s, sep) - 1; strings.Count(s, string(sep)) == 1 && after >= 1 && after <= 2 {
			dec = sep
		} else {
			group = sep
		}
	}
	intPart = s
	if dec != 0 {
		i := strings.LastIndexByte(s, dec)
		intPart, frac = s[:i], s[i+1:]
		if frac == "" || len(frac) > 2 || strings.ContainsAny(frac, ".,") {
			return "", "", errors.New("want one or two digits after the decimal separator")
		}
		if strings.IndexByte(intPart, dec) >= 0 {
			return "", "", errors.New("more than one decimal separator")
		}
	}
	if intPart == "" {
		return "", "", errors.New("no digits before the decimal separator")
	}
	if group != 0 && strings.IndexByte(intPart, group) >= 0 {
		groups := strings.Split(intPart, string(group))
		if len(groups[0]) == 0 || len(groups[0]) > 3 {
			return "", "", errors.New("misplaced grouping separator")
		}
		for _, g := range groups[1:] {
			if len(g) != 3 {
				return "", "", errors.New("digit groups must have three digits")
			}
		}
		intPart = strings.Join(groups, "")
	}
	if strings.ContainsAny(intPart, ".,") {
		return "", "", errors.New("mixed separators")
	}
	return intPart, frac, nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// FormatBRL writes cents the Brazilian way: "R$ 1.234,56", "-R$ 0,05".
func FormatBRL(cents int64) string {
	var b strings.Builder
	if cents < 0 {
		b.WriteByte('-')
	}
	b.WriteString("R$ ")
	b.WriteString(groupDigits(abs(cents)/100, '.'))
	fmt.Fprintf(&b, ",%02d", abs(cents)%100)
	return b.String()
}

// FormatDecimal writes cents as a plain decimal with a dot: "-1234.56".
func FormatDecimal(cents int64) string {
	sign := ""
	if cents < 0 {
		sign = "-"
	}
	return fmt.Sprintf("%s%d.%02d", sign, abs(cents)/100, abs(cents)%100)
}

func abs(n int64) uint64 {
	if n < 0 {
		if n == math.MinInt64 {
			return uint64(math.MaxInt64) + 1
		}
		return uint64(-n)
	}
	return uint64(n)
}

func groupDigits(n uint64, sep byte) string {
	s := fmt.Sprint(n)
	if len(s) <= 3 {
		return s
	}
	var b strings.Builder
	first := len(s) % 3
	if first == 0 {
		first = 3
	}
	b.WriteString(s[:first])
	for i := first; i < len(s); i += 3 {
		b.WriteByte(sep)
		b.WriteString(s[i : i+3])
	}
	return b.String()
}
