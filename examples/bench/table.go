package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A row of the printed table: what was measured, the result, and the
// result as a ratio to the peer where there is one.
type row struct {
	What   string
	Result string
	VsPeer string
}

// writeTable writes rows as a Markdown table.
func writeTable(w io.Writer, rows []row) error {
	var b strings.Builder
	b.WriteString("| What | Result | vs peer |\n|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", cell(r.What), cell(r.Result), cell(r.VsPeer))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// cell keeps a value from breaking the table: pipes escaped, newlines
// flattened, an empty cell shown as a dash.
func cell(s string) string {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
	if s == "" {
		return "–"
	}
	return s
}

// loadRow sums up the runs of one load target: req/s, p50, p99 (each a
// range over the runs) and the failed responses of all runs.
func loadRow(what string, runs []loadResult) row {
	if len(runs) == 0 {
		return row{What: what, Result: "not run"}
	}
	var rps, p50, p99 []float64
	failed, total := 0, 0
	for _, r := range runs {
		rps = append(rps, r.RPS())
		p50 = append(p50, float64(r.P50))
		p99 = append(p99, float64(r.P99))
		failed += r.Failed
		total += r.Requests
	}
	res := fmt.Sprintf("**%s req/s**; p50 %s, p99 %s; %s of %s failed", span(rps, fmtCount), span(p50, fmtDur),
		span(p99, fmtDur), fmtCount(float64(failed)), fmtCount(float64(total)))
	if f := firstFailure(runs); f != "" {
		res += " (first: " + f + ")"
	}
	return row{What: what, Result: res}
}

func firstFailure(runs []loadResult) string {
	for _, r := range runs {
		if r.FirstFailure != "" {
			return r.FirstFailure
		}
	}
	return ""
}

// ratio is a's req/s over b's, run by run (runs of the same round were
// made back to back), as a range: "0.61×" or "0.58–0.63×".
func ratio(a, b []loadResult, peer string) string {
	var rs []float64
	for i := range min(len(a), len(b)) {
		if b[i].RPS() > 0 {
			rs = append(rs, a[i].RPS()/b[i].RPS())
		}
	}
	if len(rs) == 0 {
		return ""
	}
	return span(rs, func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }) + "× " + peer
}

// span formats the smallest and largest of vs, "a" when they print the
// same, "a–b" otherwise.
func span(vs []float64, format func(float64) string) string {
	if len(vs) == 0 {
		return ""
	}
	lo, hi := format(slices.Min(vs)), format(slices.Max(vs))
	if lo == hi {
		return lo
	}
	// One unit for both ends: "2.50–3.00 ms", not "2.50 ms–3.00 ms".
	if i, j := strings.LastIndexByte(lo, ' '), strings.LastIndexByte(hi, ' '); i > 0 && j > 0 && lo[i:] == hi[j:] {
		return lo[:i] + "–" + hi
	}
	return lo + "–" + hi
}

// fmtCount formats a count with thousands separators, no decimals.
func fmtCount(v float64) string {
	s := strconv.FormatInt(int64(math.Round(v)), 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// fmtDur formats a duration (in nanoseconds) with three significant
// digits in the largest unit below it: 812 ns, 6.48 µs, 12.3 ms, 1.70 s.
func fmtDur(ns float64) string {
	d := time.Duration(ns)
	switch {
	case d < time.Microsecond:
		return strconv.FormatFloat(ns, 'f', 0, 64) + " ns"
	case d < time.Millisecond:
		return sig3(ns/1e3) + " µs"
	case d < time.Second:
		return sig3(ns/1e6) + " ms"
	default:
		return sig3(ns/1e9) + " s"
	}
}

// sig3 formats v (≥ 1) with three significant digits.
func sig3(v float64) string {
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
}

// fmtBytes formats a byte count in KiB or MiB (binary units, as the
// targets are written).
func fmtBytes(v float64) string {
	switch {
	case v >= 1<<20:
		return sig3(v/(1<<20)) + " MiB"
	case v >= 1<<10:
		return sig3(v/(1<<10)) + " KiB"
	default:
		return strconv.FormatFloat(v, 'f', 0, 64) + " B"
	}
}
