package webhook

import (
	"fmt"
	"net/netip"
)

// AddressError reports a connection the Client refused to open because the
// address is not a public unicast one and the host is not allow-listed.
// Result.Err holds it (errors.As finds it) so the delivery log can say which
// address was refused and why.
type AddressError struct {
	Host   string     // the URL's host name or IP literal
	Addr   netip.Addr // the resolved address that was refused
	Reason string     // e.g. "loopback", "link-local (cloud metadata)"
}

func (e *AddressError) Error() string {
	return fmt.Sprintf("refused to connect to %s for host %q: %s address; webhooks are delivered only to public addresses unless an operator allow-lists the host",
		e.Addr, e.Host, e.Reason)
}

// blockedPrefix is one range of the refusal table.
type blockedPrefix struct {
	prefix netip.Prefix
	reason string
	// always: refused even for allow-listed hosts. Nothing listens on these
	// for a webhook, and 0.0.0.0 reaches the local machine on Linux.
	always bool
}

// blocked lists every range that is not globally reachable unicast, from the
// IANA special-purpose registries (IPv4 and IPv6), most specific first so the
// reason names the narrower use. IPv4-mapped IPv6 addresses are unmapped
// before the lookup; NAT64 addresses are judged by the IPv4 address they
// embed.
var blocked = []blockedPrefix{
	// IPv4
	{prefix: netip.MustParsePrefix("169.254.169.254/32"), reason: "link-local (cloud metadata)"},
	{prefix: netip.MustParsePrefix("0.0.0.0/8"), reason: `"this network" (0.0.0.0/8)`, always: true},
	{prefix: netip.MustParsePrefix("10.0.0.0/8"), reason: "private"},
	{prefix: netip.MustParsePrefix("100.64.0.0/10"), reason: "shared (carrier-grade NAT)"},
	{prefix: netip.MustParsePrefix("127.0.0.0/8"), reason: "loopback"},
	{prefix: netip.MustParsePrefix("169.254.0.0/16"), reason: "link-local"},
	{prefix: netip.MustParsePrefix("172.16.0.0/12"), reason: "private"},
	{prefix: netip.MustParsePrefix("192.0.0.0/24"), reason: "IETF protocol assignment"},
	{prefix: netip.MustParsePrefix("192.0.2.0/24"), reason: "documentation"},
	{prefix: netip.MustParsePrefix("192.88.99.0/24"), reason: "6to4 relay anycast"},
	{prefix: netip.MustParsePrefix("192.168.0.0/16"), reason: "private"},
	{prefix: netip.MustParsePrefix("198.18.0.0/15"), reason: "benchmarking"},
	{prefix: netip.MustParsePrefix("198.51.100.0/24"), reason: "documentation"},
	{prefix: netip.MustParsePrefix("203.0.113.0/24"), reason: "documentation"},
	{prefix: netip.MustParsePrefix("224.0.0.0/4"), reason: "multicast", always: true},
	{prefix: netip.MustParsePrefix("255.255.255.255/32"), reason: "broadcast", always: true},
	{prefix: netip.MustParsePrefix("240.0.0.0/4"), reason: "reserved"},

	// IPv6
	{prefix: netip.MustParsePrefix("::/128"), reason: "unspecified", always: true},
	{prefix: netip.MustParsePrefix("::1/128"), reason: "loopback"},
	{prefix: netip.MustParsePrefix("::/8"), reason: "reserved (IPv4-compatible)"},
	{prefix: netip.MustParsePrefix("64:ff9b:1::/48"), reason: "local-use NAT64"},
	{prefix: netip.MustParsePrefix("100::/64"), reason: "discard-only"},
	{prefix: netip.MustParsePrefix("2001::/23"), reason: "IETF protocol assignment (Teredo and others)"},
	{prefix: netip.MustParsePrefix("2001:db8::/32"), reason: "documentation"},
	{prefix: netip.MustParsePrefix("2002::/16"), reason: "6to4"},
	{prefix: netip.MustParsePrefix("3fff::/20"), reason: "documentation"},
	{prefix: netip.MustParsePrefix("5f00::/16"), reason: "segment routing (SRv6)"},
	{prefix: netip.MustParsePrefix("fc00::/7"), reason: "private (unique local)"},
	{prefix: netip.MustParsePrefix("fe80::/10"), reason: "link-local"},
	{prefix: netip.MustParsePrefix("fec0::/10"), reason: "site-local"},
	{prefix: netip.MustParsePrefix("ff00::/8"), reason: "multicast", always: true},
}

// nat64 is the well-known NAT64 prefix (RFC 6052): its last 32 bits are an
// IPv4 address a NAT64 gateway would connect to.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// refusal says why a connection to a may not be opened, or "" when it may.
// allowListed relaxes the policy for development hosts: they may reach
// loopback, private and link-local addresses, never the "always" ranges.
func refusal(a netip.Addr, allowListed bool) string {
	if !a.IsValid() {
		return "invalid"
	}
	if a.Zone() != "" {
		// A zone only means something for link-local targets on this host.
		if allowListed {
			a = a.WithZone("")
		} else {
			return "scoped (zone " + a.Zone() + ")"
		}
	}
	a = a.Unmap()
	if a.Is6() && nat64.Contains(a) {
		b := a.As16()
		a = netip.AddrFrom4([4]byte(b[12:16]))
	}
	for _, p := range blocked {
		if p.prefix.Contains(a) {
			if allowListed && !p.always {
				return ""
			}
			return p.reason
		}
	}
	// The table above covers the registries; this catches whatever it
	// misses rather than letting it through.
	if !a.IsGlobalUnicast() && !allowListed {
		return "non-global"
	}
	return ""
}
