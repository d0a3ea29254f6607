package statement

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ErrDate is wrapped by every error ParseDate returns.
var ErrDate = errors.New("invalid date")

// Date is a civil date (no time, no zone) stored as days since 1970-01-01.
// Its text form, in JSON too, is ISO 8601 "2006-01-02".
type Date int32

// NewDate returns the date y-m-d and whether it exists (and lies in the
// years 1900–2199, the range a bank statement can hold).
func NewDate(y int, m time.Month, d int) (Date, bool) {
	if y < 1900 || y > 2199 || m < 1 || m > 12 || d < 1 || d > 31 {
		return 0, false
	}
	t := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	if t.Day() != d || t.Month() != m {
		return 0, false // 31/02 and the like
	}
	return Date(t.Unix() / 86400), true
}

// Time returns the date at midnight UTC.
func (d Date) Time() time.Time { return time.Unix(int64(d)*86400, 0).UTC() }

// String returns the date as "2006-01-02".
func (d Date) String() string { return d.Time().Format(time.DateOnly) }

// MarshalText implements encoding.TextMarshaler.
func (d Date) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler; it accepts only
// "2006-01-02".
func (d *Date) UnmarshalText(b []byte) error {
	t, err := time.Parse(time.DateOnly, string(b))
	if err != nil {
		return fmt.Errorf("%w %q: want YYYY-MM-DD", ErrDate, b)
	}
	v, ok := NewDate(t.Year(), t.Month(), t.Day())
	if !ok {
		return fmt.Errorf("%w %q: out of range", ErrDate, b)
	}
	*d = v
	return nil
}

// ParseDate reads the date forms Brazilian bank exports use: "dd/mm/yyyy",
// "dd/mm/yy" (20yy), "dd-mm-yyyy", "dd.mm.yyyy" (day and month may have one
// digit), ISO "yyyy-mm-dd" and "yyyy/mm/dd", each optionally followed by a
// time ("2026-01-05T10:00:00-03:00", "05/01/2026 10:00"), which is ignored.
// Month-first (US) dates are not accepted: "01/13/2026" is an error.
func ParseDate(s string) (Date, error) {
	orig := s
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, ' '); i >= 0 {
		s = s[:i]
	}
	if len(s) > 10 && (s[10] == 'T' || s[10] == 't') {
		s = s[:10]
	}
	fail := func(why string) (Date, error) { return 0, fmt.Errorf("%w %q: %s", ErrDate, orig, why) }
	var sep byte
	for _, c := range []byte{'/', '-', '.'} {
		if strings.IndexByte(s, c) >= 0 {
			sep = c
			break
		}
	}
	if sep == 0 {
		return fail("want dd/mm/yyyy or yyyy-mm-dd")
	}
	p0, rest, _ := strings.Cut(s, string(sep))
	p1, p2, ok := strings.Cut(rest, string(sep))
	if !ok || strings.IndexByte(p2, sep) >= 0 {
		return fail("want three parts")
	}
	parts := [3]string{p0, p1, p2} // not strings.Split: one call per row, no allocation
	nums := [3]int{}
	for i, p := range parts {
		if p == "" || len(p) > 4 {
			return fail("want dd/mm/yyyy or yyyy-mm-dd")
		}
		n, err := strconv.Atoi(p)
		if err != nil || p[0] == '+' || p[0] == '-' {
			return fail("not a number")
		}
		nums[i] = n
	}
	var y, m, d int
	switch {
	case len(parts[0]) == 4 && len(parts[1]) <= 2 && len(parts[2]) <= 2:
		y, m, d = nums[0], nums[1], nums[2]
	case len(parts[0]) <= 2 && len(parts[1]) <= 2 && len(parts[2]) == 4:
		d, m, y = nums[0], nums[1], nums[2]
	case len(parts[0]) <= 2 && len(parts[1]) <= 2 && len(parts[2]) == 2:
		d, m, y = nums[0], nums[1], 2000+nums[2]
	default:
		return fail("want dd/mm/yyyy or yyyy-mm-dd")
	}
	v, ok := NewDate(y, time.Month(m), d)
	if !ok {
		return fail("no such day")
	}
	return v, nil
}
