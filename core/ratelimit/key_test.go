package ratelimit

import (
	"strings"
	"testing"
)

func TestIPKey(t *testing.T) {
	tests := []struct {
		name string
		ip   string
		want string
	}{
		{name: "IPv4", ip: "203.0.113.7", want: "ip:203.0.113.7"},
		{name: "IPv4-mapped IPv6 is the IPv4 address", ip: "::ffff:203.0.113.7", want: "ip:203.0.113.7"},
		{name: "IPv6 by /64", ip: "2001:db8:1:2:aaaa:bbbb:cccc:dddd", want: "ip:2001:db8:1:2::/64"},
		{name: "another address of the same /64", ip: "2001:db8:1:2::1", want: "ip:2001:db8:1:2::/64"},
		{name: "the next /64", ip: "2001:db8:1:3::1", want: "ip:2001:db8:1:3::/64"},
		{name: "IPv6 in any spelling", ip: "2001:0DB8:0001:0002:0000:0000:0000:0001", want: "ip:2001:db8:1:2::/64"},
		{name: "zone dropped", ip: "fe80::1%eth0", want: "ip:fe80::/64"},
		{name: "brackets tolerated", ip: "[2001:db8::1]", want: "ip:2001:db8::/64"},
		{name: "port tolerated", ip: "[2001:db8::1]:443", want: "ip:2001:db8::/64"},
		{name: "IPv4 with port", ip: "203.0.113.7:5000", want: "ip:203.0.113.7"},
		{name: "loopback", ip: "::1", want: "ip:::/64"},
		{name: "not an address: kept as text", ip: "pipe", want: "ip:pipe"},
		{name: "empty", ip: "", want: "ip:"},
		{name: "long junk truncated", ip: strings.Repeat("x", 500), want: "ip:" + strings.Repeat("x", maxRawIP)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ipKey(tt.ip); got != tt.want {
				t.Errorf("ipKey(%q) = %q, want %q", tt.ip, got, tt.want)
			}
		})
	}
}

func TestKeysDoNotCollide(t *testing.T) {
	// An organisation whose id looks like an address has its own budget.
	if orgKey("203.0.113.7") == ipKey("203.0.113.7") {
		t.Errorf("org and ip keys collide: %q", orgKey("203.0.113.7"))
	}
}
