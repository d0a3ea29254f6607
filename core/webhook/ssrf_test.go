package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
)

// The tests below run the Client's real lookup and connect path against a
// DNS server of their own: every name points at (or next to) a loopback
// receiver that counts what reaches it.

func TestSendRefusesNonPublicAddresses(t *testing.T) {
	t.Parallel()
	srv, got := newReceiver(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	resolver := startDNS(t, map[string][]string{
		"loopback.test":   {"127.0.0.1"},
		"private.test":    {"10.0.0.5"},
		"metadata.test":   {"169.254.169.254"},
		"cgnat.test":      {"100.64.1.1"},
		"mapped.test":     {"::ffff:127.0.0.1"},
		"ula.test":        {"fd00::5"},
		"nat64.test":      {"64:ff9b::a9fe:a9fe"}, // 169.254.169.254 through NAT64
		"mixed.test":      {"8.8.8.8", "127.0.0.1"},
		"unspecified.dev": {"0.0.0.0"},
	})
	client := NewClient(ClientOptions{Resolver: resolver, AllowHosts: []string{"unspecified.dev"}})

	tests := []struct {
		host       string
		wantAddr   string
		wantReason string
	}{
		{host: "loopback.test", wantAddr: "127.0.0.1", wantReason: "loopback"},
		{host: "private.test", wantAddr: "10.0.0.5", wantReason: "private"},
		{host: "metadata.test", wantAddr: "169.254.169.254", wantReason: "link-local (cloud metadata)"},
		{host: "cgnat.test", wantAddr: "100.64.1.1", wantReason: "shared (carrier-grade NAT)"},
		{host: "mapped.test", wantAddr: "::ffff:127.0.0.1", wantReason: "loopback"},
		{host: "ula.test", wantAddr: "fd00::5", wantReason: "private (unique local)"},
		{host: "nat64.test", wantAddr: "64:ff9b::a9fe:a9fe", wantReason: "link-local (cloud metadata)"},
		{host: "mixed.test", wantAddr: "127.0.0.1", wantReason: "loopback"},
		{host: "unspecified.dev", wantAddr: "0.0.0.0", wantReason: `"this network"`},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			t.Parallel()
			scheme := "https"
			if tt.host == "unspecified.dev" {
				scheme = "http" // allow-listed, yet never to 0.0.0.0
			}
			url := fmt.Sprintf("%s://%s:%d/hook", scheme, tt.host, port)
			// Creating the webhook passes: the name says nothing until it
			// is resolved, and its answer may change afterwards.
			if err := ValidateURL(url, []string{"unspecified.dev"}); err != nil {
				t.Fatalf("ValidateURL(%q) = %v, want nil", url, err)
			}
			res := client.Send(context.Background(), testRequest(url, mustSecret(t)))
			ae, ok := errors.AsType[*AddressError](res.Err)
			if !ok || res.StatusCode != 0 {
				t.Fatalf("Send(%s) = %+v, want an *AddressError", tt.host, res)
			}
			if ae.Host != tt.host || ae.Addr != netip.MustParseAddr(tt.wantAddr) || !strings.Contains(ae.Reason, tt.wantReason) {
				t.Fatalf("AddressError = %+v, want host %s, address %s, reason %q", ae, tt.host, tt.wantAddr, tt.wantReason)
			}
			if msg := res.Err.Error(); !strings.Contains(msg, tt.wantAddr) || !strings.Contains(msg, tt.host) {
				t.Fatalf("Err = %q, want it to name %s and %s", msg, tt.wantAddr, tt.host)
			}
			if d := Next(1, res); !d.Retry || !strings.Contains(d.Reason, tt.wantAddr) {
				t.Fatalf("Next() = %+v, want a retry whose reason names %s", d, tt.wantAddr)
			}
		})
	}
	t.Cleanup(func() {
		if n := len(got()); n != 0 {
			t.Errorf("the loopback receiver saw %d requests, want 0", n)
		}
	})
}

