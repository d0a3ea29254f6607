package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
)

// microPattern selects the in-process benchmarks of core/plugin the table
// shows: every case of every benchmark whose name matches, so cases other
// work adds show up without a change here.
const microPattern = "WarmCall|Instantiate"

// A microResult is one line of `go test -bench` output.
type microResult struct {
	Name    string   // without the -GOMAXPROCS suffix
	Units   []string // in the order printed
	Metrics map[string]float64
}

var procsSuffix = regexp.MustCompile(`-\d+$`)

// parseBench reads `go test -bench` output and returns its result lines in
// order; everything else (goos:, PASS, ok, logs) is skipped. A line that
// starts like a result but does not parse is an error: the table would
// silently miss it otherwise.
func parseBench(r io.Reader) ([]microResult, error) {
	var out []microResult
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		if _, err := strconv.ParseInt(f[1], 10, 64); err != nil {
			continue // "BenchmarkX" alone, as -v prints before a result, or a log line
		}
		if len(f)%2 != 0 {
			return nil, fmt.Errorf("benchmark line %q: values and units do not pair", sc.Text())
		}
		res := microResult{Name: procsSuffix.ReplaceAllString(f[0], ""), Metrics: map[string]float64{}}
		for i := 2; i < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return nil, fmt.Errorf("benchmark line %q: %q is not a number", sc.Text(), f[i])
			}
			unit := f[i+1]
			if _, dup := res.Metrics[unit]; !dup {
				res.Units = append(res.Units, unit)
			}
			res.Metrics[unit] = v
		}
		out = append(out, res)
	}
	return out, sc.Err()
}

// microRows makes one row per benchmark name (several -count runs of it
// become ranges), in the order the benchmarks ran.
func microRows(results []microResult) []row {
	var names []string
	byName := map[string][]microResult{}
	for _, r := range results {
		if _, seen := byName[r.Name]; !seen {
			names = append(names, r.Name)
		}
		byName[r.Name] = append(byName[r.Name], r)
	}
	rows := make([]row, 0, len(names))
	for _, name := range names {
		runs := byName[name]
		var parts []string
		for _, unit := range runs[0].Units {
			var vs []float64
			for _, r := range runs {
				if v, ok := r.Metrics[unit]; ok {
					vs = append(vs, v)
				}
			}
			parts = append(parts, fmtMetric(unit, vs))
		}
		rows = append(rows, row{What: "`" + name + "`", Result: strings.Join(parts, ", ")})
	}
	return rows
}

// fmtMetric formats the values of one unit as a range: durations per
// operation in µs or ms, counts with separators, anything else as printed.
func fmtMetric(unit string, vs []float64) string {
	switch unit {
	case "ns/op":
		return "**" + span(vs, fmtDur) + "**/op"
	case "B/op", "allocs/op":
		return span(vs, fmtCount) + " " + unit
	default:
		return span(vs, func(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }) + " " + unit
	}
}

// runMicro runs the core/plugin benchmarks in the repository and parses
// their output. benchtime and count come from the mode.
func runMicro(ctx context.Context, repo, benchtime string, count int) ([]microResult, error) {
	args := []string{"test", "-run", "^$", "-bench", microPattern, "-benchmem", "-count", strconv.Itoa(count)}
	if benchtime != "" {
		args = append(args, "-benchtime", benchtime)
	}
	args = append(args, "./core/plugin")
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = repo
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go %s: %w\n%s%s", strings.Join(args, " "), err, tail(stdout.String(), 20), tail(stderr.String(), 20))
	}
	res, err := parseBench(&stdout)
	if err != nil {
		return nil, err
	}
	if len(res) == 0 {
		return nil, fmt.Errorf("go %s printed no benchmark results:\n%s", strings.Join(args, " "), tail(stdout.String(), 20))
	}
	return res, nil
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n") + "\n"
}
