// Command bench measures Kadu against its peers on this machine and prints
// one Markdown table (docs/benchmarks.md explains each row):
//
//   - a stateless tools/call of a trivial echo tool: Kadu's echo bundle
//     (./echo, built with sdk/go) against the same tool in mcp-go and in the
//     official go-sdk (./peers), each under the same load, alternating;
//   - kadu_executions_get end to end on SQLite and on PostgreSQL;
//   - the warm-call and instantiate micro-benchmarks of core/plugin;
//   - `kadu serve` to ready, cold and warm, and the memory of a pooled
//     instance.
//
// Run it from the repository root as `go tool task bench` (full, for
// docs/benchmarks.md) or `go tool task bench -- --quick` (a smoke run, for
// CI: it checks the harness and prints the table, with no thresholds).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// groups of rows --only selects.
var allGroups = []string{"start", "echo", "sqlite", "postgres", "micro"}

type options struct {
	quick  bool
	kadu   string // kadu binary
	repo   string // repository root: micro-benchmarks, default binary
	dir    string // this harness's module (echo bundle, peers)
	out    string
	only   map[string]bool
	conns  int
	keep   bool
	d      time.Duration // overrides the mode's run length
	rounds int           // overrides the mode's rounds
}

// mode is what --quick changes: the length and number of runs.
type mode struct {
	name       string
	run        time.Duration // one load run
	warm       time.Duration // load before the first run of a target, not counted
	rounds     int           // runs of each target, alternating
	warmStarts int           // warm starts measured
	benchtime  string        // micro-benchmarks' -benchtime ("" = go test's 1s)
	count      int           // micro-benchmarks' -count
}

var (
	fullMode  = mode{name: "full", run: 10 * time.Second, warm: 2 * time.Second, rounds: 2, warmStarts: 3, count: 2}
	quickMode = mode{name: "quick", run: 1500 * time.Millisecond, warm: time.Second, rounds: 1, warmStarts: 1,
		benchtime: "200x", count: 1}
)

func main() {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	opts, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, log, opts, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		stop()
		os.Exit(1)
	}
}

func parseFlags(args []string) (options, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	var o options
	var only string
	fs.BoolVar(&o.quick, "quick", false, "short runs, one round: checks that the harness works (CI)")
	fs.StringVar(&o.kadu, "kadu", "", "kadu binary to measure (default <repo>/bin/kadu, which go tool task bench builds)")
	fs.StringVar(&o.repo, "repo", "", "repository root whose core/plugin micro-benchmarks run (default: the one around the working directory)")
	fs.StringVar(&o.out, "out", "", "also write the table to this file")
	fs.StringVar(&only, "only", "", "comma-separated groups of rows to run: "+strings.Join(allGroups, ","))
	fs.IntVar(&o.conns, "c", 16, "concurrent connections of the load, one request in flight each")
	fs.DurationVar(&o.d, "d", 0, "length of each load run (default 10s, 1.5s with --quick)")
	fs.IntVar(&o.rounds, "rounds", 0, "rounds of load runs, alternating the servers (default 2, 1 with --quick)")
	fs.BoolVar(&o.keep, "keep", false, "keep the work directory (server logs, configuration, data) and print where it is")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	o.only = map[string]bool{}
	for g := range strings.SplitSeq(only, ",") {
		if g = strings.TrimSpace(g); g == "" {
			continue
		}
		if !slices.Contains(allGroups, g) {
			return o, fmt.Errorf("--only: unknown group %q (groups: %s)", g, strings.Join(allGroups, ","))
		}
		o.only[g] = true
	}
	if len(o.only) == 0 {
		for _, g := range allGroups {
			o.only[g] = true
		}
	}
	if o.conns < 1 || o.d < 0 || o.rounds < 0 {
		return o, errors.New("-c must be at least 1, -d and -rounds not negative")
	}
	wd, err := os.Getwd()
	if err != nil {
		return o, err
	}
	if o.repo == "" {
		if o.repo, err = findRepo(wd); err != nil {
			return o, err
		}
	}
	if o.repo, err = filepath.Abs(o.repo); err != nil {
		return o, err
	}
	o.dir = wd
	if _, err := os.Stat(filepath.Join(wd, "echo", "main.go")); err != nil {
		o.dir = filepath.Join(o.repo, "examples", "bench")
	}
	if o.kadu == "" {
		o.kadu = filepath.Join(o.repo, "bin", "kadu")
	}
	if o.kadu, err = filepath.Abs(o.kadu); err != nil {
		return o, err
	}
	if _, err := os.Stat(o.kadu); err != nil {
		return o, fmt.Errorf("no kadu binary at %s (go tool task build makes one; go tool task bench runs it first): %w", o.kadu, err)
	}
	return o, nil
}

// run measures what opts selects and writes the table to stdout (and
// opts.out).
func run(ctx context.Context, log *slog.Logger, opts options, stdout io.Writer) error {
	m := fullMode
	if opts.quick {
		m = quickMode
	}
	if opts.d > 0 {
		m.run = opts.d
	}
	if opts.rounds > 0 {
		m.rounds = opts.rounds
	}
	work, err := os.MkdirTemp("", "kadu-bench-")
	if err != nil {
		return err
	}
	if opts.keep {
		log.Info("work directory kept", "dir", work)
	} else {
		defer os.RemoveAll(work)
	}
	ps := &procs{dir: work}
	defer ps.stopAll()

	b := &bench{log: log, opts: opts, mode: m, work: work, ps: ps, header: header(ctx, opts, m)}
	if err := b.measure(ctx); err != nil {
		return err
	}
	ps.stopAll() // the micro-benchmarks get the cores to themselves
	if opts.only["micro"] {
		log.Info("micro-benchmarks", "pattern", microPattern, "pkg", "./core/plugin")
		res, err := runMicro(ctx, opts.repo, m.benchtime, m.count)
		if err != nil {
			return err
		}
		b.micro = microRows(res)
	}

	var out strings.Builder
	out.WriteString(b.header + "\n")
	if err := writeTable(&out, b.rows()); err != nil {
		return err
	}
	if _, err := io.WriteString(stdout, out.String()); err != nil {
		return err
	}
	if opts.out != "" {
		if err := os.WriteFile(opts.out, []byte(out.String()), 0o644); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
	}
	return nil
}
