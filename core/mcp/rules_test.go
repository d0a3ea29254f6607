package mcp

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
)

// TestWireRules has one row per rule of docs/reference/mcp.md and per rung of its order of checks:
// the status, the JSON-RPC code and message, and the headers a client sees.
func TestWireRules(t *testing.T) {
	const (
		absent  = "<absent>"
		tooBig  = `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Request body too large (limit 1048576 bytes)"}}`
		chal401 = `Bearer resource_metadata="` + testPRM + `", scope="kadu.read"`
	)
	big := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"pad":"` + strings.Repeat("x", 1<<20) + `"}}`
	listEnv := env2026("tools/list", "")
	tests := []struct {
		name        string
		httpMethod  string // default POST
		headers     []string
		body        string
		wantStatus  int
		wantCode    int64  // 0: a result (or no body)
		wantMessage string // substring of error.message
		wantID      string // raw id expected in an error; default "1"/"7" from the body, "null" when unparsed
		wantHeaders map[string]string
		wantBody    string // exact body, trailing newline trimmed
	}{
		// Endpoint and transport: HTTP method.
		{name: "GET is 405", httpMethod: "GET", wantStatus: 405, wantCode: -32600, wantHeaders: map[string]string{"Allow": "POST, OPTIONS", "Cache-Control": "no-store"}},
		{name: "DELETE is 405", httpMethod: "DELETE", wantStatus: 405, wantCode: -32600, wantHeaders: map[string]string{"Allow": "POST, OPTIONS"}},
		{name: "PUT is 405", httpMethod: "PUT", body: listEnv, wantStatus: 405, wantCode: -32600},
		{name: "preflight from loopback origin", httpMethod: "OPTIONS", headers: []string{"Origin: http://localhost:6274", "Access-Control-Request-Method: POST", "Access-Control-Request-Headers: authorization, mcp-param-region, mcp-name"},
			wantStatus: 204, wantHeaders: map[string]string{"Access-Control-Allow-Origin": "http://localhost:6274", "Access-Control-Allow-Methods": "POST", "Access-Control-Allow-Headers": "authorization, mcp-param-region, mcp-name"}},
		{name: "OPTIONS without Origin lists the methods", httpMethod: "OPTIONS", wantStatus: 204, wantHeaders: map[string]string{"Allow": "POST, OPTIONS", "Access-Control-Allow-Origin": absent}},
		{name: "preflight from foreign origin", httpMethod: "OPTIONS", headers: []string{"Origin: https://evil.example", "Access-Control-Request-Method: POST"},
			wantStatus: 403, wantHeaders: map[string]string{"Access-Control-Allow-Origin": absent}},
		// Endpoint: Host and Origin (rung 2).
		{name: "foreign Host on loopback listener", headers: append(h2026("tools/list", ""), "Host: attacker.example:8080"), body: listEnv, wantStatus: 403, wantCode: -32600, wantID: "null"},
		{name: "public Host allowed", headers: append(h2026("tools/list", ""), "Host: mcp.example.com"), body: listEnv, wantStatus: 200},
		{name: "[::1] Host allowed", headers: append(h2026("tools/list", ""), "Host: [::1]:9999"), body: listEnv, wantStatus: 200},
		{name: "Origin null", headers: append(h2026("tools/list", ""), "Origin: null"), body: listEnv, wantStatus: 403, wantCode: -32600, wantID: "null"},
		{name: "foreign Origin", headers: append(h2026("tools/list", ""), "Origin: http://evil.example"), body: listEnv, wantStatus: 403, wantCode: -32600},
		{name: "loopback lookalike Origin", headers: append(h2026("tools/list", ""), "Origin: http://127.0.0.1.evil.example"), body: listEnv, wantStatus: 403, wantCode: -32600},
		{name: "loopback Origin any port gets CORS", headers: append(h2026("tools/list", ""), "Origin: http://127.0.0.1:5173"), body: listEnv, wantStatus: 200,
			wantHeaders: map[string]string{"Access-Control-Allow-Origin": "http://127.0.0.1:5173", "Vary": "Origin", "Access-Control-Expose-Headers": "MCP-Protocol-Version, WWW-Authenticate"}},
		{name: "public Origin allowed", headers: append(h2026("tools/list", ""), "Origin: https://mcp.example.com"), body: listEnv, wantStatus: 200},
		{name: "public host on another scheme refused", headers: append(h2026("tools/list", ""), "Origin: http://mcp.example.com"), body: listEnv, wantStatus: 403, wantCode: -32600},
		// Endpoint: Content-Type, Accept, size (rung 3).
		{name: "text/plain is 415", headers: []string{"Content-Type: text/plain"}, body: listEnv, wantStatus: 415, wantCode: -32600, wantID: "null"},
		{name: "missing Content-Type is 415", headers: []string{"Content-Type:"}, body: listEnv, wantStatus: 415, wantCode: -32600},
		{name: "latin1 charset is 415", headers: []string{"Content-Type: application/json; charset=iso-8859-1"}, body: listEnv, wantStatus: 415, wantCode: -32600},
		{name: "Content-Type compared case-insensitively", headers: append(h2026("tools/list", ""), "Content-Type: Application/JSON; Charset=UTF-8"), body: listEnv, wantStatus: 200},
		{name: "Accept text/html is 406", headers: []string{"Accept: text/html"}, body: listEnv, wantStatus: 406, wantCode: -32600},
		{name: "Accept json with q=0 is 406", headers: []string{"Accept: application/json;q=0, text/event-stream"}, body: listEnv, wantStatus: 406, wantCode: -32600},
		{name: "Accept */* is fine", headers: append(h2026("tools/list", ""), "Accept: */*"), body: listEnv, wantStatus: 200},
		{name: "Accept application/* is fine", headers: append(h2026("tools/list", ""), "Accept: text/event-stream, application/*;q=0.5"), body: listEnv, wantStatus: 200},
		{name: "Accept with only event-stream is 406", headers: []string{"Accept: text/event-stream"}, body: listEnv, wantStatus: 406, wantCode: -32600},
		{name: "no Accept is fine", headers: append(h2026("tools/list", ""), "Accept:"), body: listEnv, wantStatus: 200},
		{name: "oversized body is 413 with the exact body", body: big, wantStatus: 413, wantBody: tooBig},
		{name: "size is checked before auth", headers: []string{"Authorization:"}, body: big, wantStatus: 413, wantBody: tooBig},
		// Rung 4: authentication before any method.
		{name: "no token is 401", headers: []string{"Authorization:"}, body: listEnv, wantStatus: 401, wantCode: CodeUnauthorized, wantID: "null",
			wantHeaders: map[string]string{"WWW-Authenticate": chal401, "Cache-Control": "no-store", "MCP-Protocol-Version": absent}},
		{name: "server/discover needs a token", headers: append(h2026("server/discover", ""), "Authorization:"), body: env2026("server/discover", ""), wantStatus: 401, wantCode: CodeUnauthorized},
		{name: "bad token is 401 invalid_token", headers: []string{"Authorization: Bearer nope"}, body: listEnv, wantStatus: 401, wantCode: CodeUnauthorized,
			wantHeaders: map[string]string{"WWW-Authenticate": `Bearer error="invalid_token", resource_metadata="` + testPRM + `", scope="kadu.read"`}},
		{name: "auth comes before JSON parsing", headers: []string{"Authorization:"}, body: `{nope`, wantStatus: 401, wantCode: CodeUnauthorized},
		// Rung 5: JSON shape.
		{name: "malformed JSON is -32700", body: `{"jsonrpc":"2.0",`, wantStatus: 400, wantCode: -32700, wantID: "null"},
		{name: "empty body is -32700", body: ``, wantStatus: 400, wantCode: -32700},
		{name: "batch is 400", body: `[` + listEnv + `]`, wantStatus: 400, wantCode: -32600, wantID: "null", wantMessage: "batch"},
		{name: "empty array is 400", body: `[]`, wantStatus: 400, wantCode: -32600},
		{name: "non-object is 400", body: `42`, wantStatus: 400, wantCode: -32600},
		{name: "posted response is 400", body: `{"jsonrpc":"2.0","id":3,"result":{}}`, wantStatus: 400, wantCode: -32600, wantID: "3"},
		{name: "posted error response is 400", body: `{"jsonrpc":"2.0","id":3,"error":{"code":1,"message":"x"}}`, wantStatus: 400, wantCode: -32600, wantID: "3"},
		{name: "null id is 400", body: `{"jsonrpc":"2.0","id":null,"method":"ping"}`, wantStatus: 400, wantCode: -32600, wantID: "null"},
		{name: "object id is 400", body: `{"jsonrpc":"2.0","id":{},"method":"ping"}`, wantStatus: 400, wantCode: -32600, wantID: "null"},
		{name: "fractional id is 400", body: `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, wantStatus: 400, wantCode: -32600, wantID: "null"},
		{name: "wrong jsonrpc echoes the id", body: `{"jsonrpc":"1.0","id":"a","method":"ping"}`, wantStatus: 400, wantCode: -32600, wantID: `"a"`},
		{name: "missing jsonrpc", body: `{"id":2,"method":"ping"}`, wantStatus: 400, wantCode: -32600, wantID: "2"},
		{name: "duplicate method", body: `{"jsonrpc":"2.0","id":2,"method":"ping","method":"tools/list"}`, wantStatus: 400, wantCode: -32600, wantMessage: "duplicate"},
		{name: "duplicate method via escape", body: `{"jsonrpc":"2.0","id":2,"method":"ping","\u006dethod":"tools/list"}`, wantStatus: 400, wantCode: -32600},
		{name: "duplicate id", body: `{"jsonrpc":"2.0","id":2,"id":3,"method":"ping"}`, wantStatus: 400, wantCode: -32600},
		{name: "duplicate params.name", headers: h2026("tools/call", "echo"), body: `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","name":"launch"}}`, wantStatus: 400, wantCode: -32600, wantID: "2"},
		{name: "duplicate _meta key", body: `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/protocolVersion":"2025-06-18"}}}`, wantStatus: 400, wantCode: -32600},
		{name: "method not a string", body: `{"jsonrpc":"2.0","id":2,"method":5}`, wantStatus: 400, wantCode: -32600},
		// Rung 6: notifications.
		{name: "notification is 202", body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, wantStatus: 202, wantHeaders: map[string]string{"MCP-Protocol-Version": absent}},
		{name: "notification skips era checks", headers: []string{"MCP-Protocol-Version: 1999-01-01"}, body: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, wantStatus: 202},
		// Protocol eras, rung 7: era.
		{name: "era 2026 discovery", headers: h2026("server/discover", ""), body: env2026("server/discover", ""), wantStatus: 200, wantHeaders: map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Session-Id": absent}},
		{name: "envelope version not a string", headers: h2026("tools/list", ""), body: `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":20260728,"io.modelcontextprotocol/clientCapabilities":{}}}}`, wantStatus: 400, wantCode: -32602},
		{name: "missing clientCapabilities", headers: h2026("tools/list", ""), body: `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, wantStatus: 400, wantCode: -32602, wantHeaders: map[string]string{"MCP-Protocol-Version": absent}},
		{name: "clientCapabilities not an object", headers: h2026("tools/list", ""), body: `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":[]}}}`, wantStatus: 400, wantCode: -32602},
		{name: "malformed clientInfo is ignored", headers: h2026("tools/list", ""), body: `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":"x"}}}`, wantStatus: 200},
		{name: "MCP-Protocol-Version missing", headers: []string{"Mcp-Method: tools/list"}, body: listEnv, wantStatus: 400, wantCode: -32020, wantMessage: "Header mismatch: MCP-Protocol-Version", wantHeaders: map[string]string{"MCP-Protocol-Version": absent}},
		{name: "MCP-Protocol-Version repeated", headers: []string{"MCP-Protocol-Version: 2026-07-28", "MCP-Protocol-Version: 2026-07-28", "Mcp-Method: tools/list"}, body: listEnv, wantStatus: 400, wantCode: -32020},
		{name: "MCP-Protocol-Version differs from envelope", headers: []string{"MCP-Protocol-Version: 2025-06-18", "Mcp-Method: tools/list"}, body: listEnv, wantStatus: 400, wantCode: -32020},
		{name: "Mcp-Method missing", headers: []string{"MCP-Protocol-Version: 2026-07-28"}, body: listEnv, wantStatus: 400, wantCode: -32020, wantMessage: "Mcp-Method"},
		{name: "Mcp-Method differs", headers: h2026("tools/call", ""), body: listEnv, wantStatus: 400, wantCode: -32020},
		{name: "Mcp-Method is case-sensitive", headers: h2026("Tools/List", ""), body: listEnv, wantStatus: 400, wantCode: -32020},
		{name: "Mcp-Method repeated", headers: append(h2026("tools/list", ""), "Mcp-Method: tools/list"), body: listEnv, wantStatus: 400, wantCode: -32020},
		{name: "Mcp-Name missing on tools/call", headers: h2026("tools/call", ""), body: env2026("tools/call", `{"name":"echo"}`), wantStatus: 400, wantCode: -32020, wantMessage: "Mcp-Name"},
		{name: "Mcp-Name differs", headers: h2026("tools/call", "launch"), body: env2026("tools/call", `{"name":"echo"}`), wantStatus: 400, wantCode: -32020},
		{name: "Mcp-Name in base64", headers: h2026("tools/call", "=?base64?ZWNobw==?="), body: env2026("tools/call", `{"name":"echo"}`), wantStatus: 200},
		{name: "Mcp-Name with bad base64", headers: h2026("tools/call", "=?base64?ZWNobw?="), body: env2026("tools/call", `{"name":"echo"}`), wantStatus: 400, wantCode: -32020},
		{name: "Mcp-Name uppercase marker is a literal", headers: h2026("tools/call", "=?BASE64?ZWNobw==?="), body: env2026("tools/call", `{"name":"echo"}`), wantStatus: 400, wantCode: -32020},
		{name: "Mcp-Name repeated", headers: append(h2026("tools/call", "echo"), "Mcp-Name: echo"), body: env2026("tools/call", `{"name":"echo"}`), wantStatus: 400, wantCode: -32020},
		{name: "Mcp-Name on prompts/get", headers: h2026("prompts/get", "other"), body: env2026("prompts/get", `{"name":"run_task","arguments":{"task_id":"t"}}`), wantStatus: 400, wantCode: -32020},
		{name: "Mcp-Name on resources/read is the URI", headers: h2026("resources/read", "kobana://kadu/guide"), body: env2026("resources/read", `{"uri":"kobana://kadu/guide"}`), wantStatus: 200},
		{name: "Mcp-Name not needed on tools/list", headers: h2026("tools/list", ""), body: listEnv, wantStatus: 200},
		{name: "envelope with a 2025 version", headers: []string{"MCP-Protocol-Version: 2025-06-18", "Mcp-Method: tools/list"}, body: strings.Replace(listEnv, "2026-07-28", "2025-06-18", 1), wantStatus: 400, wantCode: -32022,
			wantHeaders: map[string]string{"MCP-Protocol-Version": absent}},
		{name: "envelope with an unknown version", headers: []string{"MCP-Protocol-Version: 1999-01-01", "Mcp-Method: tools/list"}, body: strings.Replace(listEnv, "2026-07-28", "1999-01-01", 1), wantStatus: 400, wantCode: -32022},
		{name: "2026 header without envelope", headers: h2026("tools/list", ""), body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, wantStatus: 400, wantCode: -32602, wantHeaders: map[string]string{"MCP-Protocol-Version": absent}},
		{name: "2026 header without envelope on server/discover", headers: h2026("server/discover", ""), body: `{"jsonrpc":"2.0","id":1,"method":"server/discover"}`, wantStatus: 400, wantCode: -32602},
		{name: "unknown header version without envelope", headers: []string{"MCP-Protocol-Version: 1999-01-01"}, body: req2025("tools/list", ""), wantStatus: 400, wantCode: -32022},
		{name: "initialize ignores the header", headers: []string{"MCP-Protocol-Version: 1999-01-01"}, body: req2025("initialize", `{"protocolVersion":"2025-06-18"}`), wantStatus: 200, wantHeaders: map[string]string{"MCP-Protocol-Version": "2025-06-18"}},
		{name: "era 2025 without header is 2025-03-26", body: req2025("tools/list", ""), wantStatus: 200, wantHeaders: map[string]string{"MCP-Protocol-Version": "2025-03-26"}},
		{name: "era 2025 echoes its header", headers: []string{"MCP-Protocol-Version: 2025-06-18", "Mcp-Method: bogus"}, body: req2025("tools/list", ""), wantStatus: 200, wantHeaders: map[string]string{"MCP-Protocol-Version": "2025-06-18"}},
		{name: "session headers are ignored", headers: append(h2026("tools/list", ""), "Mcp-Session-Id: abc", "Last-Event-ID: 5"), body: listEnv, wantStatus: 200, wantHeaders: map[string]string{"Mcp-Session-Id": absent}},
		// Methods, rung 8: method tables.
		{name: "ping is unknown in era 2026", headers: h2026("ping", ""), body: env2026("ping", ""), wantStatus: 404, wantCode: -32601},
		{name: "initialize is unknown in era 2026", headers: h2026("initialize", ""), body: env2026("initialize", `{"protocolVersion":"2026-07-28"}`), wantStatus: 404, wantCode: -32601},
		{name: "logging/setLevel is unknown in era 2026", headers: h2026("logging/setLevel", ""), body: env2026("logging/setLevel", `{"level":"info"}`), wantStatus: 404, wantCode: -32601},
		{name: "subscriptions/listen is unknown", headers: h2026("subscriptions/listen", ""), body: env2026("subscriptions/listen", ""), wantStatus: 404, wantCode: -32601},
		{name: "server/discover is unknown in era 2025", body: req2025("server/discover", ""), wantStatus: 200, wantCode: -32601},
		{name: "unknown method in era 2025", body: req2025("resources/subscribe", `{"uri":"x"}`), wantStatus: 200, wantCode: -32601},
		{name: "ping in era 2025", body: req2025("ping", ""), wantStatus: 200, wantBody: `{"jsonrpc":"2.0","id":7,"result":{}}`},
		// Protocol eras: initialize negotiation.
		{name: "initialize 2025-03-26", body: req2025("initialize", `{"protocolVersion":"2025-03-26"}`), wantStatus: 200, wantHeaders: map[string]string{"MCP-Protocol-Version": "2025-03-26"}},
		{name: "initialize 2025-11-25 gets 2025-06-18", body: req2025("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"ts","version":"1"}}`), wantStatus: 200, wantHeaders: map[string]string{"MCP-Protocol-Version": "2025-06-18"}},
		{name: "initialize 2024-11-05 gets 2025-06-18", body: req2025("initialize", `{"protocolVersion":"2024-11-05"}`), wantStatus: 200, wantHeaders: map[string]string{"MCP-Protocol-Version": "2025-06-18"}},
		{name: "initialize 2026-07-28 gets 2025-06-18", body: req2025("initialize", `{"protocolVersion":"2026-07-28"}`), wantStatus: 200, wantHeaders: map[string]string{"MCP-Protocol-Version": "2025-06-18"}},
		{name: "initialize without protocolVersion", body: req2025("initialize", `{"capabilities":{}}`), wantStatus: 200, wantCode: -32602},
		{name: "initialize with numeric protocolVersion", body: req2025("initialize", `{"protocolVersion":2025}`), wantStatus: 200, wantCode: -32602},
		// Rung 9: params.
		{name: "unknown tool", body: req2025("tools/call", `{"name":"nope"}`), wantStatus: 200, wantCode: -32602, wantMessage: "Unknown tool: nope"},
		{name: "role-forbidden tool looks unknown", headers: []string{"Authorization: Bearer member:kadu.admin"}, body: req2025("tools/call", `{"name":"admin_only"}`), wantStatus: 200, wantCode: -32602, wantMessage: "Unknown tool: admin_only"},
		{name: "arguments not an object", body: req2025("tools/call", `{"name":"echo","arguments":[1]}`), wantStatus: 200, wantCode: -32602, wantMessage: "arguments"},
		{name: "name not a string", body: req2025("tools/call", `{"name":5}`), wantStatus: 200, wantCode: -32602},
		{name: "bad cursor", body: req2025("tools/list", `{"cursor":"garbage"}`), wantStatus: 200, wantCode: -32602, wantMessage: "cursor"},
		{name: "resource not found in era 2026", headers: h2026("resources/read", "kobana://kadu/tasks/tsk_x"), body: env2026("resources/read", `{"uri":"kobana://kadu/tasks/tsk_x"}`), wantStatus: 200, wantCode: -32602, wantMessage: "Resource not found"},
		{name: "resource not found in era 2025", body: req2025("resources/read", `{"uri":"kobana://kadu/tasks/tsk_x"}`), wantStatus: 200, wantCode: -32002, wantMessage: "Resource not found"},
		{name: "unknown prompt", body: req2025("prompts/get", `{"name":"nope"}`), wantStatus: 200, wantCode: -32602},
		{name: "prompt missing a required argument", body: req2025("prompts/get", `{"name":"run_task"}`), wantStatus: 200, wantCode: -32602, wantMessage: "task_id"},
		{name: "completion without ref", body: req2025("completion/complete", `{"argument":{"name":"id","value":""}}`), wantStatus: 200, wantCode: -32602},
		// Rung 11: scope step-up.
		{name: "role allows, scope missing: 403 step-up", headers: []string{"Authorization: Bearer member:kadu.read"}, body: req2025("tools/call", `{"name":"launch"}`), wantStatus: 403, wantCode: CodeForbidden, wantID: "7",
			wantHeaders: map[string]string{"WWW-Authenticate": `Bearer error="insufficient_scope", scope="kadu.read kadu.run", resource_metadata="` + testPRM + `", error_description="more scope needed"`}},
		// Rung 12: client capabilities.
		{name: "capability missing is -32021", headers: h2026("tools/call", "asks"), body: env2026("tools/call", `{"name":"asks"}`), wantStatus: 400, wantCode: -32021},
		{name: "era 2025 cannot answer input requests", body: req2025("tools/call", `{"name":"elicits"}`), wantStatus: 400, wantCode: -32021},
		// Rung 13: Mcp-Param-*.
		{name: "param header matches", headers: append(h2026("tools/call", "regional"), "Mcp-Param-Region: us-west1", "Mcp-Param-N: 42", "Mcp-Param-Dry: true"), body: env2026("tools/call", `{"name":"regional","arguments":{"region":"us-west1","opts":{"n":42.0,"dry":true}}}`), wantStatus: 200},
		{name: "param header missing", headers: h2026("tools/call", "regional"), body: env2026("tools/call", `{"name":"regional","arguments":{"region":"us-west1"}}`), wantStatus: 400, wantCode: -32020, wantMessage: "Mcp-Param-Region"},
		{name: "param header differs", headers: append(h2026("tools/call", "regional"), "Mcp-Param-Region: eu"), body: env2026("tools/call", `{"name":"regional","arguments":{"region":"us-west1"}}`), wantStatus: 400, wantCode: -32020},
		{name: "param header without argument", headers: append(h2026("tools/call", "regional"), "Mcp-Param-Region: eu"), body: env2026("tools/call", `{"name":"regional","arguments":{}}`), wantStatus: 400, wantCode: -32020},
		{name: "param header with null argument must be absent", headers: append(h2026("tools/call", "regional"), "Mcp-Param-Region: null"), body: env2026("tools/call", `{"name":"regional","arguments":{"region":null}}`), wantStatus: 400, wantCode: -32020},
		{name: "integer param compared numerically", headers: append(h2026("tools/call", "regional"), "Mcp-Param-N: 7"), body: env2026("tools/call", `{"name":"regional","arguments":{"opts":{"n":7}}}`), wantStatus: 200},
		{name: "integer param differs", headers: append(h2026("tools/call", "regional"), "Mcp-Param-N: 7.0"), body: env2026("tools/call", `{"name":"regional","arguments":{"opts":{"n":7}}}`), wantStatus: 400, wantCode: -32020},
		{name: "boolean param must be true/false", headers: append(h2026("tools/call", "regional"), "Mcp-Param-Dry: TRUE"), body: env2026("tools/call", `{"name":"regional","arguments":{"opts":{"dry":true}}}`), wantStatus: 400, wantCode: -32020},
		{name: "param header in base64", headers: append(h2026("tools/call", "regional"), "Mcp-Param-Region: =?base64?U8OjbyBQYXVsbw==?="), body: env2026("tools/call", `{"name":"regional","arguments":{"region":"São Paulo"}}`), wantStatus: 200},
		{name: "param headers ignored in era 2025", headers: []string{"Mcp-Param-Region: eu"}, body: req2025("tools/call", `{"name":"regional","arguments":{"region":"us"}}`), wantStatus: 200},
		// Rung 14: dispatch.
		{name: "bundle fault is -32603 without details", body: req2025("tools/call", `{"name":"faulty"}`), wantStatus: 200, wantCode: -32603, wantMessage: "Internal error"},
	}
	e := newTestEngine(t, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			method := tt.httpMethod
			if method == "" {
				method = http.MethodPost
			}
			w := do(t, e, method, tt.headers, tt.body)
			if w.Code != tt.wantStatus {
				t.Fatalf("status = %d, want %d; body %s", w.Code, tt.wantStatus, w.Body)
			}
			if got := w.Header().Get("Cache-Control"); got != "no-store" {
				t.Errorf("Cache-Control = %q, want no-store", got)
			}
			if got := w.Header().Get("X-Request-Id"); !strings.HasPrefix(got, "req_") {
				t.Errorf("X-Request-Id = %q, want req_…", got)
			}
			for k, want := range tt.wantHeaders {
				got, ok := w.Header()[http.CanonicalHeaderKey(k)]
				switch {
				case want == absent && ok:
					t.Errorf("header %s = %q, want absent", k, got)
				case want != absent && (len(got) != 1 || got[0] != want):
					t.Errorf("header %s = %q, want %q", k, got, want)
				}
			}
			if tt.wantBody != "" {
				if got := strings.TrimSuffix(w.Body.String(), "\n"); got != tt.wantBody {
					t.Errorf("body = %s, want %s", got, tt.wantBody)
				}
				return
			}
			if tt.wantStatus == 202 || tt.wantStatus == 204 || (tt.wantStatus == 403 && method == "OPTIONS") {
				if w.Body.Len() != 0 {
					t.Errorf("body = %q, want empty", w.Body)
				}
				return
			}
			if bytes.Contains(bytes.TrimSuffix(w.Body.Bytes(), []byte("\n")), []byte("\n")) {
				t.Errorf("body has a raw newline inside the object: %q", w.Body)
			}
			if ct := w.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q, want application/json", ct)
			}
			got := decode(t, w)
			if got.JSONRPC != "2.0" {
				t.Errorf("jsonrpc = %q", got.JSONRPC)
			}
			if tt.wantCode == 0 {
				if got.Error != nil || got.Result == nil {
					t.Fatalf("want a result, got %s", w.Body)
				}
				return
			}
			if got.Error == nil {
				t.Fatalf("want error %d, got %s", tt.wantCode, w.Body)
			}
			if got.Error.Code != tt.wantCode {
				t.Errorf("code = %d, want %d (%s)", got.Error.Code, tt.wantCode, got.Error.Message)
			}
			if !strings.Contains(got.Error.Message, tt.wantMessage) {
				t.Errorf("message = %q, want it to contain %q", got.Error.Message, tt.wantMessage)
			}
			wantID := tt.wantID
			preParse := tt.wantCode == CodeUnauthorized || (tt.wantStatus == 403 && tt.wantCode == CodeInvalidRequest) ||
				tt.wantStatus == 405 || tt.wantStatus == 406 || tt.wantStatus == 415
			if wantID == "" {
				wantID = "null"
				if m, _ := parseMessage([]byte(tt.body)); m != nil && m.id != nil && !preParse {
					wantID = string(m.id)
				}
			}
			if string(got.ID) != wantID {
				t.Errorf("id = %s, want %s", got.ID, wantID)
			}
		})
	}
}
