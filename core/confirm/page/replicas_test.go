package page

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/confirm"
	"github.com/kobana/kadu/core/devauth"
	"github.com/kobana/kadu/core/mcp"
	"github.com/kobana/kadu/core/store"
	"github.com/kobana/kadu/core/store/pgtest"
)

// TestReplicasWithTheRealConfirmer runs two replicas — each its own
// Confirmer and Page, both registering their own OAuth client — behind a
// round-robin balancer, over one store: SQLite, then PostgreSQL. Every
// step may land on either replica; the call still runs exactly once.
func TestReplicasWithTheRealConfirmer(t *testing.T) {
	backends := []struct {
		name string
		open func(t *testing.T) store.Options
	}{
		{"sqlite", func(t *testing.T) store.Options {
			return store.Options{Driver: store.DriverSQLite, DSN: filepath.Join(t.TempDir(), "kadu.db")}
		}},
		{"postgres", func(t *testing.T) store.Options {
			return store.Options{Driver: store.DriverPostgres, DSN: pgtest.Shared(t).NewDatabase(t)}
		}},
	}
	for _, bk := range backends {
		t.Run(bk.name, func(t *testing.T) {
			ctx := context.Background()
			db, err := store.Open(ctx, bk.open(t))
			if err != nil {
				t.Fatalf("store.Open: %v", err)
			}
			t.Cleanup(func() { _ = db.Close() })
			if _, _, err := db.EnsureOrg(ctx, "org_dev", "developer"); err != nil {
				t.Fatalf("EnsureOrg: %v", err)
			}

			replicas := []*echo.Echo{echo.New(), echo.New()}
			var turn atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				replicas[turn.Add(1)%2].ServeHTTP(w, r)
			}))
			t.Cleanup(srv.Close)
			quiet := slog.New(slog.DiscardHandler)
			dev, err := devauth.New(devauth.Options{Issuer: srv.URL, Resource: srv.URL + "/mcp", Logger: quiet})
			if err != nil {
				t.Fatal(err)
			}
			verifier, err := auth.NewVerifier(auth.Options{Issuer: srv.URL, Resource: srv.URL + "/mcp",
				KeySet: dev.KeySet(), Algorithms: dev.Algorithms(), RequireATJWT: true})
			if err != nil {
				t.Fatal(err)
			}
			inspector, err := dev.RegisterClient(devauth.ClientRegistration{Name: "MCP Inspector",
				RedirectURIs: []string{"http://localhost:6274/oauth/callback"}})
			if err != nil {
				t.Fatal(err)
			}

			next := &countingCatalog{}
			stateKey, sealKey := make([]byte, 32), make([]byte, 32)
			rand.Read(stateKey)
			rand.Read(sealKey)
			var confirmers []*confirm.Confirmer
			for _, e := range replicas {
				dev.Register(e)
				c, err := confirm.New(confirm.Options{Next: next, Store: db, Keys: [][]byte{stateKey}, PublicURL: srv.URL, Logger: quiet})
				if err != nil {
					t.Fatalf("confirm.New: %v", err)
				}
				confirmers = append(confirmers, c)
				p, err := New(Options{PublicURL: srv.URL, Issuer: srv.URL, MCPURL: srv.URL + "/mcp",
					Verify: verifier.Verify, Approvals: c, Describe: c.Explain, ClientNames: dev.ClientName,
					SealKey: sealKey, Logger: quiet, HTTPClient: srv.Client()})
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				p.Register(e)
			}

			// An era-2025 client asks for a destructive tool: it gets a link.
			caller := &auth.Principal{Issuer: srv.URL, Subject: "dev-user", OrgID: "org_dev", Role: auth.RoleOwner,
				Scopes: []string{auth.ScopeRun}, ClientID: inspector.ID}
			tools, _ := next.Tools(ctx, caller)
			res, err := confirmers[0].CallTool(ctx, caller, &mcp.ToolCall{Tool: &tools[0],
				Arguments: json.RawMessage(`{"id":"tsk_0193a5c4e1f27c3a9b1d2e4f5a6b7c8d"}`),
				Client:    mcp.ClientContext{Era: mcp.Era2025, ProtocolVersion: "2025-06-18"}})
			if err != nil {
				t.Fatalf("CallTool: %v", err)
			}
			var link struct {
				Status      string `json:"status"`
				ApprovalID  string `json:"approval_id"`
				ApprovalURL string `json:"approval_url"`
			}
			if err := json.Unmarshal(res.StructuredContent, &link); err != nil || link.Status != "approval_required" {
				t.Fatalf("CallTool answered %s, want approval_required", res.StructuredContent)
			}
			if next.count() != 0 {
				t.Fatalf("the tool ran before anyone approved it")
			}

			env := &env{srv: srv}
			b := env.browser(t)
			page := b.open(strings.TrimPrefix(link.ApprovalURL, srv.URL+approvePath), "dev-user", "org_dev")
			for _, want := range []string{"<strong>MCP Inspector</strong>", "org_dev", "Run a task", `value="continue"`} {
				if !strings.Contains(page.body, want) {
					t.Errorf("approval page lacks %q:\n%s", want, page.body)
				}
			}
			token := formTokenOf(t, page.body)
			var wg sync.WaitGroup
			statuses := make([]int, 4)
			for i := range statuses {
				wg.Go(func() { statuses[i] = b.decide(link.ApprovalID, token, "continue").status })
			}
			wg.Wait()
			won := 0
			for _, s := range statuses {
				switch s {
				case http.StatusOK:
					won++
				case http.StatusConflict:
				default:
					t.Errorf("a concurrent Continue answered %d, want 200 or 409", s)
				}
			}
			if won != 1 || next.count() != 1 {
				t.Errorf("4 concurrent Continues on 2 replicas: %d succeeded, the tool ran %d times; want 1 and 1", won, next.count())
			}
			a, err := db.GetApproval(ctx, "org_dev", link.ApprovalID)
			if err != nil || a.Status != store.ApprovalApproved || !strings.Contains(string(a.Outcome), "exe_1") {
				t.Errorf("stored approval: %s %s (%v); want approved with the tool's outcome", a.Status, a.Outcome, err)
			}
			if again := b.get(approvePath + link.ApprovalID); !strings.Contains(again.body, "already approved") {
				t.Errorf("the page after the decision does not say it was already approved")
			}
		})
	}
}

