package app

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kobana/kadu/core/config"
	"github.com/kobana/kadu/core/plugin"
	"github.com/kobana/kadu/sdk/go/kadu/kadutest"
)

// The hot-swap tests serve the product (the four first-party bundles) plus
// the test bundle "swap" from testdata/swapguest, built twice: v1 answers
// swap_version with "1.0.0", v2 with "2.0.0". They swap it the way an
// operator does: change the configuration the server reloads from, then
// POST /admin/plugins/reload on the admin listener.

// swapBuild is one build of the swap bundle.
type swapBuild struct {
	path, sha, version string
}

// buildSwap builds testdata/swapguest/<pkg>, which registers version.
func buildSwap(t testing.TB, pkg, version string) swapBuild {
	t.Helper()
	path := kadutest.BuildWasm(t, "testdata/swapguest/"+pkg)
	return swapBuild{path: path, sha: fileSHA256(t, path), version: version}
}

func fileSHA256(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// bundle is the plugins.bundles.swap entry that enables b.
func (b swapBuild) bundle() config.Bundle {
	return config.Bundle{Enabled: true, Path: b.path, SHA256: b.sha, Routes: []string{"GET /api/v1/usage"}}
}

// reloadable is the configuration a test server reads again on every
// reload (app.Options.ReloadConfig), as kadu serve rereads its file.
type reloadable struct {
	mu  sync.Mutex
	cfg config.Config // guarded by mu; its Bundles map is never shared
}

// setSwap makes b the swap bundle of the next reload.
func (r *reloadable) setSwap(b config.Bundle) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cfg.Plugins.Bundles = maps.Clone(r.cfg.Plugins.Bundles)
	r.cfg.Plugins.Bundles["swap"] = b
}

func (r *reloadable) load() (*config.Config, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.cfg
	c.Plugins.Bundles = maps.Clone(c.Plugins.Bundles)
	return &c, nil
}

// unlimitedRequests lifts the developer plan's requests_per_minute: load
// tests send many requests from few organisations, and the limit is not
// what they measure.
func unlimitedRequests(c *config.Config) {
	dev := c.Plans["developer"]
	dev.RequestsPerMinute = 1 << 30
	c.Plans["developer"] = dev
}

// startSwapServer serves the product on SQLite with the swap bundle at
// builds[0], reloading from the returned reloadable
// (Options.ReloadConfig, which POST /admin/plugins/reload needs).
//
// Each build is loaded once before the test reloads over HTTP, so that it
// is in the on-disk compilation cache: compiling a Go guest the first time
// takes over a minute under the race detector, longer than
// http.write_timeout lets an admin request run.
func startSwapServer(t *testing.T, builds ...swapBuild) (*testServer, *reloadable) {
	t.Helper()
	return startSwapServerWith(t, nil, builds...)
}

// startSwapServerWith is startSwapServer with tweak applied to the
// configuration last (it is also the configuration reloads read).
func startSwapServerWith(t *testing.T, tweak func(*config.Config), builds ...swapBuild) (*testServer, *reloadable) {
	t.Helper()
	rl := &reloadable{}
	srv := serveApp(t, func(c *config.Config) {
		useFirstPartyBundles(t, c)
		c.Plugins.Bundles["swap"] = builds[0].bundle()
		// Reloads come from the admin endpoint only: a watcher reloading on
		// its own would make the number of swaps the test's to guess.
		c.Plugins.Watch = false
		unlimitedRequests(c)
		if tweak != nil {
			tweak(c)
		}
		rl.cfg = *c
		rl.cfg.Plugins.Bundles = maps.Clone(c.Plugins.Bundles)
	}, Options{Version: "test", ReloadConfig: rl.load})
	for _, b := range append(builds[1:], builds[0]) {
		rl.setSwap(b.bundle())
		next, _ := rl.load()
		bundles, err := bundleConfigs(next)
		if err != nil {
			t.Fatal(err)
		}
		if err := srv.app.plugins.Reload(context.Background(), bundles); err != nil {
			t.Fatalf("loading swap %s: %v", b.version, err)
		}
	}
	return srv, rl
}

