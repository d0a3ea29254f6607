package app

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/kobana/kadu/core/config"
)

// TestTrustedProxiesOverHTTP sends requests without a token (charged to
// the client address, rate_limits.ip_per_minute) through the real server.
// Without http.trusted_proxies a client cannot escape its bucket by
// sending X-Forwarded-For; with the loopback peer trusted, each forwarded
// client has its own bucket, over REST and MCP alike.
func TestTrustedProxiesOverHTTP(t *testing.T) {
	const limit = 3
	unauthenticated := func(t *testing.T, srv *testServer, path, xff string) int {
		t.Helper()
		if path == srv.cfg.MCPPath {
			return post(t, srv, "", "tools/list", "", "X-Forwarded-For", xff).StatusCode
		}
		req, err := http.NewRequest(http.MethodGet, srv.baseURL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Forwarded-For", xff)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	for _, path := range []string{"/api/v1/tasks", "/mcp"} {
		t.Run("untrusted forwarded header ignored "+path, func(t *testing.T) {
			srv := startServerWith(t, false, func(c *config.Config) { c.RateLimits.IPPerMinute = limit })
			got := map[int]int{}
			for i := range 2 * limit {
				got[unauthenticated(t, srv, path, fmt.Sprintf("198.51.100.%d", i+1))]++
			}
			if got[http.StatusTooManyRequests] == 0 {
				t.Errorf("statuses %v: want some refused with 429, the forwarded addresses counted as one client (the peer)", got)
			}
		})
		t.Run("trusted proxy's forwarded client has its bucket "+path, func(t *testing.T) {
			srv := startServerWith(t, false, func(c *config.Config) {
				c.RateLimits.IPPerMinute = limit
				c.HTTP.TrustedProxies = []string{"127.0.0.1"}
			})
			for i := range 2 * limit {
				if s := unauthenticated(t, srv, path, fmt.Sprintf("198.51.100.%d", i+1)); s == http.StatusTooManyRequests {
					t.Fatalf("request %d from a distinct forwarded client refused with 429: X-Forwarded-For of a trusted proxy not used", i+1)
				}
			}
			refused := 0
			for range 2 * limit {
				if unauthenticated(t, srv, path, "203.0.113.9") == http.StatusTooManyRequests {
					refused++
				}
			}
			if refused == 0 {
				t.Errorf("one forwarded client sent %d requests, none refused: its bucket is not its own", 2*limit)
			}
		})
	}
}
