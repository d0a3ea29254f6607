package ratelimit

import (
	"net/netip"
	"strings"
)

// maxRawIP bounds the text kept from a client address that does not parse,
// so an odd RemoteAddr cannot make keys of any length.
const maxRawIP = 64

// orgKey is the key an organisation's requests are charged to.
func orgKey(orgID string) string { return "org:" + orgID }

// ipKey is the key a client address is charged to: "ip:203.0.113.7" for
// IPv4 (an IPv4-mapped IPv6 address counts as its IPv4 address), and the
// /64 network for IPv6, "ip:2001:db8:1:2::/64".
//
// Why /64: it is the smallest network IPv6 hands a site or a single host
// (SLAAC needs it), and a host can use any of its 2^64 addresses — privacy
// extensions rotate them on their own. Limiting per address would give one
// machine an unlimited budget and, in memory, let it fill the key table by
// walking its own subnet. The cost: hosts behind one /64 (a shared
// office network) share one budget, as users behind one IPv4 NAT already do.
//
// ip is an address as net.SplitHostPort leaves it; brackets, a zone
// ("fe80::1%eth0") and a port are tolerated. Text that is not an address is
// kept as it is (truncated), so such callers share per-text budgets.
func ipKey(ip string) string {
	a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(ip, "["), "]"))
	if err != nil {
		ap, perr := netip.ParseAddrPort(ip)
		if perr != nil {
			if len(ip) > maxRawIP {
				ip = ip[:maxRawIP]
			}
			return "ip:" + ip
		}
		a = ap.Addr()
	}
	a = a.WithZone("").Unmap()
	if a.Is6() {
		p, _ := a.Prefix(64) // cannot fail: 64 bits fit an IPv6 address
		return "ip:" + p.String()
	}
	return "ip:" + a.String()
}
