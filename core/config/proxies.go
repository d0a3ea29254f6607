package config

import (
	"fmt"
	"net"
	"net/netip"
)

// ParseProxy reads one entry of http.trusted_proxies: an IP address (one
// host) or a CIDR (a network).
func ParseProxy(s string) (*net.IPNet, error) {
	if p, err := netip.ParsePrefix(s); err == nil {
		p = p.Masked()
		return &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}, nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return nil, fmt.Errorf("trusted proxy %q: want an IP address or a CIDR", s)
	}
	a = a.Unmap()
	return &net.IPNet{IP: a.AsSlice(), Mask: net.CIDRMask(a.BitLen(), a.BitLen())}, nil
}
