package app

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kobana/kadu/core/devauth"
)

// post sends an era-2026 request to the running server.
func post(t *testing.T, srv *testServer, token, method, params string, extra ...string) *http.Response {
	t.Helper()
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	if params == "" {
		params = "{" + meta + "}"
	} else {
		params = strings.TrimSuffix(params, "}") + "," + meta + "}"
	}
	req, _ := http.NewRequest(http.MethodPost, srv.cfg.MCPURL(), strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":`+params+`}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(extra); i += 2 {
		req.Header.Set(extra[i], extra[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// TestAuthOverHTTP sends tokens from the embedded issuer through the real
// server and checks the exact challenges of docs/reference/auth.md. Every other token
// defect (issuer, algorithm, kid, ID tokens, claims) is covered in
// core/auth against the same verifier.
func TestAuthOverHTTP(t *testing.T) {
	srv := startServer(t, false)
	dev, err := newDevAuth(srv.cfg, srv.app.log, false)
	if err != nil {
		t.Fatal(err)
	}
	mint := func(o devauth.MintOptions) string {
		tok, err := dev.Mint(o)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	prm := srv.baseURL + "/.well-known/oauth-protected-resource/mcp"
	tests := []struct {
		name       string
		token      string
		method     string
		params     string
		wantStatus int
		wantHeader string
	}{
		{name: "no token", method: "server/discover", wantStatus: 401,
			wantHeader: `Bearer resource_metadata="` + prm + `", scope="kadu.read"`},
		{name: "token for another resource", token: mint(devauth.MintOptions{Audience: "https://other.example/mcp"}), method: "server/discover", wantStatus: 401,
			wantHeader: `Bearer error="invalid_token", resource_metadata="` + prm + `", scope="kadu.read"`},
		{name: "garbage token", token: "abc.def.ghi", method: "tools/list", wantStatus: 401,
			wantHeader: `Bearer error="invalid_token", resource_metadata="` + prm + `", scope="kadu.read"`},
		{name: "valid token", token: mint(devauth.MintOptions{Scopes: []string{"kadu.read"}}), method: "server/discover", wantStatus: 200},
		{name: "step-up for a role-allowed tool", token: mint(devauth.MintOptions{Role: "member", Scopes: []string{"kadu.read"}}), method: "tools/call", params: `{"name":"launch"}`, wantStatus: 403,
			wantHeader: `Bearer error="insufficient_scope", scope="kadu.read kadu.run", resource_metadata="` + prm + `"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var extra []string
			if tt.method == "tools/call" {
				extra = []string{"Mcp-Name", "launch"}
			}
			resp := post(t, srv, tt.token, tt.method, tt.params, extra...)
			if resp.StatusCode != tt.wantStatus {
				b, _ := io.ReadAll(resp.Body)
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.wantStatus, b)
			}
			got := resp.Header.Get("WWW-Authenticate")
			if tt.wantHeader == "" {
				if got != "" {
					t.Errorf("WWW-Authenticate = %q, want none", got)
				}
				return
			}
			// error_description is prose; everything before it is exact.
			if before, _, _ := strings.Cut(got, `, error_description=`); before != tt.wantHeader {
				t.Errorf("WWW-Authenticate = %q\nwant               %q", got, tt.wantHeader)
			}
			if cc := resp.Header.Get("Cache-Control"); cc != "no-store" {
				t.Errorf("Cache-Control = %q", cc)
			}
		})
	}
}

// TestDiscoveryDocuments checks what a client fetches before it has a
// token: the PRM at both paths and the embedded issuer's metadata.
func TestDiscoveryDocuments(t *testing.T) {
	srv := startServer(t, false)
	for _, path := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"} {
		resp, err := http.Get(srv.baseURL + path)
		if err != nil {
			t.Fatal(err)
		}
		var prm struct {
			Resource             string   `json:"resource"`
			AuthorizationServers []string `json:"authorization_servers"`
			ScopesSupported      []string `json:"scopes_supported"`
		}
		err = json.NewDecoder(resp.Body).Decode(&prm)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s: %d %v", path, resp.StatusCode, err)
		}
		if prm.Resource != srv.cfg.MCPURL() || len(prm.AuthorizationServers) != 1 || prm.AuthorizationServers[0] != srv.baseURL {
			t.Errorf("%s = %+v", path, prm)
		}
		if resp.Header.Get("Access-Control-Allow-Origin") != "*" {
			t.Errorf("%s: no CORS", path)
		}
	}
	resp, err := http.Get(srv.baseURL + "/.well-known/oauth-authorization-server")
	if err != nil {
		t.Fatal(err)
	}
	var as struct {
		Issuer                        string   `json:"issuer"`
		RegistrationEndpoint          string   `json:"registration_endpoint"`
		CodeChallengeMethodsSupported []string `json:"code_challenge_methods_supported"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&as)
	resp.Body.Close()
	if as.Issuer != srv.baseURL || as.RegistrationEndpoint != srv.baseURL+"/oauth/register" || len(as.CodeChallengeMethodsSupported) != 1 {
		t.Errorf("AS metadata = %+v", as)
	}
}

// TestAdminAndDraining checks /healthz and /readyz, and that a draining
// server turns readiness off and answers MCP with 503 + Retry-After.
func TestAdminAndDraining(t *testing.T) {
	srv := startServer(t, false)
	admin := "http://" + srv.cfg.AdminAddr
	for _, p := range []string{"/healthz", "/readyz"} {
		resp, err := http.Get(admin + p)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s: %v %v", p, resp, err)
		}
		resp.Body.Close()
	}
	srv.app.draining.Store(true)
	defer srv.app.draining.Store(false)
	resp, err := http.Get(admin + "/readyz")
	if err != nil || resp.StatusCode != 503 {
		t.Fatalf("readyz while draining: %v %v", resp, err)
	}
	resp.Body.Close()
	resp = post(t, srv, "", "tools/list", "")
	var body struct {
		Error struct {
			Code int `json:"code"`
			Data struct {
				Reason string `json:"reason"`
			} `json:"data"`
		} `json:"error"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&body)
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || body.Error.Code != -31503 || body.Error.Data.Reason != "draining" {
		t.Fatalf("draining MCP answer: %d %q %+v", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
}

// TestRestartKeepsTokens checks that a token minted before a restart is
// accepted after it: the embedded issuer's keys live in the data dir.
func TestRestartKeepsTokens(t *testing.T) {
	first := startServer(t, false)
	tok, err := MintDevToken(first.cfg, TokenOptions{Scopes: []string{"kadu.read"}, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	// A second server on another port cannot accept it (other audience),
	// so restart on the same configuration instead: build a new App.
	again, err := New(context.Background(), first.cfg, Options{Catalog: &e2eCatalog{}, Logger: first.app.log})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	r, _ := http.NewRequest(http.MethodPost, first.cfg.MCPURL(), strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Authorization", "Bearer "+tok)
	w := &recorder{header: http.Header{}}
	again.Handler().ServeHTTP(w, r)
	if w.status != 200 {
		t.Fatalf("token refused after restart: %d", w.status)
	}
}

type recorder struct {
	header http.Header
	status int
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) Write(b []byte) (int, error) { return len(b), nil }
func (r *recorder) WriteHeader(s int)           { r.status = s }

// TestBodyLimitOverHTTP sends bodies over 1 MiB through a real connection,
// one with a declared Content-Length and one chunked, and expects the exact
// 413 body of docs/reference/mcp.md#endpoint-and-transport for both, before authentication.
func TestBodyLimitOverHTTP(t *testing.T) {
	srv := startServer(t, false)
	const want = `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Request body too large (limit 1048576 bytes)"}}` + "\n"
	big := strings.Repeat("x", 1<<20+1)
	for _, chunked := range []bool{false, true} {
		var body io.Reader = strings.NewReader(big)
		if chunked {
			// A reader of unknown length: net/http sends it chunked, with
			// no Content-Length for the server to check up front.
			body = io.MultiReader(strings.NewReader(big))
		}
		req, _ := http.NewRequest(http.MethodPost, srv.cfg.MCPURL(), body)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("chunked=%v: %v", chunked, err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge || string(got) != want {
			t.Errorf("chunked=%v: %d %s", chunked, resp.StatusCode, got)
		}
	}
}
