package clientip_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/kobana/kadu/core/clientip"
	"github.com/kobana/kadu/core/config"
	"github.com/labstack/echo/v4"
)

func TestClientAddress(t *testing.T) {
	tests := []struct {
		name    string
		trusted []string
		peer    string
		xff     []string
		want    string
	}{
		{name: "no proxies: the peer", peer: "203.0.113.7:4000", want: "203.0.113.7"},
		{name: "no proxies: forwarded header ignored", peer: "203.0.113.7:4000", xff: []string{"198.51.100.1"}, want: "203.0.113.7"},
		{name: "no proxies: loopback peer still not trusted", peer: "127.0.0.1:4000", xff: []string{"198.51.100.1"}, want: "127.0.0.1"},
		{name: "untrusted peer: forwarded header ignored", trusted: []string{"10.0.0.0/8"}, peer: "203.0.113.7:4000", xff: []string{"198.51.100.1"}, want: "203.0.113.7"},
		{name: "private peer not listed is not trusted", trusted: []string{"10.0.0.0/8"}, peer: "192.168.1.5:4000", xff: []string{"198.51.100.1"}, want: "192.168.1.5"},
		{name: "trusted peer: the forwarded client", trusted: []string{"10.0.0.0/8"}, peer: "10.1.2.3:4000", xff: []string{"198.51.100.1"}, want: "198.51.100.1"},
		{name: "trusted peer by single IP", trusted: []string{"127.0.0.1"}, peer: "127.0.0.1:4000", xff: []string{"198.51.100.1"}, want: "198.51.100.1"},
		{name: "trusted peer without header: the peer", trusted: []string{"10.0.0.0/8"}, peer: "10.1.2.3:4000", want: "10.1.2.3"},
		{name: "spoofed leftmost hop: the rightmost untrusted", trusted: []string{"10.0.0.0/8"}, peer: "10.1.2.3:4000", xff: []string{"1.1.1.1, 198.51.100.1"}, want: "198.51.100.1"},
		{name: "chain of proxies skipped", trusted: []string{"10.0.0.0/8"}, peer: "10.1.2.3:4000", xff: []string{"198.51.100.1, 10.9.9.9"}, want: "198.51.100.1"},
		{name: "several header lines read as one list", trusted: []string{"10.0.0.0/8"}, peer: "10.1.2.3:4000", xff: []string{"1.1.1.1", "198.51.100.1, 10.9.9.9"}, want: "198.51.100.1"},
		{name: "garbage hop: the peer", trusted: []string{"10.0.0.0/8"}, peer: "10.1.2.3:4000", xff: []string{"198.51.100.1, not-an-ip"}, want: "10.1.2.3"},
		{name: "IPv6 client through an IPv6 proxy", trusted: []string{"fd00::/8"}, peer: "[fd00::1]:4000", xff: []string{"2001:db8::5"}, want: "2001:db8::5"},
		{name: "bracketed IPv6 hop", trusted: []string{"fd00::/8"}, peer: "[fd00::1]:4000", xff: []string{"[2001:db8::5]"}, want: "2001:db8::5"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var nets []*net.IPNet
			for _, s := range tc.trusted {
				n, err := config.ParseProxy(s)
				if err != nil {
					t.Fatal(err)
				}
				nets = append(nets, n)
			}
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.RemoteAddr = tc.peer
			for _, v := range tc.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			if got := clientip.New(nets).IP(r); got != tc.want {
				t.Errorf("client address = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestFromRequest(t *testing.T) {
	n, _ := config.ParseProxy("127.0.0.1")
	res := clientip.New([]*net.IPNet{n})
	e := echo.New()
	var got string
	e.Pre(res.Middleware)
	e.GET("/", func(c echo.Context) error { got = clientip.FromRequest(c.Request()); return nil })

	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.RemoteAddr = "127.0.0.1:5000"
	r.Header.Set("X-Forwarded-For", "198.51.100.1")
	e.ServeHTTP(httptest.NewRecorder(), r)
	if got != "198.51.100.1" {
		t.Errorf("through the middleware: %q, want the forwarded client", got)
	}

	// Without the middleware (in-process dispatch): the peer.
	r = httptest.NewRequest(http.MethodGet, "/", nil)
	r.RemoteAddr = "in-process"
	if got := clientip.FromRequest(r); got != "in-process" {
		t.Errorf("without the middleware: %q", got)
	}
}
