package plugin

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"weak"

	"github.com/kobana/kadu/core/auth"
)

// TestHammerHotSwap calls a bundle from several goroutines while Reload
// swaps it between two versions: no call may fail, and every answer comes
// from one of the two versions.
func TestHammerHotSwap(t *testing.T) {
	v1, v2 := echoV(t, "1.0.0"), echoV(t, "2.0.0")
	e := newEnv(t, nil, v1)
	var (
		stop     = make(chan struct{})
		wg       sync.WaitGroup
		calls    atomic.Int64
		mu       sync.Mutex
		seen     = map[string]int{}
		failures []error
	)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			org := fmt.Sprint("org_", g%3)
			for {
				select {
				case <-stop:
					return
				default:
				}
				res, err := e.call(t, org, "echo", `{"text":"x"}`)
				calls.Add(1)
				mu.Lock()
				if err != nil {
					failures = append(failures, err)
				} else {
					seen[structured(t, res)["version"].(string)]++
				}
				mu.Unlock()
			}
		}()
	}
	const swaps = 10
	for i := range swaps {
		cfg := v1
		if i%2 == 0 {
			cfg = v2
		}
		start := time.Now()
		if err := e.r.Reload(context.Background(), []BundleConfig{cfg}); err != nil {
			t.Fatalf("reload %d: %v", i, err)
		}
		if d := time.Since(start); testing.Verbose() {
			t.Logf("reload %d took %s", i, d)
		}
		// Let callers run on each version before the next swap.
		for n := calls.Load(); calls.Load() < n+6; {
			time.Sleep(time.Millisecond)
		}
	}
	close(stop)
	wg.Wait()
	for _, err := range failures {
		t.Errorf("call failed during hot swap: %v", err)
	}
	if len(seen) != 2 || seen["1.0.0"] == 0 || seen["2.0.0"] == 0 {
		t.Fatalf("versions seen = %v, want only 1.0.0 and 2.0.0, both", seen)
	}
	e.r.drains.Wait()
	if n := e.r.runtimes.Load(); n != 1 {
		t.Fatalf("%d runtimes open after %d swaps, want 1", n, swaps)
	}
	t.Logf("%d calls across %d swaps: %v", calls.Load(), swaps, seen)
}

// TestReloadLoopDoesNotLeak swaps versions many times, each serving calls,
// and checks that retired versions are closed and the heap stays flat.
func TestReloadLoopDoesNotLeak(t *testing.T) {
	v1, v2 := echoV(t, "1.0.0"), echoV(t, "2.0.0")
	e := newEnv(t, nil, v1)
	swap := func(i int) *version {
		cfg := v1
		if i%2 == 0 {
			cfg = v2
		}
		if err := e.r.Reload(context.Background(), []BundleConfig{cfg}); err != nil {
			t.Fatalf("reload %d: %v", i, err)
		}
		for _, org := range []string{"org_a", "org_b"} {
			if _, err := e.call(t, org, "echo", `{"text":"x"}`); err != nil {
				t.Fatalf("call after reload %d: %v", i, err)
			}
		}
		return e.r.snap.Load().byName["echo"]
	}
	for i := range 4 { // warm up: caches, pools, the allocator
		swap(i)
	}
	e.r.drains.Wait()
	before := heapInUse()
	// Weak pointers, so the test itself does not keep retired versions
	// (and their compiled modules) alive.
	var versions []weak.Pointer[version]
	const reloads = 16
	for i := range reloads {
		versions = append(versions, weak.Make(swap(i)))
	}
	e.r.drains.Wait()
	after := heapInUse()
	for i, v := range versions[:len(versions)-1] {
		if v.Value() != nil {
			t.Fatalf("retired version %d is still reachable after its drain", i)
		}
	}
	if n := e.r.runtimes.Load(); n != 1 {
		t.Fatalf("%d runtimes open after %d reloads, want 1", n, reloads)
	}
	// Each Go guest instance holds several MiB of linear memory on the Go
	// heap; leaking one instance or runtime per reload would show as
	// hundreds of MiB here.
	const bound = 32 << 20
	t.Logf("HeapInuse %d MiB before, %d MiB after %d reloads", before>>20, after>>20, reloads)
	if after > before+bound {
		t.Fatalf("HeapInuse grew from %d to %d MiB over %d reloads", before>>20, after>>20, reloads)
	}
}

