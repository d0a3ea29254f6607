package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/origin"
)

// testAuthn accepts "Bearer <role>:<scope>[,<scope>…]" and refuses anything
// else with the challenges of docs/reference/auth.md. The real verifier is tested in
// core/auth and end to end in core/app.
type testAuthn struct{}

const testPRM = "http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp"

func (testAuthn) Authenticate(r *http.Request) (*auth.Principal, *auth.Challenge) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return nil, &auth.Challenge{Status: 401, Header: `Bearer resource_metadata="` + testPRM + `", scope="kadu.read"`}
	}
	tok, ok := strings.CutPrefix(h, "Bearer ")
	role, scopes, ok2 := strings.Cut(tok, ":")
	if !ok || !ok2 || !auth.Role(role).Valid() {
		return nil, &auth.Challenge{Status: 401, Header: `Bearer error="invalid_token", resource_metadata="` + testPRM + `", scope="kadu.read"`}
	}
	return &auth.Principal{Issuer: "test", Subject: "u1", OrgID: "org_a", Role: auth.Role(role), Scopes: strings.Split(scopes, ",")}, nil
}

func (testAuthn) InsufficientScope(_ *http.Request, p *auth.Principal, required string) *auth.Challenge {
	return &auth.Challenge{Status: 403, Header: `Bearer error="insufficient_scope", scope="` +
		strings.Join(auth.CloseScopes(append(append([]string{}, p.Scopes...), required)), " ") + `", resource_metadata="` + testPRM + `", error_description="more scope needed"`}
}

// testCatalog is a fixed catalog for protocol tests. It records calls so
// tests can assert that nothing ran.
type testCatalog struct {
	calls chan *ToolCall
}

var schemaObject = json.RawMessage(`{"type":"object"}`)

func (c *testCatalog) Tools(ctx context.Context, p *auth.Principal) ([]Tool, error) {
	return []Tool{
		{Name: "echo", Title: "Echo", Description: "Echoes its arguments.", InputSchema: schemaObject,
			Annotations: &ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true},
			Access:      Access{MinRole: auth.RoleViewer, Scope: auth.ScopeRead}},
		{Name: "launch", Title: "Launch", Description: "Runs something.", InputSchema: schemaObject,
			Annotations: &ToolAnnotations{DestructiveHint: true},
			Access:      Access{MinRole: auth.RoleMember, Scope: auth.ScopeRun}},
		{Name: "admin_only", Title: "Admin only", InputSchema: schemaObject,
			Access: Access{MinRole: auth.RoleAdmin, Scope: auth.ScopeAdmin}},
		{Name: "regional", Title: "Regional", InputSchema: json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"opts":{"type":"object","properties":{"n":{"type":"integer","x-mcp-header":"N"},"dry":{"type":"boolean","x-mcp-header":"Dry"}}}}}`),
			Access: Access{MinRole: auth.RoleViewer, Scope: auth.ScopeRead},
			HeaderParams: []HeaderParam{
				{Header: "Region", Path: []string{"region"}, Type: "string"},
				{Header: "N", Path: []string{"opts", "n"}, Type: "integer"},
				{Header: "Dry", Path: []string{"opts", "dry"}, Type: "boolean"},
			}},
		{Name: "asks", Title: "Asks", InputSchema: schemaObject, RequiresCapabilities: []string{"elicitation"},
			Access: Access{MinRole: auth.RoleViewer, Scope: auth.ScopeRead}},
		{Name: "elicits", Title: "Elicits", InputSchema: schemaObject,
			Access: Access{MinRole: auth.RoleViewer, Scope: auth.ScopeRead}},
		{Name: "faulty", Title: "Faulty", InputSchema: schemaObject,
			Access: Access{MinRole: auth.RoleViewer, Scope: auth.ScopeRead}},
	}, nil
}

func (c *testCatalog) CallTool(ctx context.Context, p *auth.Principal, call *ToolCall) (*ToolResult, error) {
	if c.calls != nil {
		c.calls <- call
	}
	switch call.Tool.Name {
	case "faulty":
		return nil, errors.New("guest trapped: secret detail")
	case "elicits":
		if call.RequestState == "" {
			return &ToolResult{
				InputRequests: map[string]json.RawMessage{"name": json.RawMessage(`{"method":"elicitation/create","params":{"mode":"form","message":"Name?","requestedSchema":{"type":"object"}}}`)},
				RequestState:  "state-1",
			}, nil
		}
	}
	return &ToolResult{Content: []Content{Text(string(call.Arguments))}, Meta: map[string]any{"tool": call.Tool.Name}}, nil
}

func (c *testCatalog) Resources(ctx context.Context, p *auth.Principal) ([]Resource, error) {
	return []Resource{
		{URI: "kobana://kadu/guide", Name: "guide", MIMEType: "text/markdown"},
		{URI: "kobana://kadu/secret", Name: "secret", Access: Access{MinRole: auth.RoleAdmin, Scope: auth.ScopeAdmin}},
	}, nil
}

func (c *testCatalog) ResourceTemplates(ctx context.Context, p *auth.Principal) ([]ResourceTemplate, error) {
	return []ResourceTemplate{{URITemplate: "kobana://kadu/tasks/{id}", Name: "task", MIMEType: "application/json"}}, nil
}

func (c *testCatalog) ReadResource(ctx context.Context, p *auth.Principal, req *ReadResourceRequest) (*ReadResourceResult, error) {
	if req.URI != "kobana://kadu/guide" {
		return nil, ErrResourceNotFound
	}
	return &ReadResourceResult{Contents: []ResourceContents{{URI: req.URI, MIMEType: "text/markdown", Text: "# Guide"}}}, nil
}

func (c *testCatalog) Prompts(ctx context.Context, p *auth.Principal) ([]Prompt, error) {
	return []Prompt{{Name: "run_task", Arguments: []PromptArgument{{Name: "task_id", Required: true}}}}, nil
}

func (c *testCatalog) GetPrompt(ctx context.Context, p *auth.Principal, req *GetPromptRequest) (*GetPromptResult, error) {
	return &GetPromptResult{Messages: []PromptMessage{{Role: "user", Content: Text("Run " + req.Arguments["task_id"])}}}, nil
}

func (c *testCatalog) Complete(ctx context.Context, p *auth.Principal, req *CompleteRequest) (*CompleteResult, error) {
	res := &CompleteResult{}
	for i := range 150 {
		res.Completion.Values = append(res.Completion.Values, fmt.Sprintf("tsk_%03d", i))
	}
	return res, nil
}

func newTestEngine(t testing.TB, cat Catalog) *Engine {
	t.Helper()
	if cat == nil {
		cat = &testCatalog{}
	}
	origins, err := origin.NewPolicy("https://mcp.example.com", true)
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(Options{
		Catalog: cat, Authenticator: testAuthn{}, Origins: origins, ServerVersion: "1.0.0",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// env2026 builds an era-2026 request body for method with params (a JSON
// object without _meta, or "").
func env2026(method, params string) string {
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"test-client","version":"1.0"}}`
	if params == "" || params == "{}" {
		params = "{" + meta + "}"
	} else {
		params = params[:len(params)-1] + "," + meta + "}"
	}
	return `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":` + params + `}`
}

