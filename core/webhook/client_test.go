package webhook

import (
	"bufio"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/kobana/kadu/core/internal/fakeclock"
)

var testTime = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// verifyDelivery is a receiver's own Standard Webhooks check, written from
// the specification rather than from Sign: it returns the positions in
// webhook-signature of the signatures that secret verifies.
func verifyDelivery(secret string, h http.Header, body []byte) ([]int, error) {
	id, ts, sigs := h.Get("webhook-id"), h.Get("webhook-timestamp"), h.Get("webhook-signature")
	if id == "" || ts == "" || sigs == "" {
		return nil, errors.New("missing webhook-id, webhook-timestamp or webhook-signature")
	}
	if _, err := strconv.ParseInt(ts, 10, 64); err != nil {
		return nil, fmt.Errorf("webhook-timestamp %q is not integer seconds", ts)
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return nil, err
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	want := mac.Sum(nil)
	var matched []int
	for i, s := range strings.Split(sigs, " ") {
		version, enc, ok := strings.Cut(s, ",")
		if !ok || version != "v1" {
			return nil, fmt.Errorf("signature %d: %q is not v1,<base64>", i, s)
		}
		got, err := base64.StdEncoding.DecodeString(enc)
		if err != nil {
			return nil, fmt.Errorf("signature %d: %w", i, err)
		}
		if hmac.Equal(got, want) {
			matched = append(matched, i)
		}
	}
	return matched, nil
}

// captured is one request a test receiver saw.
type captured struct {
	header http.Header
	body   []byte
}

// newReceiver starts a loopback endpoint that records each request and
// answers with respond.
func newReceiver(t *testing.T, respond http.HandlerFunc) (*httptest.Server, func() []captured) {
	t.Helper()
	var mu sync.Mutex
	var got []captured
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, captured{header: r.Header.Clone(), body: body})
		mu.Unlock()
		respond(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []captured {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(got)
	}
}

func loopbackClient(opts ClientOptions) *Client {
	opts.AllowHosts = append(opts.AllowHosts, "127.0.0.1")
	return NewClient(opts)
}

func testRequest(url string, secrets ...string) Request {
	return Request{
		URL:       url,
		MsgID:     "evt_0195f3c1-7a2b-7c3d-8e4f-0a1b2c3d4e5f",
		Timestamp: testTime,
		Body:      []byte(`{"id":"evt_0195f3c1-7a2b-7c3d-8e4f-0a1b2c3d4e5f","event_code":"execution.succeeded"}`),
		Secrets:   secrets,
	}
}

func TestSendIsVerifiableByTheReceiver(t *testing.T) {
	t.Parallel()
	secret := mustSecret(t)
	srv, got := newReceiver(t, func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, `{"received":true}`)
	})
	req := testRequest(srv.URL+"/kadu?tenant=7", secret)

	res := loopbackClient(ClientOptions{}).Send(context.Background(), req)
	if !res.OK() || res.Err != nil || res.Body != `{"received":true}` {
		t.Fatalf("Send() = %+v, want 200 with the receiver's body", res)
	}
	reqs := got()
	if len(reqs) != 1 {
		t.Fatalf("receiver saw %d requests, want 1", len(reqs))
	}
	h, body := reqs[0].header, reqs[0].body
	if string(body) != string(req.Body) {
		t.Errorf("body = %s, want the event JSON byte for byte", body)
	}
	matched, err := verifyDelivery(secret, h, body)
	if err != nil || !slices.Equal(matched, []int{0}) {
		t.Errorf("receiver verification = %v, %v; want signature 0 valid", matched, err)
	}
	for name, want := range map[string]string{
		"Content-Type":      "application/json",
		"webhook-id":        req.MsgID,
		"webhook-timestamp": "1772366400",
		"User-Agent":        "Kadu-Webhooks/1",
	} {
		if got := h.Get(name); got != want {
			t.Errorf("header %s = %q, want %q", name, got, want)
		}
	}
	for _, name := range []string{"Authorization", "Cookie", "Proxy-Authorization", "Accept-Encoding"} {
		if v, ok := h[name]; ok {
			t.Errorf("header %s = %q sent; a delivery carries no credentials or extras", name, v)
		}
	}
}