func heapInUse() uint64 {
	var m runtime.MemStats
	for range 3 {
		runtime.GC()
	}
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// blockingAPI holds every api() call until released, to keep a call in
// flight across a reload.
func blockingAPI(e *env) (entered <-chan struct{}, release func()) {
	in, out := make(chan struct{}, 1), make(chan struct{})
	e.api.handler = func(*auth.Principal, string, string, []byte) (int, []byte) {
		in <- struct{}{}
		<-out
		return 200, []byte(`{}`)
	}
	return in, func() { close(out) }
}

func TestInFlightCallFinishesOnItsVersion(t *testing.T) {
	e := newEnv(t, nil, echoV(t, "1.0.0"))
	entered, release := blockingAPI(e)
	old := e.r.snap.Load().byName["echo"]
	done := make(chan error)
	go func() {
		_, err := e.call(t, "org_a", "fetch", `{"paths":["/api/v1/tasks"]}`)
		done <- err
	}()
	<-entered
	if err := e.r.Reload(context.Background(), []BundleConfig{echoV(t, "2.0.0")}); err != nil {
		t.Fatal(err)
	}
	res, err := e.call(t, "org_b", "echo", `{"text":"x"}`)
	if err != nil || structured(t, res)["version"] != "2.0.0" {
		t.Fatalf("a new call after the reload = %v, %v; want version 2.0.0", res, err)
	}
	if old.closed.Load() {
		t.Fatal("the old version was closed under a call in flight")
	}
	release()
	if err := <-done; err != nil {
		t.Fatalf("the in-flight call failed: %v", err)
	}
	e.r.drains.Wait()
	if !old.closed.Load() {
		t.Fatal("the old version was not closed once its call returned")
	}
}

func TestDrainIsBounded(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.DrainTimeout = 50 * time.Millisecond }, echoV(t, "1.0.0"))
	entered, release := blockingAPI(e)
	old := e.r.snap.Load().byName["echo"]
	done := make(chan error)
	go func() {
		_, err := e.call(t, "org_a", "fetch", `{"paths":["/api/v1/tasks"]}`)
		done <- err
	}()
	<-entered
	if err := e.r.Reload(context.Background(), []BundleConfig{echoV(t, "2.0.0")}); err != nil {
		t.Fatal(err)
	}
	e.r.drains.Wait() // the drain bound passes while the call is still blocked
	if !old.closed.Load() {
		t.Fatal("the old version outlived its drain bound")
	}
	release()
	if err := <-done; err == nil {
		t.Fatal("a call on a version closed under it succeeded")
	}
}

func TestCloseWaitsThenGivesUp(t *testing.T) {
	e := newEnv(t, nil, echoV(t, "1.0.0"))
	entered, release := blockingAPI(e)
	done := make(chan error)
	go func() {
		_, err := e.call(t, "org_a", "fetch", `{"paths":["/api/v1/tasks"]}`)
		done <- err
	}()
	<-entered
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the shutdown grace period is over
	if err := e.r.Close(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Close = %v, want the context's error", err)
	}
	if n := e.r.runtimes.Load(); n != 0 {
		t.Fatalf("%d runtimes open after Close", n)
	}
	release()
	if err := <-done; err == nil {
		t.Fatal("a call cut off by Close succeeded")
	}
	if _, err := e.call(t, "org_a", "echo", `{"text":"x"}`); !errors.Is(err, ErrClosed) {
		t.Fatalf("call after Close = %v, want ErrClosed", err)
	}
	if _, err := e.r.Tools(context.Background(), principal("org_a")); !errors.Is(err, ErrClosed) {
		t.Fatalf("Tools after Close = %v, want ErrClosed", err)
	}
	if err := e.r.Reload(context.Background(), nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("Reload after Close = %v, want ErrClosed", err)
	}
}
