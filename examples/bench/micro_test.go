package main

import (
	"strings"
	"testing"
)

const benchOutput = `goos: linux
goarch: amd64
pkg: github.com/kobana/kadu/core/plugin
cpu: AMD EPYC
BenchmarkWarmCall/raw/entry
BenchmarkWarmCall/raw/entry-2         	  185452	      6480 ns/op	    1056 B/op	      18 allocs/op
BenchmarkWarmCall/go-json/catalog-2   	    3000	    401000 ns/op	    5813 B/op	      84 allocs/op
BenchmarkInstantiate-2                	      50	  31895085 ns/op	   7.6 MB/instance	 1409644 B/op	   43506 allocs/op
    bench_test.go:80: a log line that mentions BenchmarkInstantiate-2 in passing
BenchmarkWarmCall/raw/entry-2         	  190000	      6800 ns/op	    1056 B/op	      18 allocs/op
PASS
ok  	github.com/kobana/kadu/core/plugin	12.981s
`

func TestParseBench(t *testing.T) {
	res, err := parseBench(strings.NewReader(benchOutput))
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 4 {
		t.Fatalf("got %d results, want 4: %+v", len(res), res)
	}
	inst := res[2]
	if inst.Name != "BenchmarkInstantiate" {
		t.Errorf("name %q: the -GOMAXPROCS suffix must go", inst.Name)
	}
	if got := strings.Join(inst.Units, " "); got != "ns/op MB/instance B/op allocs/op" {
		t.Errorf("units %q, want them in printed order, custom ones included", got)
	}
	if inst.Metrics["MB/instance"] != 7.6 || inst.Metrics["allocs/op"] != 43506 {
		t.Errorf("metrics %v", inst.Metrics)
	}
}

func TestParseBenchRefusesAMangledResult(t *testing.T) {
	for _, line := range []string{
		"BenchmarkX-2 100 6480 ns/op 1056",      // a value without its unit
		"BenchmarkX-2 100 fast ns/op",           // not a number
		"BenchmarkX-2 100 6480 ns/op 12 B/op x", // odd fields
	} {
		if _, err := parseBench(strings.NewReader(line + "\n")); err == nil {
			t.Errorf("%q parsed; a result the table cannot show must fail the run", line)
		}
	}
}

func TestMicroRowsGroupCountsIntoRanges(t *testing.T) {
	res, err := parseBench(strings.NewReader(benchOutput))
	if err != nil {
		t.Fatal(err)
	}
	rows := microRows(res)
	if len(rows) != 3 {
		t.Fatalf("got %d rows, want one per benchmark: %+v", len(rows), rows)
	}
	want := []row{
		{What: "`BenchmarkWarmCall/raw/entry`", Result: "**6.48–6.80 µs**/op, 1,056 B/op, 18 allocs/op"},
		{What: "`BenchmarkWarmCall/go-json/catalog`", Result: "**401 µs**/op, 5,813 B/op, 84 allocs/op"},
		{What: "`BenchmarkInstantiate`", Result: "**31.9 ms**/op, 7.6 MB/instance, 1,409,644 B/op, 43,506 allocs/op"},
	}
	for i, w := range want {
		if rows[i] != w {
			t.Errorf("row %d:\n got %+v\nwant %+v", i, rows[i], w)
		}
	}
}

func FuzzParseBench(f *testing.F) {
	f.Add(benchOutput)
	f.Add("BenchmarkX-2 1 2 ns/op\n")
	f.Add("Benchmark 1\n")
	f.Fuzz(func(t *testing.T, s string) {
		res, err := parseBench(strings.NewReader(s))
		if err != nil {
			return
		}
		for _, r := range res {
			if len(r.Units) != len(r.Metrics) {
				t.Fatalf("units %v and metrics %v disagree", r.Units, r.Metrics)
			}
			_ = microRows([]microResult{r})
		}
	})
}