func req2025(method, params string) string {
	if params == "" {
		return `{"jsonrpc":"2.0","id":7,"method":"` + method + `"}`
	}
	return `{"jsonrpc":"2.0","id":7,"method":"` + method + `","params":` + params + `}`
}

// h2026 returns the mirrored headers of an era-2026 request.
func h2026(method, name string) []string {
	h := []string{"MCP-Protocol-Version: 2026-07-28", "Mcp-Method: " + method}
	if name != "" {
		h = append(h, "Mcp-Name: "+name)
	}
	return h
}

// do sends one request through the engine. Headers are "Name: value"
// lines; Content-Type and Authorization get defaults unless given (an
// empty value removes them).
func do(t testing.TB, e http.Handler, method string, headers []string, body string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, "http://127.0.0.1:8080/mcp", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("Authorization", "Bearer owner:kadu.admin")
	seen := map[string]bool{}
	for _, line := range headers {
		k, v, _ := strings.Cut(line, ":")
		k, v = http.CanonicalHeaderKey(strings.TrimSpace(k)), strings.TrimSpace(v)
		if !seen[k] {
			r.Header.Del(k)
			seen[k] = true
		}
		if v != "" || !strings.HasSuffix(line, ":") {
			r.Header.Add(k, v)
		}
	}
	if k := "Host"; seen[k] {
		r.Host = r.Header.Get(k)
	}
	w := httptest.NewRecorder()
	e.ServeHTTP(w, r)
	return w
}

// rpc is a decoded JSON-RPC response.
type rpc struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  map[string]any  `json:"result"`
	Error   *struct {
		Code    int64           `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

func decode(t testing.TB, w *httptest.ResponseRecorder) rpc {
	t.Helper()
	var out rpc
	if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil {
		t.Fatalf("response is not JSON: %v\n%s", err, w.Body.String())
	}
	return out
}