// adminBody is what /admin/plugins and /admin/plugins/reload answer.
type adminBody struct {
	Bundles []plugin.BundleStatus `json:"bundles"`
	Memory  plugin.MemoryStatus   `json:"memory"`
	Error   string                `json:"error"`
}

// swapStatus returns the entries named swap.
func (b adminBody) swapStatus() []plugin.BundleStatus {
	var out []plugin.BundleStatus
	for _, s := range b.Bundles {
		if s.Name == "swap" {
			out = append(out, s)
		}
	}
	return out
}

func adminDo(t testing.TB, srv *testServer, method, path string) (int, adminBody) {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+srv.cfg.AdminAddr+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	var body adminBody
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("%s %s: %d, body not JSON: %v", method, path, resp.StatusCode, err)
	}
	return resp.StatusCode, body
}

// reloadTo points the configuration at b and reloads; it fails t unless
// the reload succeeds and a new call is answered by b. It returns how long
// the reload took.
func reloadTo(t testing.TB, srv *testServer, rl *reloadable, b swapBuild, caller *swapCaller) time.Duration {
	t.Helper()
	rl.setSwap(b.bundle())
	start := time.Now()
	if status, body := adminDo(t, srv, http.MethodPost, "/admin/plugins/reload"); status != http.StatusOK {
		t.Fatalf("reload to %s: %d %+v", b.version, status, body)
	}
	took := time.Since(start)
	if got, err := caller.call(context.Background()); err != nil || got != b.version {
		t.Fatalf("first call after the reload to %s = %q, %v", b.version, got, err)
	}
	return took
}

// swapCaller calls swap_version over HTTP as one organisation.
type swapCaller struct {
	url, token string
	client     *http.Client
}

func newSwapCaller(t testing.TB, srv *testServer, client *http.Client, org string) *swapCaller {
	t.Helper()
	token, err := MintDevToken(srv.cfg, TokenOptions{OrgID: org})
	if err != nil {
		t.Fatal(err)
	}
	return &swapCaller{url: srv.cfg.MCPURL(), token: token, client: client}
}

const swapCallBody = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"swap_version","arguments":{},` +
	`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`

// call returns the version that answered, or an error saying what a client
// would have seen instead: a transport error, a status other than 200, a
// JSON-RPC error or an isError result. Safe to call from any goroutine.
func (c *swapCaller) call(ctx context.Context) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, strings.NewReader(swapCallBody))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "swap_version")
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", fmt.Errorf("reading the response: %w", err)
	}
	var body struct {
		Result *struct {
			IsError           bool `json:"isError"`
			StructuredContent struct {
				Version string `json:"version"`
				Plan    string `json:"plan"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(raw, &body) != nil || body.Result == nil || body.Result.IsError ||
		body.Result.StructuredContent.Version == "" || body.Result.StructuredContent.Plan == "" {
		return "", fmt.Errorf("status %d: %s", resp.StatusCode, raw)
	}
	return body.Result.StructuredContent.Version, nil
}

// load keeps callers busy calling swap_version until stop.
type load struct {
	calls    atomic.Int64
	mu       sync.Mutex
	seen     map[string]int // guarded by mu: answers by version
	failures []error        // guarded by mu
	cancel   context.CancelFunc
	wg       sync.WaitGroup
}

// startLoad starts n goroutines calling swap_version, spread over callers.
// They stop at stop, or when t ends.
func startLoad(t testing.TB, n int, callers []*swapCaller) *load {
	ctx, cancel := context.WithCancel(context.Background())
	l := &load{seen: map[string]int{}, cancel: cancel}
	t.Cleanup(func() { l.stop() })
	for g := range n {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			c := callers[g%len(callers)]
			for ctx.Err() == nil {
				v, err := c.call(ctx)
				if ctx.Err() != nil {
					return // cut off by stop, not by the server
				}
				l.calls.Add(1)
				l.mu.Lock()
				if err != nil {
					l.failures = append(l.failures, err)
				} else {
					l.seen[v]++
				}
				l.mu.Unlock()
			}
		}()
	}
	return l
}

