//go:build linux

package main

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkServeReady measures what an orchestrator waits for: from the
// start of `kadu serve` (the binary of go tool task build, its four
// first-party bundles built in) to the first 200 from /readyz on the admin
// address. The data directory is kept between starts, so every measured
// start finds the store migrated and the compiled bundles in
// <data_dir>/wasm-cache, as a restarted replica does; one start before the
// timer fills them. Reported: wall ms and the CPU ms the process spent
// until ready (on a busy machine the wall time is mostly waiting for a
// core; a start bound by CPU takes at least cpu-ms divided by the cores).
// Each start is bounded to a minute.
//
//	BENCH_KADU_BIN=bin/kadu go test -run '^$' -bench ServeReady -benchtime 5x ./core/cmd/kadu
//
// Without BENCH_KADU_BIN (not KADU_*: kadu reads those as configuration)
// the binary and its bundles are built first.
func BenchmarkServeReady(b *testing.B) {
	bin := os.Getenv("BENCH_KADU_BIN")
	if bin == "" {
		bin = buildKaduWithBundles(b)
	} else if abs, err := filepath.Abs(bin); err == nil {
		bin = abs
	}
	data := b.TempDir()
	start := func() (wall, cpu time.Duration) {
		admin := freeAddr(b)
		cmd := exec.Command(bin, "serve", "--data-dir", data, "--addr", freeAddr(b), "--admin-addr", admin,
			"--log-level", "warn")
		cmd.Dir = b.TempDir() // no config/kadu.yaml: the built-in defaults
		var stderr strings.Builder
		cmd.Stderr = &stderr
		t0 := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		defer func() {
			_ = cmd.Process.Signal(syscall.SIGINT)
			<-exited
		}()
		client := &http.Client{Timeout: time.Second}
		for time.Since(t0) < time.Minute {
			select {
			case err := <-exited:
				exited <- err // for the deferred wait
				b.Fatalf("kadu serve exited before ready (%v); stderr:\n%s", err, stderr.String())
			default:
			}
			resp, err := client.Get("http://" + admin + "/readyz")
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					return time.Since(t0), processCPU(b, cmd.Process.Pid)
				}
			}
			time.Sleep(2 * time.Millisecond)
		}
		b.Fatalf("not ready within a minute; stderr:\n%s", stderr.String())
		return 0, 0
	}
	start() // migrates the store, compiles the bundles into the cache
	b.ResetTimer()
	var wall, cpu time.Duration
	for b.Loop() {
		w, c := start()
		wall += w
		cpu += c
	}
	b.ReportMetric(float64(wall.Milliseconds())/float64(b.N), "ready-ms/op")
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
}

// processCPU is the user and system CPU time pid has used, from
// /proc/<pid>/stat (in clock ticks, 100 per second on Linux).
func processCPU(b *testing.B, pid int) time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	s := string(raw)
	// Fields after the command name, which is in parentheses: state is
	// the first, utime the 12th and stime the 13th.
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	var utime, stime int64
	if _, err := fmt.Sscan(f[11], &utime); err != nil {
		b.Fatal(err)
	}
	if _, err := fmt.Sscan(f[12], &stime); err != nil {
		b.Fatal(err)
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond
}
