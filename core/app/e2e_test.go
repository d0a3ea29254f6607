package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/config"
	"github.com/kobana/kadu/core/mcp"
)

// e2eCatalog is a test catalog: production code has no fake tools.
type e2eCatalog struct{ calls atomic.Int32 }

func (c *e2eCatalog) Tools(ctx context.Context, p *auth.Principal) ([]mcp.Tool, error) {
	return []mcp.Tool{{
		Name: "whoami", Title: "Who am I", Description: "Returns the caller's organisation and role.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"greeting":{"type":"string"}},"additionalProperties":false}`),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true},
		Access:      mcp.Access{MinRole: auth.RoleViewer, Scope: auth.ScopeRead},
	}, {
		Name: "launch", Title: "Launch", Description: "Needs the run scope.",
		InputSchema: json.RawMessage(`{"type":"object"}`),
		Annotations: &mcp.ToolAnnotations{},
		Access:      mcp.Access{MinRole: auth.RoleMember, Scope: auth.ScopeRun},
	}}, nil
}

func (c *e2eCatalog) CallTool(ctx context.Context, p *auth.Principal, call *mcp.ToolCall) (*mcp.ToolResult, error) {
	c.calls.Add(1)
	var args struct{ Greeting string }
	_ = json.Unmarshal(call.Arguments, &args)
	client := ""
	if call.Client.Info != nil {
		client = call.Client.Info.Name
	}
	return &mcp.ToolResult{Content: []mcp.Content{mcp.Text(fmt.Sprintf("%s %s %s %s era=%s client=%s", args.Greeting, p.OrgID, p.Role, p.Subject, call.Client.Era, client))}}, nil
}

func (c *e2eCatalog) Resources(context.Context, *auth.Principal) ([]mcp.Resource, error) {
	return nil, nil
}
func (c *e2eCatalog) ResourceTemplates(context.Context, *auth.Principal) ([]mcp.ResourceTemplate, error) {
	return nil, nil
}
func (c *e2eCatalog) ReadResource(context.Context, *auth.Principal, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	return nil, mcp.ErrResourceNotFound
}
func (c *e2eCatalog) Prompts(context.Context, *auth.Principal) ([]mcp.Prompt, error) { return nil, nil }
func (c *e2eCatalog) GetPrompt(context.Context, *auth.Principal, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	return nil, mcp.ErrPromptNotFound
}
func (c *e2eCatalog) Complete(context.Context, *auth.Principal, *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	return &mcp.CompleteResult{}, nil
}

// testServer is a real Kadu server on a loopback port.
type testServer struct {
	cfg     *config.Config
	app     *App
	baseURL string
	catalog *e2eCatalog
	logs    *syncBuffer // everything the server logged, at debug level
	stdout  *syncBuffer // what Serve printed (the ready banner)
}

// syncBuffer is a bytes.Buffer safe for the server's concurrent writers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startServer builds Kadu on embedded defaults with a temporary data dir
// and serves it on 127.0.0.1 until the test ends.
func startServer(t testing.TB, autoApprove bool) *testServer {
	t.Helper()
	return startServerWith(t, autoApprove, nil)
}

// startServerWith is startServer with the configuration adjusted by mutate.
func startServerWith(t testing.TB, autoApprove bool, mutate func(*config.Config)) *testServer {
	t.Helper()
	return startServerCatalog(t, autoApprove, &e2eCatalog{}, mutate)
}

// startServerCatalog is startServerWith serving cat; a nil cat serves the
// configured bundles.
func startServerCatalog(t testing.TB, autoApprove bool, cat *e2eCatalog, mutate func(*config.Config)) *testServer {
	t.Helper()
	opts := Options{Version: "test", DevAuthAutoApprove: autoApprove}
	if cat != nil {
		opts.Catalog = cat
	}
	srv := serveApp(t, mutate, opts)
	srv.catalog = cat
	return srv
}

