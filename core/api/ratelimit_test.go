package api

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/kobana/kadu/core/auth"
)

// budgetLimiter allows a fixed number of requests per key and counts them.
type budgetLimiter struct {
	mu     sync.Mutex
	budget int
	used   map[string]int
}

func (l *budgetLimiter) allow(key string) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.used[key]++
	return l.used[key] <= l.budget, 2500 * time.Millisecond
}

func (l *budgetLimiter) AllowIP(_ context.Context, ip string) (bool, time.Duration) {
	return l.allow("ip:" + ip)
}

func (l *budgetLimiter) AllowOrg(_ context.Context, org string) (bool, time.Duration) {
	return l.allow("org:" + org)
}

func TestLimitedAuth(t *testing.T) {
	verify := &staticVerifier{tokens: map[string]*auth.Principal{
		"good": {OrgID: "org_a", Subject: "u1", Role: auth.RoleViewer, Scopes: []string{auth.ScopeRead}},
	}}
	authn := auth.NewAuthenticator(verify, testResource, nil)
	lim := &budgetLimiter{budget: 2, used: map[string]int{}}
	ec := echo.New()
	g := ec.Group(BasePath, RequestID(), Errors(nil), LimitedAuth(authn, lim))
	g.GET("/usage", func(c echo.Context) error {
		p, _ := auth.PrincipalFrom(c.Request().Context())
		return c.String(http.StatusOK, p.OrgID)
	})
	srv := httptest.NewServer(ec)
	t.Cleanup(srv.Close)

	send := func(tok string) resp {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, srv.URL+BasePath+"/usage", nil)
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var buf [4096]byte
		n, _ := res.Body.Read(buf[:])
		return resp{status: res.StatusCode, header: res.Header, body: buf[:n]}
	}

	tests := []struct {
		name       string
		tok        string
		wantStatus int
		wantCode   string
	}{
		{"no token, first", "", 401, "unauthorized"},
		{"bad token, second", "bad", 401, "unauthorized"},
		{"no token, over the IP limit", "", 429, "rate_limited"},
		{"good token is charged to the org, not the IP", "good", 200, ""},
		{"good token, second", "good", 200, ""},
		{"good token, over the org limit", "good", 429, "rate_limited"},
	}
	for _, tt := range tests {
		r := send(tt.tok)
		if r.status != tt.wantStatus {
			t.Fatalf("%s: status %d, want %d: %s", tt.name, r.status, tt.wantStatus, r.body)
		}
		if tt.wantCode == "" {
			continue
		}
		if code, _ := r.problem(t); code != tt.wantCode {
			t.Errorf("%s: code %q, want %q", tt.name, code, tt.wantCode)
		}
		if tt.wantStatus == 429 {
			if got := r.header.Get("Retry-After"); got != "3" {
				t.Errorf("%s: Retry-After %q, want 3 (2.5 s rounded up)", tt.name, got)
			}
			if r.header.Get("WWW-Authenticate") != "" {
				t.Errorf("%s: a 429 carries no challenge", tt.name)
			}
		}
	}
	if got := lim.used["org:org_a"]; got != 3 {
		t.Errorf("org charged %d times, want 3", got)
	}
}