// countingCatalog serves one destructive tool and counts its runs.
type countingCatalog struct {
	mu    sync.Mutex
	calls int
}

func (c *countingCatalog) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls
}

func (c *countingCatalog) Tools(context.Context, *auth.Principal) ([]mcp.Tool, error) {
	return []mcp.Tool{{Name: "kadu_tasks_run", Title: "Run a task", InputSchema: json.RawMessage(`{"type":"object"}`),
		Annotations: &mcp.ToolAnnotations{DestructiveHint: true},
		Access:      mcp.Access{MinRole: auth.RoleMember, Scope: auth.ScopeRun}}}, nil
}

func (c *countingCatalog) CallTool(_ context.Context, p *auth.Principal, call *mcp.ToolCall) (*mcp.ToolResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	text := fmt.Sprintf(`{"id":"exe_%d","status":"queued","launched_by":%q}`, c.calls, p.Subject)
	return &mcp.ToolResult{Content: []mcp.Content{mcp.Text(text)}}, nil
}

func (c *countingCatalog) Resources(context.Context, *auth.Principal) ([]mcp.Resource, error) {
	return nil, nil
}

func (c *countingCatalog) ResourceTemplates(context.Context, *auth.Principal) ([]mcp.ResourceTemplate, error) {
	return nil, nil
}

func (c *countingCatalog) ReadResource(context.Context, *auth.Principal, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	return nil, mcp.ErrResourceNotFound
}

func (c *countingCatalog) Prompts(context.Context, *auth.Principal) ([]mcp.Prompt, error) {
	return nil, nil
}

func (c *countingCatalog) GetPrompt(context.Context, *auth.Principal, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	return nil, fmt.Errorf("no prompts")
}

func (c *countingCatalog) Complete(context.Context, *auth.Principal, *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	return &mcp.CompleteResult{}, nil
}
