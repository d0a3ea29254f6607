package app

import (
	"fmt"
	"net"

	"github.com/kobana/kadu/core/clientip"
	"github.com/kobana/kadu/core/config"
)

// clientResolver builds the client-address rule of http.trusted_proxies.
func clientResolver(list []string) (*clientip.Resolver, error) {
	nets := make([]*net.IPNet, 0, len(list))
	for _, s := range list {
		n, err := config.ParseProxy(s)
		if err != nil {
			return nil, fmt.Errorf("http.trusted_proxies: %w", err)
		}
		nets = append(nets, n)
	}
	return clientip.New(nets), nil
}