// waitCalls waits until the load has made n more calls, or fails t after a
// generous bound (the server has stopped answering).
func (l *load) waitCalls(t testing.TB, n int64) {
	t.Helper()
	want := l.calls.Load() + n
	deadline := time.Now().Add(30 * time.Second)
	for l.calls.Load() < want {
		if time.Now().After(deadline) {
			t.Fatalf("the load made %d calls in 30 s, want %d", l.calls.Load(), want)
		}
		time.Sleep(time.Millisecond)
	}
}

// stop ends the load and returns the answers by version and the failures.
func (l *load) stop() (map[string]int, []error) {
	l.cancel()
	l.wg.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.seen, l.failures
}

// reportFailures fails t with the first few failed calls and what the
// server logged at warning level and above, which says why.
func reportFailures(t testing.TB, srv *testServer, when string, failures []error) {
	t.Helper()
	if len(failures) == 0 {
		return
	}
	for i, err := range failures {
		if i == 5 {
			t.Errorf("… and %d more", len(failures)-i)
			break
		}
		t.Errorf("call failed %s: %v", when, err)
	}
	for _, line := range strings.Split(srv.logs.String(), "\n") {
		if strings.Contains(line, `"level":"ERROR"`) || strings.Contains(line, `"level":"WARN"`) {
			t.Logf("server log: %s", line)
		}
	}
}

// loopbackClient keeps a connection per caller goroutine alive, so the load
// measures the server rather than TCP handshakes.
func loopbackClient(conns int) *http.Client {
	return &http.Client{
		Timeout:   30 * time.Second,
		Transport: &http.Transport{MaxIdleConns: conns, MaxIdleConnsPerHost: conns},
	}
}

