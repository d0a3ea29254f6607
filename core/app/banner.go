package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"strings"
	"time"
)

// The ready banner: what `kadu serve` prints on stdout once /readyz would
// answer 200, so that a newcomer who ran `go tool task run` sees where to
// connect and how, not only that something listens. It goes to stdout,
// never into the log stream (stderr, JSON by default), which gets one
// "ready" line at Info instead.

// readyPoll is how often the banner re-checks readiness while it waits;
// readyNag is how long it waits before saying which check still fails.
const (
	readyPoll = 100 * time.Millisecond
	readyNag  = 10 * time.Second
)

// DefaultTokenCommand is the command the banner names for a token when
// Options.TokenCommand is empty.
const DefaultTokenCommand = "kadu token"

// announceReady waits until every readiness check passes, then prints the
// banner to stdout and logs "ready", once. It returns when it has printed
// or when ctx is done. pub and adm are the bound listeners (the real
// addresses, also with port 0 in the configuration).
func (a *App) announceReady(ctx context.Context, pub, adm net.Addr, stdout io.Writer) {
	start := time.Now()
	nagged := false
	for {
		res := a.checkReadiness(ctx)
		if ctx.Err() != nil {
			return
		}
		if res.Status == "ready" {
			break
		}
		if !nagged && time.Since(start) >= readyNag {
			nagged = true
			fmt.Fprintf(stdout, "Kadu is not ready yet: %s (GET http://%s/readyz)\n", notReadyChecks(res), adm)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(readyPoll):
		}
	}
	fmt.Fprint(stdout, a.banner(pub, adm))
	a.log.Info("ready", slog.String("mcp_url", a.cfg.MCPURL()), slog.String("addr", pub.String()),
		slog.String("admin_addr", adm.String()), slog.Duration("waited", time.Since(start)))
}

// notReadyChecks names each failing check with its reason, sorted.
func notReadyChecks(res readiness) string {
	var out []string
	for name, c := range res.Checks {
		if c.Status == checkFail {
			out = append(out, name+": "+c.Reason)
		}
	}
	slices.Sort(out)
	return strings.Join(out, "; ")
}

// banner is the text printed when the server is ready: the MCP URL, how to
// get a token, one client command, and the admin endpoints.
func (a *App) banner(pub, adm net.Addr) string {
	mcpURL := a.cfg.MCPURL()
	var b strings.Builder
	fmt.Fprintf(&b, "Kadu MCP endpoint: %s (ready; listening on %s)\n", mcpURL, pub)
	if a.cfg.Auth.Issuer == "" {
		tokenCmd := a.opts.TokenCommand
		if tokenCmd == "" {
			tokenCmd = DefaultTokenCommand
		}
		fmt.Fprintf(&b, "Sign-in: embedded development authorization server at %s (loopback only)\n", a.cfg.PublicOrigin())
		fmt.Fprintf(&b, "Access token: %s   (the same configuration as this server; --scope, --role, --org narrow it)\n", tokenCmd)
	} else {
		fmt.Fprintf(&b, "Sign-in: access tokens come from %s (auth.issuer)\n", a.cfg.Auth.Issuer)
	}
	fmt.Fprintf(&b, "Claude Code: claude mcp add --transport http kadu %s\n", mcpURL)
	fmt.Fprintf(&b, "MCP Inspector (Node 22.19+): npx @modelcontextprotocol/inspector, then Streamable HTTP to %s\n", mcpURL)
	fmt.Fprintf(&b, "Admin: http://%s/healthz, /readyz, /metrics\n", adm)
	return b.String()
}
