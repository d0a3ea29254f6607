package main

import (
	"strings"
	"testing"
	"time"
)

func TestFormats(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{fmtCount(0), "0"},
		{fmtCount(999), "999"},
		{fmtCount(1000), "1,000"},
		{fmtCount(4285.6), "4,286"},
		{fmtCount(1234567), "1,234,567"},
		{fmtCount(-1234), "-1,234"},
		{fmtDur(812), "812 ns"},
		{fmtDur(6480), "6.48 µs"},
		{fmtDur(12_345_678), "12.3 ms"},
		{fmtDur(float64(1700 * time.Millisecond)), "1.70 s"},
		{fmtBytes(512), "512 B"},
		{fmtBytes(256 << 10), "256 KiB"},
		{fmtBytes(9.75 * (1 << 20)), "9.75 MiB"},
		{span([]float64{3, 1, 2}, fmtCount), "1–3"},
		{span([]float64{1000.2, 999.9}, fmtCount), "1,000"},
		{span(nil, fmtCount), ""},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func fakeRun(rps float64, p99 time.Duration, failed int) loadResult {
	return loadResult{Requests: int(rps) + failed, Failed: failed, Elapsed: time.Second, P50: p99 / 4, P99: p99}
}

func TestLoadRowAndRatio(t *testing.T) {
	kadu := []loadResult{fakeRun(4000, 12*time.Millisecond, 0), fakeRun(4400, 10*time.Millisecond, 0)}
	mcpgo := []loadResult{fakeRun(8000, 9*time.Millisecond, 0), fakeRun(8000, 10*time.Millisecond, 0)}

	r := loadRow("echo", kadu)
	if want := "**4,000–4,400 req/s**; p50 2.50–3.00 ms, p99 10.0–12.0 ms; 0 of 8,400 failed"; r.Result != want {
		t.Errorf("loadRow:\n got %s\nwant %s", r.Result, want)
	}
	// Round by round: 4000/8000 and 4400/8000.
	if got, want := ratio(kadu, mcpgo, "mcp-go"), "0.50–0.55× mcp-go"; got != want {
		t.Errorf("ratio %q, want %q", got, want)
	}
	if got := ratio(kadu, nil, "mcp-go"); got != "" {
		t.Errorf("ratio without a peer run %q, want empty", got)
	}
}

func TestLoadRowShowsFailures(t *testing.T) {
	bad := fakeRun(100, time.Millisecond, 7)
	bad.FirstFailure = "status 429: rate limited"
	r := loadRow("x", []loadResult{bad})
	if !strings.Contains(r.Result, "7 of 107 failed (first: status 429: rate limited)") {
		t.Errorf("a run with failures must say how many and the first: %s", r.Result)
	}
	if got := bad.RPS(); got != 100 {
		t.Errorf("RPS %v counts failed responses; want 100", got)
	}
}

func TestWriteTableKeepsCellsInTheirColumns(t *testing.T) {
	var b strings.Builder
	if err := writeTable(&b, []row{{What: "a | b", Result: "two\nlines"}}); err != nil {
		t.Fatal(err)
	}
	want := "| What | Result | vs peer |\n|---|---|---|\n| a \\| b | two lines | – |\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
