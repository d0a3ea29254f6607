package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"time"
)

// keepAlive is the TCP keep-alive period of delivery connections.
const keepAlive = 30 * time.Second

// dialContext is the Transport's only way out. addr is the URL's host and
// port (there is no proxy), so the allow-list is judged on the name the
// admin registered. Every address the name resolves to is checked before
// any is dialled: a name that mixes a public and a private answer is
// refused outright rather than half-trusted.
func (c *Client) dialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("splitting %q into host and port: %w", addr, err)
	}
	allowed := c.allow.contains(host)
	ips, err := c.resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	for _, ip := range ips {
		if why := refusal(ip, allowed); why != "" {
			return nil, &AddressError{Host: host, Addr: ip, Reason: why}
		}
	}
	d := net.Dialer{KeepAlive: keepAlive, Control: checkAtConnect(host, allowed)}
	var errs []error
	for i, ip := range ips {
		// Dial the checked literal, never the name: the resolver is not
		// asked again, so its answer cannot change under us.
		conn, err := dialShare(ctx, &d, network, net.JoinHostPort(ip.String(), port), len(ips)-i)
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}

// minDialShare is the least time one address gets when several share the
// attempt's deadline.
const minDialShare = 2 * time.Second

// dialShare dials addr with an even share of what is left of ctx's
// deadline among the remaining addresses, as net.Dialer does for the
// addresses it resolves itself: one black-holed address must not eat the
// whole attempt.
func dialShare(ctx context.Context, d *net.Dialer, network, addr string, remaining int) (net.Conn, error) {
	if deadline, ok := ctx.Deadline(); ok && remaining > 1 {
		share := max(time.Until(deadline)/time.Duration(remaining), minDialShare)
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, share)
		defer cancel()
	}
	return d.DialContext(ctx, network, addr)
}

// resolve returns the addresses of host: itself when it is an IP literal.
func (c *Client) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if ip, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{ip}, nil
	}
	ips, err := c.opts.Resolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, fmt.Errorf("resolving %s: %w", host, err)
	}
	if len(ips) == 0 {
		return nil, fmt.Errorf("resolving %s: no addresses", host)
	}
	return ips, nil
}

// checkAtConnect is the dialer's Control hook: it sees the address the
// socket is about to connect to, after any resolution, and refuses it by the
// same rule. dialContext has already checked, so this only fires if a
// future change lets the dialer resolve on its own.
func checkAtConnect(host string, allowed bool) func(network, address string, _ syscall.RawConn) error {
	return func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("checking connect address %q: %w", address, err)
		}
		if why := refusal(ap.Addr(), allowed); why != "" {
			return &AddressError{Host: host, Addr: ap.Addr(), Reason: why}
		}
		return nil
	}
}
