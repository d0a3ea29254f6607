package app

import (
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kobana/kadu/core/config"
)

// TestReadyBanner: once /readyz would answer 200, Serve prints, once, the
// real MCP URL and listening address, the command that mints a token this
// server accepts, a Claude Code command and the admin endpoints; the log
// gets one "ready" line. The URL it prints is the one that answers.
func TestReadyBanner(t *testing.T) {
	srv := serveApp(t, nil, Options{Version: "test", Catalog: &e2eCatalog{}, TokenCommand: "./bin/kadu token --addr 127.0.0.1:1234"})
	var out string
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(out, "Admin:"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no ready banner within 20 s; stdout:\n%s", out)
		}
		out = srv.stdout.String()
	}
	mcpURL := srv.cfg.MCPURL()
	for _, want := range []string{
		"Kadu MCP endpoint: " + mcpURL + " (ready; listening on " + srv.cfg.Addr + ")\n",
		"Sign-in: embedded development authorization server at " + srv.cfg.PublicOrigin() + " (loopback only)\n",
		"Access token: ./bin/kadu token --addr 127.0.0.1:1234   (the same configuration as this server",
		"Claude Code: claude mcp add --transport http kadu " + mcpURL + "\n",
		"Streamable HTTP to " + mcpURL + "\n",
		"Admin: http://" + srv.cfg.AdminAddr + "/healthz, /readyz, /metrics\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("banner lacks %q:\n%s", want, out)
		}
	}
	res, err := http.Post(mcpURL, "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized || !strings.Contains(res.Header.Get("WWW-Authenticate"), "resource_metadata=") {
		t.Errorf("POST to the printed MCP URL without a token: %d %q, want the 401 challenge", res.StatusCode, res.Header.Get("WWW-Authenticate"))
	}
	time.Sleep(3 * readyPoll)
	if n := strings.Count(srv.stdout.String(), "Kadu MCP endpoint:"); n != 1 {
		t.Errorf("banner printed %d times, want once:\n%s", n, srv.stdout.String())
	}
	if n := strings.Count(srv.logs.String(), `"msg":"ready"`); n != 1 {
		t.Errorf("%d ready log lines, want one", n)
	}
}

// TestReadyBannerExternalIssuer: with auth.issuer, kadu token refuses, so
// the banner names the issuer instead of a command.
func TestReadyBannerExternalIssuer(t *testing.T) {
	cfg := config.Defaults()
	cfg.Auth.Issuer = "https://id.example.com"
	cfg.PublicURL = "https://mcp.example.com"
	a := &App{cfg: &cfg}
	pub, adm := &net.TCPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 8080}, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9090}
	got := a.banner(pub, adm)
	want := "Kadu MCP endpoint: https://mcp.example.com/mcp (ready; listening on 10.0.0.1:8080)\n" +
		"Sign-in: access tokens come from https://id.example.com (auth.issuer)\n" +
		"Claude Code: claude mcp add --transport http kadu https://mcp.example.com/mcp\n" +
		"MCP Inspector (Node 22.19+): npx @modelcontextprotocol/inspector, then Streamable HTTP to https://mcp.example.com/mcp\n" +
		"Admin: http://127.0.0.1:9090/healthz, /readyz, /metrics\n"
	if got != want {
		t.Errorf("banner =\n%s\nwant\n%s", got, want)
	}
}

// TestNotReadyChecksNamesEachFailure: the line printed while start-up
// waits names each failing check and why, in a stable order.
func TestNotReadyChecksNamesEachFailure(t *testing.T) {
	got := notReadyChecks(readiness{Status: "not_ready", Checks: map[string]checkResult{
		checkStore:    {Status: checkFail, Reason: "unreachable: dial"},
		checkBundles:  {Status: checkFail, Reason: `required bundle "tasks" quarantined`},
		checkDraining: {Status: checkOK},
	}})
	if want := `bundles: required bundle "tasks" quarantined; store: unreachable: dial`; got != want {
		t.Errorf("notReadyChecks = %q, want %q", got, want)
	}
}
