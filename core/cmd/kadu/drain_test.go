package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServeDrainsOnSIGTERM stops a real `kadu serve` as an orchestrator does
// during a rolling restart. After SIGTERM the listener keeps accepting: new
// requests on every kind of route get 503 with Retry-After (in the route's
// own error format) while the admin /readyz fails, so a load balancer never
// sees a refused connection. A request that was in flight before SIGTERM
// completes, even after the listener has closed, and the process exits 0.
// The drain delay is long (2m) so that nothing depends on the machine's
// speed; a second signal cuts it short, as it does for an operator.
func TestServeDrainsOnSIGTERM(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and starts a server")
	}
	bin := buildKadu(t)
	addr, admin := freeAddr(t), freeAddr(t)
	// Generous timeouts: the in-flight request stays open through the
	// whole drain, on a busy machine.
	cfgFile := writeConfig(t, "log:\n  level: warn\nhttp:\n  drain_delay: 2m\n  shutdown_timeout: 2m\n  read_timeout: 5m\n  write_timeout: 5m\n"+noBundles)
	env := append(os.Environ(), "KADU_DATA_DIR="+t.TempDir())
	cmd := serveProcess(t, bin, env, "", "serve", "--config", cfgFile, "--addr", addr, "--admin-addr", admin)
	tok := exec.Command(bin, "token", "--config", cfgFile, "--addr", addr, "--scope", "kadu.read")
	tok.Env = env
	out, err := tok.Output()
	if err != nil {
		t.Fatalf("kadu token: %v", err)
	}
	token := strings.TrimSpace(string(out))

	// In flight before SIGTERM: the server has read the headers and its
	// handler waits for the body (it asked for it with 100 Continue).
	inflight, answers, body := startInflightMCP(t, addr, token)
	defer inflight.Close()

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	eventually(t, "/readyz to fail after SIGTERM", func() bool {
		res, err := http.Get("http://" + admin + "/readyz")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusServiceUnavailable
	})

	// The drain window: new connections are accepted and answered 503.
	fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: time.Minute}
	draining := []struct {
		name, method, path, contentType, body string
		wantInBody                            []string
	}{
		{"REST", "GET", "/api/v1/tasks", "", "", []string{`"code":"unavailable"`, `"reason":"draining"`, `"request_id":"req_`}},
		{"MCP", "POST", "/mcp", "application/json", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, []string{`"code":-31503`, `"reason":"draining"`}},
		{"token endpoint", "POST", "/oauth/token", "application/x-www-form-urlencoded", "grant_type=refresh_token", []string{`"temporarily_unavailable"`}},
		{"metadata", "GET", "/.well-known/oauth-protected-resource/mcp", "", "", []string{`"temporarily_unavailable"`}},
	}
	for _, d := range draining {
		req, _ := http.NewRequest(d.method, "http://"+addr+d.path, strings.NewReader(d.body))
		req.Header.Set("Authorization", "Bearer "+token)
		if d.contentType != "" {
			req.Header.Set("Content-Type", d.contentType)
		}
		res, err := fresh.Do(req)
		if err != nil {
			t.Fatalf("%s while draining: %v (the listener must keep accepting)", d.name, err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		ok := res.StatusCode == http.StatusServiceUnavailable && res.Header.Get("Retry-After") != ""
		for _, want := range d.wantInBody {
			ok = ok && strings.Contains(string(b), want)
		}
		if !ok {
			t.Errorf("%s while draining: %d Retry-After %q body %.300s; want 503 with Retry-After and %q",
				d.name, res.StatusCode, res.Header.Get("Retry-After"), b, d.wantInBody)
		}
	}

	// A second signal ends the delay: the listener closes, the in-flight
	// request keeps its connection.
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the listener to close after the second signal", func() bool {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			return true
		}
		c.Close()
		return false
	})
	status, answer := finishInflight(t, inflight, answers, body)
	if status != http.StatusOK || !strings.Contains(answer, `"tools"`) {
		t.Errorf("in-flight request: %d %.300s, want 200 with the tools", status, answer)
	}

	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("kadu serve exited with %v, want 0", err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("kadu serve still running 2m after its in-flight request finished")
	}
}

// startInflightMCP sends the headers of a tools/list call with
// "Expect: 100-continue" and returns once the server asked for the body,
// which proves the request reached its handler.
func startInflightMCP(t *testing.T, addr, token string) (net.Conn, *bufio.Reader, string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`
	conn, err := net.DialTimeout("tcp", addr, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"+
		"Accept: application/json\r\nMCP-Protocol-Version: 2025-06-18\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n",
		addr, token, len(body))
	_ = conn.SetReadDeadline(time.Now().Add(time.Minute))
	answers := bufio.NewReader(conn)
	res, err := http.ReadResponse(answers, nil)
	if err != nil || res.StatusCode != http.StatusContinue {
		t.Fatalf("in-flight request: got %v, %v; want 100 Continue", res, err)
	}
	return conn, answers, body
}

// finishInflight sends the body and reads the answer.
func finishInflight(t *testing.T, conn net.Conn, answers *bufio.Reader, body string) (int, string) {
	t.Helper()
	if _, err := io.WriteString(conn, body); err != nil {
		t.Fatalf("in-flight request: sending the body: %v", err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(2 * time.Minute))
	res, err := http.ReadResponse(answers, nil)
	if err != nil {
		t.Fatalf("in-flight request: reading the answer: %v", err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	return res.StatusCode, string(b)
}

// eventually polls cond every 50ms for up to a minute.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestServeStopsAtOnceOnSIGINT: Ctrl-C is a person at a terminal, not an
// orchestrator; with a drain delay of 10 minutes configured, SIGINT still
// closes the listener and exits 0 without waiting for it.
func TestServeStopsAtOnceOnSIGINT(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and starts a server")
	}
	bin := buildKadu(t)
	addr := freeAddr(t)
	cfgFile := writeConfig(t, "log:\n  level: warn\nhttp:\n  drain_delay: 10m\n"+noBundles)
	env := append(os.Environ(), "KADU_DATA_DIR="+t.TempDir())
	cmd := serveProcess(t, bin, env, "", "serve", "--config", cfgFile, "--addr", addr, "--admin-addr", freeAddr(t))
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("kadu serve exited with %v, want 0", err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("kadu serve still running 2m after SIGINT: it waited for the 10m drain delay")
	}
}
