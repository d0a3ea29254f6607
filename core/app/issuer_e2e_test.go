package app

import (
	"net/http"
	"strings"
	"testing"
)

// TestTokenForAnotherAddrSaysWhichIssuer is the newcomer's mistake: a
// token from `kadu token --addr` of another port (same data directory, so
// the same signing key) sent to this server. The 401 — on the REST API and
// on the MCP endpoint, over real HTTP with the embedded issuer — names the
// issuer expected and the one the token carries, and how to mint a match,
// in RFC 6750 §3 form; the log line says the same and never holds the token.
func TestTokenForAnotherAddrSaysWhichIssuer(t *testing.T) {
	srv := startServerWith(t, false, nil)
	other := *srv.cfg
	other.Addr, other.PublicURL = "127.0.0.1:1", "http://127.0.0.1:1"
	token, err := MintDevToken(&other, TokenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := `error_description="issued by http://127.0.0.1:1, not by this server's issuer ` + srv.cfg.IssuerURL() +
		`; mint a matching token with kadu token run with the same --config, --addr and --public-url as kadu serve"`
	checkHeader := func(route string, h http.Header) {
		t.Helper()
		got := h.Get("WWW-Authenticate")
		if !strings.HasPrefix(got, `Bearer error="invalid_token", resource_metadata="`) || !strings.HasSuffix(got, ", "+want) {
			t.Errorf("%s: WWW-Authenticate = %s\nwant invalid_token ending with %s", route, got, want)
		}
	}

	status, h, body := restClient{t: t, base: srv.baseURL, token: token}.do("GET", "/tasks", "")
	if status != http.StatusUnauthorized {
		t.Fatalf("GET /api/v1/tasks: %d %v, want 401", status, body)
	}
	checkHeader("REST", h)
	problem := body["errors"].([]any)[0].(map[string]any)
	if hint, _ := problem["hint"].(string); !strings.Contains(hint, "kadu token run with the same --config, --addr and --public-url") {
		t.Errorf("REST hint = %q, want how to mint a matching token", hint)
	}
	if detail, _ := problem["detail"].(string); !strings.Contains(detail, srv.cfg.IssuerURL()) {
		t.Errorf("REST detail = %q, want the expected issuer", detail)
	}

	req, _ := http.NewRequest("POST", srv.cfg.MCPURL(), strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",`+
			`"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}}}}`))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/list")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("POST /mcp: %d, want 401", res.StatusCode)
	}
	checkHeader("MCP", res.Header)

	logs := srv.logs.String()
	if !strings.Contains(logs, "not by this server's issuer "+srv.cfg.IssuerURL()) || strings.Contains(logs, "id token issued") {
		t.Errorf("log does not name the issuers (or still speaks of an id token):\n%s", logs)
	}
	if strings.Contains(logs, token) || strings.Contains(logs, strings.Split(token, ".")[2]) {
		t.Error("the log holds the token")
	}
}