// During a rotation overlap a receiver holding either secret verifies the
// delivery, each with its own signature.
func TestSendRotationOverlap(t *testing.T) {
	t.Parallel()
	current, previous := mustSecret(t), mustSecret(t)
	srv, got := newReceiver(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })

	res := loopbackClient(ClientOptions{}).Send(context.Background(), testRequest(srv.URL, current, previous))
	if !res.OK() {
		t.Fatalf("Send() = %+v, want 204", res)
	}
	d := got()[0]
	if n := len(strings.Split(d.header.Get("webhook-signature"), " ")); n != 2 {
		t.Fatalf("webhook-signature has %d signatures, want 2", n)
	}
	for i, secret := range []string{current, previous} {
		matched, err := verifyDelivery(secret, d.header, d.body)
		if err != nil || !slices.Equal(matched, []int{i}) {
			t.Errorf("secret %d verifies signatures %v (%v), want exactly [%d]", i, matched, err, i)
		}
	}
	if matched, _ := verifyDelivery(mustSecret(t), d.header, d.body); len(matched) != 0 {
		t.Errorf("an unrelated secret verifies signatures %v", matched)
	}
}

// TestSendWireHeaders reads the request off the socket: the Standard
// Webhooks names go out in lower case, and nothing else is sent beyond what
// HTTP/1.1 itself needs.
func TestSendWireHeaders(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	type seen struct {
		names []string
		lines []string
	}
	ch := make(chan seen, 1)
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		r := textproto.NewReader(bufio.NewReader(conn))
		var s seen
		if _, err := r.ReadLine(); err != nil { // request line
			return
		}
		for {
			line, err := r.ReadLine()
			if err != nil || line == "" {
				break
			}
			s.lines = append(s.lines, line)
			name, _, _ := strings.Cut(line, ":")
			s.names = append(s.names, name)
		}
		ch <- s
		_, _ = io.WriteString(conn, "HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n")
	}()

	secret := mustSecret(t)
	res := loopbackClient(ClientOptions{}).Send(context.Background(), testRequest("http://"+ln.Addr().String()+"/", secret))
	if res.StatusCode != http.StatusNoContent {
		t.Fatalf("Send() = %+v, want 204", res)
	}
	s := <-ch
	slices.Sort(s.names)
	want := []string{"Content-Length", "Content-Type", "Host", "User-Agent", "webhook-id", "webhook-signature", "webhook-timestamp"}
	if !slices.Equal(s.names, want) {
		t.Fatalf("header names on the wire = %q, want %q", s.names, want)
	}
	if !slices.Contains(s.lines, "webhook-timestamp: 1772366400") {
		t.Errorf("header lines %q lack \"webhook-timestamp: 1772366400\"", s.lines)
	}
}

func TestSendDoesNotFollowRedirects(t *testing.T) {
	t.Parallel()
	var followed atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/hook", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/elsewhere", func(http.ResponseWriter, *http.Request) { followed.Add(1) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	res := loopbackClient(ClientOptions{}).Send(context.Background(), testRequest(srv.URL+"/hook", mustSecret(t)))
	if res.StatusCode != http.StatusTemporaryRedirect || res.OK() || res.Err != nil {
		t.Fatalf("Send() = %+v, want a failed attempt with status 307", res)
	}
	if n := followed.Load(); n != 0 {
		t.Fatalf("redirect target hit %d times, want 0", n)
	}
	if d := Next(1, res); !d.Retry || !strings.Contains(d.Reason, "redirects are not followed") {
		t.Fatalf("Next() = %+v, want a retry explaining the redirect", d)
	}
}

func TestSendRetryAfter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		status     int
		retryAfter string
		want       time.Duration
	}{
		{name: "503 in seconds", status: 503, retryAfter: "120", want: 2 * time.Minute},
		{name: "429 as an HTTP date", status: 429, retryAfter: testTime.Add(45 * time.Minute).Format(http.TimeFormat), want: 45 * time.Minute},
		{name: "429 for two days: capped", status: 429, retryAfter: "172800", want: MaxRetryAfter},
		{name: "503 unreadable", status: 503, retryAfter: "later", want: 0},
		{name: "500 with Retry-After: not for this status", status: 500, retryAfter: "120", want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, _ := newReceiver(t, func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Retry-After", tt.retryAfter)
				w.WriteHeader(tt.status)
			})
			clock := fakeclock.New(testTime)
			res := loopbackClient(ClientOptions{Now: clock.Now}).Send(context.Background(), testRequest(srv.URL, mustSecret(t)))
			if res.StatusCode != tt.status || res.RetryAfter != tt.want {
				t.Fatalf("Send() = status %d, RetryAfter %s; want %d, %s", res.StatusCode, res.RetryAfter, tt.status, tt.want)
			}
		})
	}
}

func TestSendGoneDisables(t *testing.T) {
	t.Parallel()
	srv, _ := newReceiver(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusGone) })
	res := loopbackClient(ClientOptions{}).Send(context.Background(), testRequest(srv.URL, mustSecret(t)))
	if d := Next(3, res); !d.Disable || d.Retry {
		t.Fatalf("Next() after %+v = %+v, want the endpoint disabled and no retry", res, d)
	}
}

