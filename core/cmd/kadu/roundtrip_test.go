package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kobana/kadu/core/app"
)

// freeAddr returns a loopback address nothing listens on (a tiny race with
// other processes is accepted: the test then fails to bind, loudly).
func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestTokenAcceptedByMatchingServe runs the real `kadu serve` and `kadu
// token` commands with the same flags and checks the server accepts the
// token, and refuses one minted with another data directory.
func TestTokenAcceptedByMatchingServe(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	real := deps{version: "test", run: app.Run, mint: app.MintDevToken, migrate: app.Migrate}
	addr, dataDir := freeAddr(t), t.TempDir()
	flags := []string{"--config", emptyConfig(t), "--data-dir", dataDir, "--addr", addr, "--admin-addr", freeAddr(t)}

	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		root := newRootCmd(real)
		root.SetOut(io.Discard)
		root.SetErr(io.Discard)
		root.SetArgs(append([]string{"serve", "--log-level", "error"}, flags...))
		served <- root.ExecuteContext(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	})

	mint := func(flags ...string) string {
		t.Helper()
		var out bytes.Buffer
		root := newRootCmd(real)
		root.SetOut(&out)
		root.SetErr(io.Discard)
		root.SetArgs(append([]string{"token", "--scope", "kadu.read"}, flags...))
		if err := root.Execute(); err != nil {
			t.Fatalf("token: %v", err)
		}
		return strings.TrimSpace(out.String())
	}
	good := mint(flags...)
	other := mint("--config", emptyConfig(t), "--data-dir", t.TempDir(), "--addr", addr)

	call := func(token string) int {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/mcp", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/list")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	deadline := time.Now().Add(10 * time.Second)
	for call(good) == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond) // the server is still starting
	}
	if got := call(good); got != http.StatusOK {
		t.Fatalf("token from the matching `kadu token`: status %d, want 200", got)
	}
	if got := call(other); got != http.StatusUnauthorized {
		t.Fatalf("token from another data dir: status %d, want 401", got)
	}
}