// TestHotSwapOverHTTP swaps the swap bundle between two versions through
// the admin endpoint while clients call it over HTTP, then tries to load a
// corrupt and a mis-pinned build: no call may fail, both versions must
// answer, and a refused build must leave the loaded version serving.
func TestHotSwapOverHTTP(t *testing.T) {
	v1, v2 := buildSwap(t, "v1", "1.0.0"), buildSwap(t, "v2", "2.0.0")
	srv, rl := startSwapServer(t, v1, v2)
	const callers = 4
	client := loopbackClient(callers)
	orgs := []*swapCaller{newSwapCaller(t, srv, client, "org_swap_a"), newSwapCaller(t, srv, client, "org_swap_b")}
	if got, err := orgs[0].call(context.Background()); err != nil || got != v1.version {
		t.Fatalf("swap_version before any reload = %q, %v; want %s", got, err, v1.version)
	}

	t.Run("swaps under load", func(t *testing.T) {
		// Run the load for at least 3 s and at least 8 swaps, each after the
		// callers have made a few calls on the version before it.
		const minSwaps, minLoad = 8, 3 * time.Second
		l := startLoad(t, callers, orgs)
		start := time.Now()
		swaps, slowest := 0, time.Duration(0)
		for swaps < minSwaps || time.Since(start) < minLoad {
			l.waitCalls(t, 2*callers)
			next := v2
			if swaps%2 == 1 {
				next = v1
			}
			slowest = max(slowest, reloadTo(t, srv, rl, next, orgs[1]))
			swaps++
		}
		l.waitCalls(t, 2*callers)
		elapsed := time.Since(start)
		seen, failures := l.stop()
		reportFailures(t, srv, "during hot swap", failures)
		if len(seen) != 2 || seen[v1.version] == 0 || seen[v2.version] == 0 {
			t.Errorf("versions that answered = %v, want both %s and %s and no other", seen, v1.version, v2.version)
		}
		t.Logf("%d calls in %s (%.0f/s) from %d goroutines across %d swaps (slowest reload %s), %d failed: %v",
			l.calls.Load(), elapsed.Round(time.Millisecond), float64(l.calls.Load())/elapsed.Seconds(), callers, swaps,
			slowest.Round(time.Millisecond), len(failures), seen)
		// v1 serves the subtests below.
		reloadTo(t, srv, rl, v1, orgs[0])
	})

	// A build that is refused, tried while the load runs on v1.
	corrupt := filepath.Join(t.TempDir(), "swap-corrupt.wasm")
	whole, err := os.ReadFile(v2.path)
	if err != nil {
		t.Fatal(err)
	}
	// A copy cut short, as a half-finished deploy leaves it; the pin is
	// its own, so only the module itself is wrong.
	if err := os.WriteFile(corrupt, whole[:len(whole)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	refused := []struct {
		name      string
		bundle    config.Bundle
		wantError string // in the reload's error and in last_error
	}{
		{
			name:      "corrupt module",
			bundle:    swapBuild{path: corrupt, sha: fileSHA256(t, corrupt)}.bundle(),
			wantError: "compiling " + corrupt,
		},
		{
			name:      "pin of another build",
			bundle:    config.Bundle{Enabled: true, Path: v2.path, SHA256: v1.sha, Routes: []string{"GET /api/v1/usage"}},
			wantError: "sha256 mismatch for " + v2.path,
		},
	}
	for _, tt := range refused {
		t.Run("refuses "+tt.name, func(t *testing.T) {
			l := startLoad(t, callers, orgs)
			l.waitCalls(t, 2*callers)
			rl.setSwap(tt.bundle)
			status, body := adminDo(t, srv, http.MethodPost, "/admin/plugins/reload")
			if status != http.StatusUnprocessableEntity || !strings.Contains(body.Error, `bundle "swap"`) || !strings.Contains(body.Error, tt.wantError) {
				t.Errorf("reload: %d error %q; want 422 naming bundle \"swap\" and %q", status, body.Error, tt.wantError)
			}
			l.waitCalls(t, 2*callers)
			seen, failures := l.stop()
			reportFailures(t, srv, "around the refused reload", failures)
			if len(seen) != 1 || seen[v1.version] == 0 {
				t.Errorf("versions that answered = %v, want only %s", seen, v1.version)
			}
			if got, err := orgs[0].call(context.Background()); err != nil || got != v1.version {
				t.Errorf("swap_version after the refused reload = %q, %v; want %s", got, err, v1.version)
			}
			_, list := adminDo(t, srv, http.MethodGet, "/admin/plugins")
			st := list.swapStatus()
			if len(st) != 1 || st[0].Version != v1.version || st[0].SHA256 != v1.sha || st[0].State != plugin.StateLoaded ||
				!strings.Contains(st[0].LastError, tt.wantError) {
				t.Errorf("GET /admin/plugins swap = %+v; want %s loaded with last_error %q", st, v1.version, tt.wantError)
			}
		})
	}

	t.Run("a good reload clears last_error", func(t *testing.T) {
		reloadTo(t, srv, rl, v1, orgs[0])
		_, list := adminDo(t, srv, http.MethodGet, "/admin/plugins")
		if st := list.swapStatus(); len(st) != 1 || st[0].LastError != "" || st[0].Version != v1.version {
			t.Errorf("GET /admin/plugins swap = %+v; want %s with no last_error", st, v1.version)
		}
	})
}

// TestReloadLoopOverHTTPDoesNotLeak reloads the swap bundle 30 times,
// alternating versions and calling it from two organisations after each
// reload (so each version has pooled instances when it is retired), and
// checks that the replaced versions are freed: the heap and the executable
// mappings that hold compiled code return to where they were.
//
// It is a memory test, not a race test: under the race detector it takes
// three to five times as long (32 s against 9 s on a quiet two-core
// machine; 632 s against 136 s on a loaded one, where it alone outlasted
// ten minutes) and the detector's own bookkeeping moves the heap. `go tool task test` runs it without -race, next to
// TestPluginMemoryBudgetOverHTTP; TestHotSwapOverHTTP covers reloads under
// concurrent calls with the race detector.
func TestReloadLoopOverHTTPDoesNotLeak(t *testing.T) {
	if raceEnabled {
		t.Skip("a memory test: run without -race (go tool task test does)")
	}
	builds := []swapBuild{buildSwap(t, "v1", "1.0.0"), buildSwap(t, "v2", "2.0.0")}
	srv, rl := startSwapServer(t, builds...)
	client := loopbackClient(2)
	orgs := []*swapCaller{newSwapCaller(t, srv, client, "org_leak_a"), newSwapCaller(t, srv, client, "org_leak_b")}
	cycle := func(i int) {
		b := builds[i%2]
		reloadTo(t, srv, rl, b, orgs[0])
		for _, c := range orgs {
			if got, err := c.call(context.Background()); err != nil || got != b.version {
				t.Fatalf("reload %d: swap_version = %q, %v; want %s", i, got, err, b.version)
			}
		}
	}
	for i := range 4 { // warm up: compilation cache, pools, allocator, SQLite
		cycle(i + 1)
	}
	heapBefore, codeBefore := settledMemory()

	const reloads = 30
	for i := range reloads {
		cycle(i + 1)
	}
	// Each Go guest instance holds several MiB of linear memory on the Go
	// heap: a leaked instance or runtime per reload would show as hundreds
	// of MiB over 30 reloads.
	//
	// Runtimes that share a compilation cache share the compiled code of a
	// module, so a leaked runtime whose instances were freed still keeps
	// the other version's code (about 17 MiB) mapped. Small host-function
	// trampolines come and go, hence the slack.
	const heapBound, codeBound = 32 << 20, 4 << 20
	grown := func(heap uint64, code int64) bool {
		return heap > heapBefore+heapBound || codeBefore >= 0 && code > codeBefore+codeBound
	}
	// The last replaced version is closed by a goroutine once its calls
	// have drained, and wazero unmaps compiled code from a finalizer: give
	// both a bounded while.
	heapAfter, codeAfter := heapInuse(), execMappedBytes()
	for deadline := time.Now().Add(10 * time.Second); grown(heapAfter, codeAfter) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		heapAfter, codeAfter = heapInuse(), execMappedBytes()
	}
	t.Logf("after %d reloads: HeapInuse %d → %d MiB (bound +%d MiB), executable code mapped %d → %d MiB (bound +%d MiB)",
		reloads, heapBefore>>20, heapAfter>>20, heapBound>>20, codeBefore>>20, codeAfter>>20, codeBound>>20)
	if heapAfter > heapBefore+heapBound {
		t.Errorf("HeapInuse grew from %d to %d MiB over %d reloads", heapBefore>>20, heapAfter>>20, reloads)
	}
	if codeBefore >= 0 && codeAfter > codeBefore+codeBound {
		t.Errorf("executable code mapped grew from %d to %d MiB over %d reloads: replaced versions' compiled modules are still mapped",
			codeBefore>>20, codeAfter>>20, reloads)
	}

	_, list := adminDo(t, srv, http.MethodGet, "/admin/plugins")
	want := builds[reloads%2]
	if st := list.swapStatus(); len(st) != 1 || st[0].Version != want.version || st[0].SHA256 != want.sha ||
		st[0].State != plugin.StateLoaded || st[0].LastError != "" {
		t.Errorf("GET /admin/plugins swap = %+v; want one entry, %s loaded", st, want.version)
	}
	if n := len(list.Bundles); n != 5 {
		t.Errorf("GET /admin/plugins lists %d bundles, want 5 (the four first-party bundles and swap)", n)
	}
}

// settledMemory returns heapInuse and execMappedBytes once the version the
// last reload replaced is gone: when the mapped code stops shrinking (or
// after a second).
func settledMemory() (uint64, int64) {
	heap, code := heapInuse(), execMappedBytes()
	for range 50 {
		time.Sleep(20 * time.Millisecond)
		h, c := heapInuse(), execMappedBytes()
		if c >= code {
			return h, c
		}
		heap, code = h, c
	}
	return heap, code
}

func heapInuse() uint64 {
	var m runtime.MemStats
	for range 3 {
		runtime.GC()
	}
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// execMappedBytes adds up the process's anonymous executable mappings,
// where wazero keeps compiled modules (a compiled Go guest takes tens of
// MiB); -1 where /proc/self/maps is unreadable.
func execMappedBytes() int64 {
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return -1
	}
	defer f.Close()
	var n int64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// address perms offset dev inode [path]; anonymous: no path
		fields := strings.Fields(sc.Text())
		if len(fields) != 5 || len(fields[1]) != 4 || fields[1][2] != 'x' {
			continue
		}
		lo, hi, ok := strings.Cut(fields[0], "-")
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if !ok || err1 != nil || err2 != nil {
			return -1
		}
		n += int64(end - start)
	}
	if sc.Err() != nil {
		return -1
	}
	return n
}
