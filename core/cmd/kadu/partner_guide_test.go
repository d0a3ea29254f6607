package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kobana/kadu/sdk/go/kadu/kadutest"
)

// TestPartnerGuideHotLoad follows sdk/README.md the way a partner does,
// with the real binary: serve with a configuration file of one's own,
// validate a bundle built from source, append the configuration that
// `kadu plugins validate` prints to that file, and see the tool appear in
// tools/list without a restart (the server watches the file), then answer.
func TestPartnerGuideHotLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and a bundle, starts a server")
	}
	bin := buildKadu(t)
	wasm := kadutest.BuildScript(t, "../../../examples/plugins/c")
	dir := t.TempDir()
	bundlePath := filepath.Join(dir, "webhook_health.wasm")
	copyFile(t, wasm, bundlePath)
	partner := filepath.Join(dir, "partner.yaml")
	if err := os.WriteFile(partner, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	addr, admin := freeAddr(t), freeAddr(t)
	env := append(os.Environ(),
		"KADU_DATA_DIR="+filepath.Join(dir, "data"),
		"KADU_LOG__LEVEL=warn",
		// The first-party bundles are not built here; a partner's server
		// serves them beside the new one.
		"KADU_PLUGINS__BUNDLES__TASKS__ENABLED=false",
		"KADU_PLUGINS__BUNDLES__EXECUTIONS__ENABLED=false",
		"KADU_PLUGINS__BUNDLES__FILES__ENABLED=false",
		"KADU_PLUGINS__BUNDLES__WEBHOOKS__ENABLED=false",
	)

	serveProcess(t, bin, env, dir, "serve", "--config", partner, "--addr", addr, "--admin-addr", admin)

	tok := exec.Command(bin, "token", "--config", partner, "--addr", addr, "--role", "admin", "--scope", "kadu.admin")
	tok.Dir, tok.Env = dir, env
	out, err := tok.Output()
	if err != nil {
		t.Fatalf("kadu token: %v", err)
	}
	token := strings.TrimSpace(string(out))
	if tools := toolNames(t, addr, token); len(tools) != 0 {
		t.Fatalf("before the bundle is configured, tools/list = %v", tools)
	}

	// kadu plugins validate webhook_health.wasm | sed -n '/^plugins:/,$p' >> partner.yaml
	validate := exec.Command(bin, "plugins", "validate", "webhook_health.wasm")
	validate.Dir, validate.Env = dir, env
	report, err := validate.Output()
	if err != nil {
		t.Fatalf("kadu plugins validate: %v\n%s", err, report)
	}
	snippet := string(report[bytes.Index(report, []byte("\nplugins:"))+1:])
	for _, want := range []string{"webhook_health:", "sha256: " + sha256File(t, bundlePath), "- GET /api/v1/webhooks"} {
		if !strings.Contains(snippet, want) {
			t.Errorf("validate printed %q, without %q", snippet, want)
		}
	}
	f, err := os.OpenFile(partner, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(snippet); err != nil {
		t.Fatal(err)
	}
	f.Close()

	waitFor(t, "webhook_health_report in tools/list", func() bool {
		return slices.Contains(toolNames(t, addr, token), "webhook_health_report")
	})
	res := mcpPost(t, addr, token, "tools/call", `{"name":"webhook_health_report","arguments":{}}`)
	result, _ := res["result"].(map[string]any)
	if result == nil || result["isError"] == true || result["structuredContent"] == nil {
		t.Errorf("webhook_health_report after the hot load: %v", res)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls ok for up to 20 s.
func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// mcpPost sends one era-2026 request to the server at addr.
func mcpPost(t *testing.T, addr, token, method, params string) map[string]any {
	t.Helper()
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	params = strings.TrimSuffix(strings.TrimSpace(params), "}")
	if params != "{" {
		params += ","
	}
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/mcp",
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":`+params+meta+`}}`))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if method == "tools/call" {
		var p struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal([]byte(params+meta+"}"), &p)
		req.Header.Set("Mcp-Name", p.Name)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s: HTTP %d, not JSON: %s", method, res.StatusCode, raw)
	}
	return out
}

func toolNames(t *testing.T, addr, token string) []string {
	t.Helper()
	res := mcpPost(t, addr, token, "tools/list", "{}")
	result, _ := res["result"].(map[string]any)
	if result == nil {
		t.Fatalf("tools/list: %v", res)
	}
	var names []string
	for _, tool := range result["tools"].([]any) {
		names = append(names, tool.(map[string]any)["name"].(string))
	}
	return names
}