func TestSendTruncatesTheResponseBody(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		limit int
		body  string
		want  string
	}{
		{name: "short body kept whole", limit: 16, body: "accepted", want: "accepted"},
		{name: "exactly the limit", limit: 8, body: "accepted", want: "accepted"},
		{name: "cut at the limit", limit: 4, body: "accepted", want: "acce"},
		{name: "cut inside a character", limit: 5, body: "ééé", want: "éé"},
		{name: "cut inside a 4-byte character", limit: 6, body: "a😀😀", want: "a😀"},
		{name: "invalid bytes replaced", limit: 16, body: "ok\xff\xfe", want: "ok\uFFFD"},
		{name: "replacement kept within the limit", limit: 4, body: "ok\xff\xfe\xfd", want: "ok"},
		{name: "megabyte body", limit: 4096, body: strings.Repeat("x", 1<<20), want: strings.Repeat("x", 4096)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, _ := newReceiver(t, func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(http.StatusBadRequest)
				_, _ = io.WriteString(w, tt.body)
			})
			res := loopbackClient(ClientOptions{MaxBodyBytes: tt.limit}).Send(context.Background(), testRequest(srv.URL, mustSecret(t)))
			if res.StatusCode != http.StatusBadRequest || res.Body != tt.want {
				t.Fatalf("Send() = status %d, body %q; want 400, %q", res.StatusCode, res.Body, tt.want)
			}
			if !utf8.ValidString(res.Body) || len(res.Body) > tt.limit {
				t.Fatalf("Body = %q (%d bytes), want valid UTF-8 within %d bytes", res.Body, len(res.Body), tt.limit)
			}
		})
	}
}

// A receiver that never answers costs one Timeout, and the attempt reports
// a deadline rather than a response.
func TestSendTimeout(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body) // the server notices a closed connection only after the body
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })

	res := loopbackClient(ClientOptions{Timeout: 50 * time.Millisecond}).Send(context.Background(), testRequest(srv.URL+"/secret-path?token=abc", mustSecret(t)))
	if res.StatusCode != 0 || !errors.Is(res.Err, context.DeadlineExceeded) {
		t.Fatalf("Send() = %+v, want no status and context.DeadlineExceeded", res)
	}
	if msg := res.Err.Error(); !strings.Contains(msg, "50ms") || strings.Contains(msg, "token=abc") || strings.Contains(msg, "secret-path") {
		t.Fatalf("Err = %q, want the timeout named and the URL's path and query left out", msg)
	}
}