// IP literals take the same connect-time path when they reach Send, for a
// URL stored before the policy changed.
func TestSendRefusesLoopbackLiteral(t *testing.T) {
	t.Parallel()
	srv, got := newReceiver(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	c := NewClient(ClientOptions{})
	// dialContext directly: checkURL would refuse the literal first.
	_, err := c.dialContext(context.Background(), "tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if ae, ok := errors.AsType[*AddressError](err); !ok || ae.Addr.String() != "127.0.0.1" {
		t.Fatalf("dial 127.0.0.1 = %v, want an *AddressError naming it", err)
	}
	res := c.Send(context.Background(), testRequest(fmt.Sprintf("https://[::ffff:127.0.0.1]:%d/", port), mustSecret(t)))
	if res.Err == nil || !strings.Contains(res.Err.Error(), "loopback") {
		t.Fatalf("Send([::ffff:127.0.0.1]) = %+v, want refused as loopback", res)
	}
	if n := len(got()); n != 0 {
		t.Fatalf("receiver saw %d requests, want 0", n)
	}
}

func TestSendAllowListedHostReachesLoopback(t *testing.T) {
	t.Parallel()
	secret := mustSecret(t)
	srv, got := newReceiver(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	resolver := startDNS(t, map[string][]string{
		"dev.test":     {"127.0.0.1"},
		"api.lan.test": {"127.0.0.1"},
		"lan.test":     {"127.0.0.1"},
	})
	client := NewClient(ClientOptions{Resolver: resolver, AllowHosts: []string{"DEV.test", "*.lan.test"}})

	tests := []struct {
		url    string
		wantOK bool
	}{
		{url: fmt.Sprintf("http://dev.test:%d/hook", port), wantOK: true},
		{url: fmt.Sprintf("http://dev.test.:%d/hook", port), wantOK: true},
		{url: fmt.Sprintf("http://api.lan.test:%d/hook", port), wantOK: true},
		{url: fmt.Sprintf("https://lan.test:%d/hook", port)}, // the suffix form does not cover the apex
	}
	for _, tt := range tests {
		res := client.Send(context.Background(), testRequest(tt.url, secret))
		if res.OK() != tt.wantOK {
			t.Errorf("Send(%s) = %+v, want OK=%v", tt.url, res, tt.wantOK)
		}
	}
	reqs := got()
	if len(reqs) != 3 {
		t.Fatalf("receiver saw %d requests, want 3", len(reqs))
	}
	for _, r := range reqs {
		if matched, err := verifyDelivery(secret, r.header, r.body); err != nil || len(matched) != 1 {
			t.Errorf("delivery through an allow-listed name does not verify: %v, %v", matched, err)
		}
	}
}

func TestSendResolutionFailure(t *testing.T) {
	t.Parallel()
	client := NewClient(ClientOptions{Resolver: startDNS(t, nil)})
	res := client.Send(context.Background(), testRequest("https://missing.test/hook?token=abc", mustSecret(t)))
	if dnsErr, ok := errors.AsType[*net.DNSError](res.Err); !ok || !dnsErr.IsNotFound {
		t.Fatalf("Send() = %+v, want a not-found *net.DNSError", res)
	}
	if strings.Contains(res.Err.Error(), "token=abc") {
		t.Fatalf("Err = %q repeats the URL's query", res.Err)
	}
}

// A name with several addresses is tried address by address, each one
// checked: a dead first address does not fail the delivery.
func TestSendFallsBackToTheNextAddress(t *testing.T) {
	t.Parallel()
	srv, got := newReceiver(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	// Nothing listens on 127.0.0.2 at the receiver's port.
	resolver := startDNS(t, map[string][]string{"two.dev.test": {"127.0.0.2", "127.0.0.1"}})
	ips, err := resolver.LookupNetIP(context.Background(), "ip", "two.dev.test")
	if err != nil || len(ips) != 2 || ips[0].String() != "127.0.0.2" {
		t.Fatalf("lookup = %v, %v; want 127.0.0.2 first for this test to mean anything", ips, err)
	}
	client := NewClient(ClientOptions{Resolver: resolver, AllowHosts: []string{"two.dev.test"}})
	res := client.Send(context.Background(), testRequest(fmt.Sprintf("http://two.dev.test:%d/", port), mustSecret(t)))
	if !res.OK() || len(got()) != 1 {
		t.Fatalf("Send() = %+v, receiver saw %d; want the second address to take the delivery", res, len(got()))
	}
}
