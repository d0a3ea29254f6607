package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kobana/kadu/core/store/pgtest"
)

// serveProcess starts `bin args…` (a `kadu serve` with --admin-addr) in
// dir with env, waits until its admin listener answers /readyz, and stops
// it with an interrupt when the test ends, logging its stderr if the test
// failed. A test may signal and Wait for the returned command itself; the
// cleanup then finds it gone.
func serveProcess(t *testing.T, bin string, env []string, dir string, args ...string) *exec.Cmd {
	t.Helper()
	admin := ""
	for i, a := range args {
		if a == "--admin-addr" && i+1 < len(args) {
			admin = args[i+1]
		}
	}
	if admin == "" {
		t.Fatal("serveProcess: args need --admin-addr")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("%s stderr:\n%s", strings.Join(args, " "), stderr.String())
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		res, err := http.Get("http://" + admin + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return cmd
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not ready: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// builds are the kadu binaries this test process has built, one per set of
// go build flags: linking kadu costs seconds of CPU, and a dozen tests
// start the same binary. dir is set by TestMain.
var builds struct {
	mu   sync.Mutex
	dir  string
	bins map[string]string // flags → binary
}

// buildKadu returns the binary built with extra go build flags, building
// it on the first call for those flags.
func buildKadu(t testing.TB, flags ...string) string {
	t.Helper()
	key := strings.Join(flags, "\x00")
	builds.mu.Lock()
	defer builds.mu.Unlock()
	if bin, ok := builds.bins[key]; ok {
		return bin
	}
	dir := builds.dir
	if dir == "" { // a caller outside go test's TestMain
		dir = t.TempDir()
	}
	bin := filepath.Join(dir, fmt.Sprintf("kadu-%d", len(builds.bins)))
	// The flags of go tool task build (and of the other tests that build
	// kadu: the image, the binary built with its bundles), so that every
	// build shares one compilation cache.
	args := append(append([]string{"build", "-trimpath"}, flags...), "-o", bin, ".")
	cmd := exec.Command("go", args...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	// A helper the go command leaves behind (telemetry upload) may hold
	// the output pipe open long after the build is done.
	cmd.WaitDelay = 10 * time.Second
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	if builds.bins == nil {
		builds.bins = map[string]string{}
	}
	builds.bins[key] = bin
	return bin
}

// TestRateLimitSharedAcrossProcesses starts two real `kadu serve` processes
// on one PostgreSQL database, as two replicas behind a load balancer, and
// spends one organisation's plan limit through both: together they allow
// what one would, not twice as much, and the MCP endpoint answers the same
// 429 with the JSON-RPC body of docs/reference/limits.md#rate-limits.
func TestRateLimitSharedAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and starts two servers")
	}
	bin := buildKadu(t)
	dsn := pgtest.Shared(t).NewDatabase(t)
	addr1, addr2 := freeAddr(t), freeAddr(t)
	cfgFile := writeConfig(t, "log:\n  level: error\n"+noBundles)
	env := append(os.Environ(),
		"KADU_STORE__DRIVER=postgres",
		"KADU_STORE__DSN="+dsn,
		"KADU_API__SIGNING_KEY=0123456789abcdef0123456789abcdef-shared",
		"KADU_DATA_DIR="+t.TempDir(), // the dev issuer's keys, shared like a real issuer's
		// The shared data dir stands in for a shared issuer and bucket, which
		// the single-node rules would otherwise demand on PostgreSQL.
		"KADU_SINGLE_NODE=true",
		"KADU_PUBLIC_URL=http://"+addr1,
		"KADU_PLANS__DEVELOPER__REQUESTS_PER_MINUTE=60", // burst 10, then one a second
	)
	// The first creates the development keys the second one reads.
	serveProcess(t, bin, env, "", "serve", "--config", cfgFile, "--addr", addr1, "--admin-addr", freeAddr(t))
	serveProcess(t, bin, env, "", "serve", "--config", cfgFile, "--addr", addr2, "--admin-addr", freeAddr(t))

	tok := exec.Command(bin, "token", "--config", cfgFile, "--addr", addr1, "--org", "org_limited")
	tok.Env = env
	out, err := tok.Output()
	if err != nil {
		t.Fatalf("kadu token: %v", err)
	}
	token := strings.TrimSpace(string(out))

	get := func(addr string) (int, http.Header) {
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/api/v1/usage", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res.StatusCode, res.Header
	}
	began := time.Now()
	allowed, limited := 0, 0
	var retryAfter string
	for i := range 40 {
		status, h := get([]string{addr1, addr2}[i%2])
		switch status {
		case http.StatusOK:
			allowed++
		case http.StatusTooManyRequests:
			limited++
			retryAfter = h.Get("Retry-After")
		default:
			t.Fatalf("request %d: status %d", i, status)
		}
	}
	elapsed := time.Since(began)
	// Burst 10, plus one a second while the loop ran; two per-process
	// limiters would have let at least 20 through.
	maxAllowed := 10 + int(elapsed.Seconds()) + 1
	if allowed < 10 || allowed > maxAllowed {
		t.Errorf("allowed %d of 40 in %v through two processes; want 10 to %d (one shared limit)", allowed, elapsed, maxAllowed)
	}
	if limited == 0 || retryAfter == "" || retryAfter == "0" {
		t.Errorf("limited %d, Retry-After %q", limited, retryAfter)
	}

	// The MCP endpoint of either process shares the limit.
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr2+"/mcp",
		strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/list")
	req.Host = addr1
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body struct {
		ID    int `json:"id"`
		Error struct {
			Code int `json:"code"`
			Data struct {
				RetryAfterSeconds int `json:"retry_after_seconds"`
			} `json:"data"`
		} `json:"error"`
	}
	raw, _ := io.ReadAll(res.Body)
	if err := json.Unmarshal(raw, &body); err != nil || res.StatusCode != http.StatusTooManyRequests ||
		body.Error.Code != -31429 || body.ID != 7 || body.Error.Data.RetryAfterSeconds < 1 || res.Header.Get("Retry-After") == "" {
		t.Errorf("MCP over the limit: %d %s (Retry-After %q)", res.StatusCode, raw, res.Header.Get("Retry-After"))
	}
}