func TestSendCancelled(t *testing.T) {
	t.Parallel()
	srv, got := newReceiver(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := loopbackClient(ClientOptions{}).Send(ctx, testRequest(srv.URL, mustSecret(t)))
	if !errors.Is(res.Err, context.Canceled) || len(got()) != 0 {
		t.Fatalf("Send(cancelled) = %+v with %d requests made, want context.Canceled and none", res, len(got()))
	}
}

func TestSendDurationUsesTheClock(t *testing.T) {
	t.Parallel()
	srv, _ := newReceiver(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	clock := fakeclock.NewStepping(testTime, 1234*time.Millisecond)
	res := loopbackClient(ClientOptions{Now: clock.Now}).Send(context.Background(), testRequest(srv.URL, mustSecret(t)))
	if !res.OK() || res.Duration != 1234*time.Millisecond {
		t.Fatalf("Send() = %+v, want OK with Duration 1.234s from the injected clock", res)
	}
}

func TestSendRefusesBeforeConnecting(t *testing.T) {
	t.Parallel()
	srv, got := newReceiver(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	secret := mustSecret(t)
	tests := []struct {
		name    string
		client  *Client
		req     Request
		wantErr string
	}{
		{name: "http without allow-list", client: NewClient(ClientOptions{}), req: testRequest(srv.URL, secret), wantErr: "url: must use https"},
		{name: "user info", client: loopbackClient(ClientOptions{}), req: testRequest(fmt.Sprintf("http://u:hunter2@127.0.0.1:%d/", port), secret), wantErr: "url: must not contain a user name"},
		{name: "no secret", client: loopbackClient(ClientOptions{}), req: testRequest(srv.URL), wantErr: "signing the delivery: secrets: at least one"},
		{name: "dot in the id", client: loopbackClient(ClientOptions{}), req: func() Request { r := testRequest(srv.URL, secret); r.MsgID = "evt.1"; return r }(), wantErr: "msg_id"},
	}
	for _, tt := range tests {
		res := tt.client.Send(context.Background(), tt.req)
		if res.StatusCode != 0 || res.Err == nil || !strings.Contains(res.Err.Error(), tt.wantErr) {
			t.Errorf("%s: Send() = %+v, want an error containing %q", tt.name, res, tt.wantErr)
		}
		if strings.Contains(fmt.Sprint(res.Err), "hunter2") || strings.Contains(fmt.Sprint(res.Err), secret[6:]) {
			t.Errorf("%s: Err %q repeats a credential", tt.name, res.Err)
		}
	}
	if n := len(got()); n != 0 {
		t.Fatalf("receiver saw %d requests, want 0", n)
	}
}

func TestSendTLS(t *testing.T) {
	t.Parallel()
	handler := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusAccepted) })
	trusting := func(srv *httptest.Server) *Client {
		c := loopbackClient(ClientOptions{})
		pool := x509.NewCertPool()
		pool.AddCert(srv.Certificate())
		c.transport.TLSClientConfig.RootCAs = pool
		return c
	}

	t.Run("trusted certificate", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewTLSServer(handler)
		t.Cleanup(srv.Close)
		res := trusting(srv).Send(context.Background(), testRequest(srv.URL, mustSecret(t)))
		if res.StatusCode != http.StatusAccepted {
			t.Fatalf("Send() = %+v, want 202", res)
		}
	})
	t.Run("unknown authority refused", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewTLSServer(handler)
		t.Cleanup(srv.Close)
		res := loopbackClient(ClientOptions{}).Send(context.Background(), testRequest(srv.URL, mustSecret(t)))
		var cve *tls.CertificateVerificationError
		if res.StatusCode != 0 || !errors.As(res.Err, &cve) {
			t.Fatalf("Send() = %+v, want a certificate verification error", res)
		}
	})
	t.Run("TLS 1.1 refused", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewUnstartedServer(handler)
		srv.TLS = &tls.Config{MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS11}
		srv.StartTLS()
		t.Cleanup(srv.Close)
		res := trusting(srv).Send(context.Background(), testRequest(srv.URL, mustSecret(t)))
		if res.StatusCode != 0 || res.Err == nil {
			t.Fatalf("Send() to a TLS 1.1 server = %+v, want a handshake error", res)
		}
	})
}

// TestSendIgnoresProxyEnvironment sets HTTP_PROXY for the whole process, so
// it cannot run in parallel. A proxy would see only its own address and
// carry deliveries past the address check.
func TestSendIgnoresProxyEnvironment(t *testing.T) {
	var proxied atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		proxied.Add(1)
		w.WriteHeader(http.StatusBadGateway)
	}))
	t.Cleanup(proxy.Close)
	t.Setenv("HTTP_PROXY", proxy.URL)
	t.Setenv("HTTPS_PROXY", proxy.URL)
	t.Setenv("NO_PROXY", "")

	srv, got := newReceiver(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	// A name, not 127.0.0.1: net/http never proxies loopback literals.
	resolver := startDNS(t, map[string][]string{"dev.test": {"127.0.0.1"}})
	c := NewClient(ClientOptions{AllowHosts: []string{"dev.test"}, Resolver: resolver})

	res := c.Send(context.Background(), testRequest(fmt.Sprintf("http://dev.test:%d/", port), mustSecret(t)))
	if !res.OK() || len(got()) != 1 || proxied.Load() != 0 {
		t.Fatalf("Send() = %+v, receiver saw %d, proxy saw %d; want a direct delivery", res, len(got()), proxied.Load())
	}
}

// TestHammerSend shares one Client between goroutines, as the delivery
// worker does, and checks every delivery verifies with its own secret.
func TestHammerSend(t *testing.T) {
	t.Parallel()
	var bad atomic.Int32
	secrets := map[string]string{}
	for i := range 8 {
		secrets[fmt.Sprintf("evt_%d", i)] = mustSecret(t)
	}
	srv, got := newReceiver(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	c := loopbackClient(ClientOptions{})
	var wg sync.WaitGroup
	for id, secret := range secrets {
		wg.Go(func() {
			for range 25 {
				req := testRequest(srv.URL, secret)
				req.MsgID = id
				if res := c.Send(context.Background(), req); !res.OK() {
					bad.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if n := bad.Load(); n != 0 {
		t.Fatalf("%d of 200 concurrent sends failed", n)
	}
	for _, d := range got() {
		if matched, err := verifyDelivery(secrets[d.header.Get("webhook-id")], d.header, d.body); err != nil || len(matched) != 1 {
			t.Fatalf("delivery %s does not verify with its secret: %v, %v", d.header.Get("webhook-id"), matched, err)
		}
	}
}
