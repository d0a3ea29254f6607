//go:build replicas

package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/labstack/echo/v4"

	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/devauth"
	"github.com/kobana/kadu/sdk/go/kadu/kadutest"
)

// The multi-replica harness: one PostgreSQL, an S3-compatible server, an
// external OAuth issuer, three `kadu serve` processes and Debian's nginx
// balancing them. Everything binds to 127.0.0.1.

// sharedSigningKey is api.signing_key of every replica: signed download
// URLs, idempotency records and sealed confirmation state made by one
// replica are read by another.
const sharedSigningKey = "0123456789abcdef0123456789abcdef-replicas"

// startS3 serves an in-memory S3 bucket over the S3 wire and returns its
// endpoint (http://127.0.0.1:port).
func startS3(t *testing.T, bucket string) string {
	t.Helper()
	mem := s3mem.New()
	if err := mem.CreateBucket(bucket); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(mem).Server())
	t.Cleanup(srv.Close)
	return srv.URL
}

// issuer is an external OAuth authorization server on its own listener:
// core/devauth, which signs with ES256 and publishes discovery and JWKS,
// so the replicas verify its tokens exactly as a production issuer's.
type issuer struct {
	url string
	dev *devauth.Server
}

func startIssuer(t *testing.T, resource string) *issuer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	// AutoApprove signs the person in as the defaults at once: the
	// approval page's sign-in needs no consent form, and the person is the
	// one the workload's token names (only they may approve their call).
	dev, err := devauth.New(devauth.Options{Issuer: url, Resource: resource, AutoApprove: true, DataDir: t.TempDir(),
		DefaultOrg: workloadOrg, DefaultSubject: "user_" + workloadOrg, DefaultRole: auth.RoleOwner,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	dev.Register(e)
	srv := &http.Server{Handler: e, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return &issuer{url: url, dev: dev}
}

// token mints an access token for org with role (scopes: all).
func (i *issuer) token(t *testing.T, org, role string) string {
	t.Helper()
	tok, err := i.dev.Mint(devauth.MintOptions{OrgID: org, Role: auth.Role(role), Subject: "user_" + org, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// bundleFile is one built bundle and its pin.
type bundleFile struct{ path, sha string }

func buildBundle(t *testing.T, pkg string) bundleFile {
	t.Helper()
	path := kadutest.BuildWasm(t, pkg)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(raw)
	return bundleFile{path: path, sha: hex.EncodeToString(sum[:])}
}

// replicaConfig is the configuration file every replica reads.
type replicaConfig struct {
	publicURL, issuer, s3 string
	firstParty            map[string]bundleFile
	swap                  bundleFile
	cacheDir              string
}

func (c replicaConfig) yaml() string {
	var b strings.Builder
	fmt.Fprintf(&b, `log:
  level: warn
public_url: %s
http:
  drain_delay: 3s
  shutdown_timeout: 20s
  trusted_proxies: [127.0.0.1]
auth:
  issuer: %s
orgs:
  auto_provision: "on"
  example_tasks: "off"
runner:
  rescue_after: 3s
files:
  url: "s3://kadu-files?region=us-east-1&endpoint=%s&use_path_style=true"
webhooks:
  allow_hosts: [127.0.0.1]
plans:
  developer:
    requests_per_minute: 1000000
    concurrent_executions: 20
    executions_per_month: 1000000
    cost_cap_cents: 100000000
  tiny:
    concurrent_executions: 1
    executions_per_month: 10
    max_file_size_bytes: 1048576
    retention: 720h
    webhooks: 0
    requests_per_minute: 60
    cost_cap_cents: 100
    max_cost_per_execution_cents: 100
plugins:
  watch: false
  cache_dir: %s
  bundles:
`, c.publicURL, c.issuer, c.s3, c.cacheDir)
	for _, name := range []string{"tasks", "executions", "files", "webhooks"} {
		f := c.firstParty[name]
		fmt.Fprintf(&b, "    %s:\n      path: %s\n      sha256: %s\n", name, f.path, f.sha)
	}
	fmt.Fprintf(&b, "    swap:\n      enabled: true\n      path: %s\n      sha256: %s\n      routes: [\"GET /api/v1/usage\"]\n", c.swap.path, c.swap.sha)
	return b.String()
}

// replica is one `kadu serve` process, restartable on the same addresses.
type replica struct {
	t           *testing.T
	bin, cfg    string
	env         []string
	addr, admin string

	mu     sync.Mutex
	cmd    *exec.Cmd
	done   chan error // cmd.Wait's result, put back by whoever reads it first
	stderr *bytes.Buffer
	logs   []string // stderr of earlier runs
}

func newReplica(t *testing.T, bin, cfg string, env []string) *replica {
	return &replica{t: t, bin: bin, cfg: cfg, env: append(env, "KADU_DATA_DIR="+t.TempDir()), addr: freeAddr(t), admin: freeAddr(t)}
}

// start runs the process and waits for /readyz, for at most budget.
func (r *replica) start(budget time.Duration) error {
	cmd := exec.Command(r.bin, "serve", "--config", r.cfg, "--addr", r.addr, "--admin-addr", r.admin)
	cmd.Env = r.env
	r.mu.Lock()
	r.stderr = &bytes.Buffer{}
	cmd.Stderr = &lockedWriter{w: r.stderr, mu: &r.mu}
	r.mu.Unlock()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", r.addr, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	r.mu.Lock()
	r.cmd, r.done = cmd, done
	r.mu.Unlock()
	deadline := time.Now().Add(budget)
	for {
		select {
		case err := <-done:
			done <- err
			return fmt.Errorf("replica %s exited while starting: %v\n%s", r.addr, err, r.output())
		default:
		}
		if res, err := http.Get("http://" + r.admin + "/readyz"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("replica %s not ready after %s:\n%s", r.addr, budget, r.output())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// stop sends sig and waits, for at most budget, for the process to end.
func (r *replica) stop(sig syscall.Signal, budget time.Duration) error {
	r.mu.Lock()
	cmd, done := r.cmd, r.done
	r.logs = append(r.logs, r.stderr.String())
	r.mu.Unlock()
	if err := cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("signal %s to %s: %w", sig, r.addr, err)
	}
	select {
	case err := <-done:
		done <- err
		var exit *exec.ExitError
		if sig == syscall.SIGKILL && errors.As(err, &exit) {
			return nil // "signal: killed" is the point
		}
		if err != nil {
			return fmt.Errorf("replica %s after %s: %w", r.addr, sig, err)
		}
		return nil
	case <-time.After(budget):
		return fmt.Errorf("replica %s still running %s after %s", r.addr, budget, sig)
	}
}

// close kills the process if it runs; for t.Cleanup.
func (r *replica) close() {
	r.mu.Lock()
	cmd, done := r.cmd, r.done
	r.mu.Unlock()
	if cmd == nil {
		return
	}
	select {
	case err := <-done:
		done <- err
	default:
		_ = cmd.Process.Kill()
		<-done
	}
}

func (r *replica) output() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(append(append([]string{}, r.logs...), r.stderr.String()), "\n--- restart ---\n")
}

type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// nginxBinary is Debian's nginx, or "" when it is not installed.
func nginxBinary() string {
	if p, err := exec.LookPath("nginx"); err == nil {
		return p
	}
	if _, err := os.Stat("/usr/sbin/nginx"); err == nil {
		return "/usr/sbin/nginx"
	}
	return ""
}

// startNginx runs nginx in the foreground as the load balancer of
// upstreams on addr, with its own prefix directory, until the test ends.
//
// Round robin; an upstream that refuses a connection is skipped for 2 s
// and the request goes to the next one (proxy_next_upstream error
// timeout: nothing was sent yet, so even a POST is safe to pass on). A
// request an upstream received and did not answer (SIGKILL) is NOT passed
// on: a POST may have taken effect. X-Forwarded-For carries the client.
func startNginx(t *testing.T, bin, addr string, upstreams []string) {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{"logs", "tmp"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var servers strings.Builder
	for _, u := range upstreams {
		fmt.Fprintf(&servers, "    server %s max_fails=1 fail_timeout=2s;\n", u)
	}
	conf := fmt.Sprintf(`worker_processes 1;
pid %[1]s/nginx.pid;
error_log %[1]s/logs/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path %[1]s/tmp/body;
  proxy_temp_path %[1]s/tmp/proxy;
  fastcgi_temp_path %[1]s/tmp/fastcgi;
  uwsgi_temp_path %[1]s/tmp/uwsgi;
  scgi_temp_path %[1]s/tmp/scgi;
  upstream kadu {
%[2]s  }
  server {
    listen %[3]s;
    client_max_body_size 20m;
    location / {
      proxy_pass http://kadu;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $http_host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto $scheme;
      proxy_buffering off;
      proxy_connect_timeout 2s;
      proxy_read_timeout 90s;
      proxy_next_upstream error timeout;
      proxy_next_upstream_tries 3;
    }
  }
}
`, dir, servers.String(), addr)
	confPath := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "-p", dir, "-c", confPath, "-g", "daemon off;")
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGQUIT) }
	cmd.WaitDelay = 10 * time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("nginx: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		if t.Failed() {
			log, _ := os.ReadFile(filepath.Join(dir, "logs", "error.log"))
			t.Logf("nginx stderr:\n%s\nnginx error.log (last 4 KiB):\n%s", stderr.String(), tail(log, 4096))
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("nginx does not listen on %s after 20s: %s", addr, stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
