package webhook

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

func TestRefusal(t *testing.T) {
	t.Parallel()
	tests := []struct {
		addr        string
		wantReason  string // "" when a webhook may connect
		wantAllowed string // the reason when the host is allow-listed; "" when it may connect
	}{
		{addr: "8.8.8.8"},
		{addr: "93.184.215.14"},
		{addr: "2606:4700:4700::1111"},
		{addr: "::ffff:8.8.8.8"},
		{addr: "64:ff9b::808:808"}, // NAT64 of 8.8.8.8

		{addr: "127.0.0.1", wantReason: "loopback"},
		{addr: "127.255.255.254", wantReason: "loopback"},
		{addr: "::1", wantReason: "loopback"},
		{addr: "::ffff:127.0.0.1", wantReason: "loopback"},
		{addr: "64:ff9b::7f00:1", wantReason: "loopback"}, // NAT64 of 127.0.0.1
		{addr: "10.0.0.5", wantReason: "private"},
		{addr: "172.16.0.1", wantReason: "private"},
		{addr: "172.31.255.255", wantReason: "private"},
		{addr: "192.168.1.1", wantReason: "private"},
		{addr: "::ffff:10.0.0.5", wantReason: "private"},
		{addr: "fc00::1", wantReason: "private (unique local)"},
		{addr: "fd12:3456::1", wantReason: "private (unique local)"},
		{addr: "169.254.169.254", wantReason: "link-local (cloud metadata)"},
		{addr: "::ffff:169.254.169.254", wantReason: "link-local (cloud metadata)"},
		{addr: "169.254.1.1", wantReason: "link-local"},
		{addr: "fe80::1", wantReason: "link-local"},
		{addr: "fe80::1%eth0", wantReason: "scoped (zone eth0)"},
		{addr: "100.64.0.1", wantReason: "shared (carrier-grade NAT)"},
		{addr: "100.127.255.255", wantReason: "shared (carrier-grade NAT)"},
		{addr: "192.0.2.1", wantReason: "documentation"},
		{addr: "2001:db8::1", wantReason: "documentation"},
		{addr: "198.18.0.1", wantReason: "benchmarking"},
		{addr: "240.0.0.1", wantReason: "reserved"},
		{addr: "::7f00:1", wantReason: "reserved (IPv4-compatible)"},
		{addr: "2002:7f00:1::1", wantReason: "6to4"},
		{addr: "2001::1", wantReason: "IETF protocol assignment (Teredo and others)"},
		{addr: "fec0::1", wantReason: "site-local"},

		// Never, allow-listed or not.
		{addr: "0.0.0.0", wantReason: `"this network" (0.0.0.0/8)`, wantAllowed: `"this network" (0.0.0.0/8)`},
		{addr: "0.1.2.3", wantReason: `"this network" (0.0.0.0/8)`, wantAllowed: `"this network" (0.0.0.0/8)`},
		{addr: "::", wantReason: "unspecified", wantAllowed: "unspecified"},
		{addr: "::ffff:0.0.0.0", wantReason: `"this network" (0.0.0.0/8)`, wantAllowed: `"this network" (0.0.0.0/8)`},
		{addr: "224.0.0.1", wantReason: "multicast", wantAllowed: "multicast"},
		{addr: "ff02::1", wantReason: "multicast", wantAllowed: "multicast"},
		{addr: "255.255.255.255", wantReason: "broadcast", wantAllowed: "broadcast"},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			t.Parallel()
			a := netip.MustParseAddr(tt.addr)
			if got := refusal(a, false); got != tt.wantReason {
				t.Errorf("refusal(%s, not allow-listed) = %q, want %q", a, got, tt.wantReason)
			}
			if got := refusal(a, true); got != tt.wantAllowed {
				t.Errorf("refusal(%s, allow-listed) = %q, want %q", a, got, tt.wantAllowed)
			}
		})
	}
}

// The dialer's Control hook is the last check before connect(2): it must
// refuse on its own, whatever dialContext did before it.
func TestCheckAtConnect(t *testing.T) {
	t.Parallel()
	tests := []struct {
		address     string
		allowListed bool
		wantRefused bool
	}{
		{address: "127.0.0.1:443", wantRefused: true},
		{address: "[::ffff:10.0.0.1]:443", wantRefused: true},
		{address: "169.254.169.254:80", wantRefused: true},
		{address: "8.8.8.8:443"},
		{address: "127.0.0.1:8080", allowListed: true},
		{address: "[::]:80", allowListed: true, wantRefused: true},
	}
	for _, tt := range tests {
		err := checkAtConnect("hooks.example.com", tt.allowListed)("tcp", tt.address, nil)
		var ae *AddressError
		if tt.wantRefused != errors.As(err, &ae) {
			t.Errorf("check(%s, allow-listed=%v) = %v, want refused=%v", tt.address, tt.allowListed, err, tt.wantRefused)
		}
		if err != nil && !strings.Contains(err.Error(), "hooks.example.com") {
			t.Errorf("check(%s) error %q does not name the host", tt.address, err)
		}
	}
}