// serveApp serves Kadu on 127.0.0.1 until the test ends, on embedded
// defaults with a temporary data dir adjusted by mutate, built with opts;
// opts.Logger, when nil, records at debug level into the server's logs.
func serveApp(t testing.TB, mutate func(*config.Config), opts Options) *testServer {
	t.Helper()
	pub, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	adm, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Defaults()
	cfg.Addr, cfg.AdminAddr = pub.Addr().String(), adm.Addr().String()
	cfg.PublicURL = "http://" + pub.Addr().String()
	cfg.DataDir = t.TempDir()
	if mutate != nil {
		mutate(&cfg)
	}
	logs := &syncBuffer{}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	a, err := New(context.Background(), &cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	stdout := &syncBuffer{}
	go func() { done <- a.serveOn(ctx, pub, adm, stdout) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return &testServer{cfg: &cfg, app: a, baseURL: cfg.PublicURL, logs: logs, stdout: stdout}
}

// signIn returns an OAuth handler of the official Go SDK that registers
// dynamically, then runs the authorization code flow with PKCE against the
// embedded authorization server, following its redirect like a browser
// that approved at once.
func signIn(t *testing.T) *sdkauth.AuthorizationCodeHandler {
	t.Helper()
	redirect := "http://127.0.0.1:49152/callback" // never listened on: the fetcher reads the redirect itself
	noRedirect := &http.Client{
		Timeout:       10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	h, err := sdkauth.NewAuthorizationCodeHandler(&sdkauth.AuthorizationCodeHandlerConfig{
		DynamicClientRegistrationConfig: &sdkauth.DynamicClientRegistrationConfig{
			Metadata: &oauthex.ClientRegistrationMetadata{
				ClientName:              "Kadu e2e",
				RedirectURIs:            []string{redirect},
				TokenEndpointAuthMethod: "none",
				GrantTypes:              []string{"authorization_code", "refresh_token"},
			},
		},
		RedirectURL: redirect,
		AuthorizationCodeFetcher: func(ctx context.Context, args *sdkauth.AuthorizationArgs) (*sdkauth.AuthorizationResult, error) {
			resp, err := noRedirect.Get(args.URL)
			if err != nil {
				return nil, err
			}
			resp.Body.Close()
			loc, err := url.Parse(resp.Header.Get("Location"))
			if err != nil || resp.StatusCode != http.StatusFound {
				return nil, fmt.Errorf("authorize: status %d, location %q", resp.StatusCode, resp.Header.Get("Location"))
			}
			q := loc.Query()
			if e := q.Get("error"); e != "" {
				return nil, errors.New("authorize: " + e + ": " + q.Get("error_description"))
			}
			return &sdkauth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestOfficialGoClient connects the official MCP Go SDK client to a real
// server in both eras, signing in through the embedded authorization
// server with dynamic registration and PKCE, and checks the negotiated
// version (the SDK silently falls back to initialize when discovery fails,
// so the version is the proof).
func TestOfficialGoClient(t *testing.T) {
	srv := startServer(t, true)
	localhost := strings.Replace(srv.cfg.MCPURL(), "127.0.0.1", "localhost", 1)
	tests := []struct {
		name        string
		endpoint    string // default the public MCP URL
		ask         string
		wantVersion string
		wantEra     string
	}{
		{name: "era 2026-07-28 by server/discover", ask: "2026-07-28", wantVersion: "2026-07-28", wantEra: "era=2026-07-28 client=kadu-e2e"},
		{name: "era 2025-06-18 by initialize", ask: "2025-06-18", wantVersion: "2025-06-18", wantEra: "era=2025 client="},
		// People type localhost as often as 127.0.0.1; the SDK refuses
		// metadata whose resource is not the URL it was given.
		{name: "localhost instead of 127.0.0.1", endpoint: localhost, ask: "2026-07-28", wantVersion: "2026-07-28", wantEra: "era=2026-07-28 client=kadu-e2e"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			endpoint := srv.cfg.MCPURL()
			if tt.endpoint != "" {
				endpoint = tt.endpoint
			}
			oauth := signIn(t)
			transport := &sdk.StreamableClientTransport{
				Endpoint:     endpoint,
				OAuthHandler: oauth,
				MaxRetries:   -1,
			}
			client := sdk.NewClient(&sdk.Implementation{Name: "kadu-e2e", Version: "1.0.0"}, nil)
			cs, err := client.Connect(ctx, transport, &sdk.ClientSessionOptions{ProtocolVersion: tt.ask})
			if err != nil {
				t.Fatalf("Connect: %v", err)
			}
			defer cs.Close()
			init := cs.InitializeResult()
			if init.ProtocolVersion != tt.wantVersion {
				t.Fatalf("negotiated %q, want %q", init.ProtocolVersion, tt.wantVersion)
			}
			if init.ServerInfo == nil || init.ServerInfo.Name != "kadu" || init.ServerInfo.Version != "test" {
				t.Errorf("serverInfo = %+v", init.ServerInfo)
			}
			if !strings.HasPrefix(init.Instructions, "Tools for Kadu, the Kobana financial agent") {
				t.Errorf("instructions = %q", init.Instructions)
			}
			tools, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatalf("ListTools: %v", err)
			}
			// The 401 challenge asks for kadu.read, so that is what the client
			// got: the run-scoped tool is not listed until it steps up.
			if len(tools.Tools) != 1 || tools.Tools[0].Name != "whoami" || tools.Tools[0].Annotations == nil || !tools.Tools[0].Annotations.ReadOnlyHint {
				t.Fatalf("tools = %+v", tools.Tools)
			}
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "whoami", Arguments: map[string]any{"greeting": "olá"}})
			if err != nil {
				t.Fatalf("CallTool: %v", err)
			}
			text := res.Content[0].(*sdk.TextContent).Text
			if want := "olá org_dev owner dev-user " + tt.wantEra; text != want {
				t.Errorf("tool said %q, want %q", text, want)
			}
			// A tool needing kadu.run answers 403 insufficient_scope; the SDK
			// steps up (signs in again asking granted ∪ required) and retries.
			before := srv.catalog.calls.Load()
			res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "launch", Arguments: map[string]any{}})
			if err != nil {
				t.Fatalf("CallTool(launch) after step-up: %v", err)
			}
			if res.IsError || srv.catalog.calls.Load() != before+1 {
				t.Fatalf("launch did not run once: %+v", res)
			}
			tools, err = cs.ListTools(ctx, nil)
			if err != nil || len(tools.Tools) != 2 {
				t.Fatalf("after step-up ListTools = %v, %v; want both tools", tools, err)
			}
			// Secrets never reach the logs, even at debug level.
			ts, err := oauth.TokenSource(ctx)
			if err != nil {
				t.Fatal(err)
			}
			tok, err := ts.Token()
			if err != nil {
				t.Fatal(err)
			}
			logs := srv.logs.String()
			if !strings.Contains(logs, `"msg":"mcp request"`) {
				t.Fatal("the server logged no requests: the check below would prove nothing")
			}
			for name, secret := range map[string]string{"access token": tok.AccessToken, "refresh token": tok.RefreshToken} {
				// Each part of a JWT too: a payload or signature alone is a leak.
				for _, part := range append(strings.Split(secret, "."), secret) {
					if len(part) > 16 && strings.Contains(logs, part) {
						t.Errorf("part of the %s appears in the server's logs", name)
					}
				}
			}
		})
	}
}
