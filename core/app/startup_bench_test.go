//go:build unix

package app

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"github.com/kobana/kadu/core/config"
	"github.com/kobana/kadu/plugins/embedded"
)

// BenchmarkStartWarm measures what `kadu serve` does between its start and
// the first 200 from /readyz, in process: New (the store opened and at the
// latest migration, the signing keys, the four first-party bundles built
// into the binary compiled from a warm compilation cache, described and
// validated) and a /readyz that passes. The data directory and the cache
// survive between iterations, as they do between two starts of one
// replica (the cache is the one every test of the package shares); each
// iteration closes what it opened.
//
//	go tool task build:plugins
//	go test -run '^$' -bench StartWarm -benchtime 10x ./core/app
func BenchmarkStartWarm(b *testing.B) {
	cfg := config.Defaults()
	for name := range cfg.Plugins.Bundles {
		if embedded.Bundle(name) == nil {
			b.Skipf("built without the %s bundle: run go tool task build:plugins first", name)
		}
	}
	cfg.DataDir = b.TempDir()
	cfg.Plugins.CacheDir = sharedWasmCache(b)
	cfg.Plugins.Watch = false
	opts := Options{Version: "bench", Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))}
	start := func() {
		a, err := New(context.Background(), &cfg, opts)
		if err != nil {
			b.Fatal(err)
		}
		defer a.Close()
		rec := httptest.NewRecorder()
		a.AdminHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
		if rec.Code != http.StatusOK {
			b.Fatalf("/readyz = %d: %s", rec.Code, rec.Body)
		}
	}
	start() // fills the cache if need be, and migrates the database
	// CPU time tells the story on a busy machine, where wall time is mostly
	// waiting for a core: a start bound by the cores takes at least
	// cpu-ms/op divided by their number.
	cpu0 := cpuTime(b)
	b.ResetTimer()
	for b.Loop() {
		start()
	}
	b.ReportMetric(float64((cpuTime(b)-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
}

// cpuTime is the user and system CPU time of this process so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Skipf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
