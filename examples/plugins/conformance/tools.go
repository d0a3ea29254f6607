package main

import (
	"encoding/json"

	"github.com/kobana/kadu/sdk/go/kadu"
)

// Payloads shared with the suite's reference server: a 1×1 PNG and a
// silent WAV, base64.
const (
	pngBase64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
	wavBase64 = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
)

var (
	// Every fixture is open to any caller who may read: the suite signs in
	// with whatever token the proxy in front of the server adds.
	anyReader = kadu.Access{MinRole: kadu.RoleViewer, Scope: kadu.ScopeRead}
	// Fixtures change nothing, so the host never asks to confirm them
	// (docs/reference/confirmation.md confirms only destructive tools).
	readOnly = &kadu.Annotations{ReadOnly: true, Idempotent: true}
	// noArgs is the reference server's schema for a tool without
	// arguments. It does not forbid extra members: the suite sends some.
	noArgs = json.RawMessage(`{"type":"object","properties":{}}`)
)

// mediaContent is an image or audio content block.
type mediaContent struct {
	Type     string `json:"type"` // "image" or "audio"
	Data     string `json:"data"` // base64
	MIMEType string `json:"mimeType"`
}

func image() mediaContent { return mediaContent{Type: "image", Data: pngBase64, MIMEType: "image/png"} }

// embeddedContent is an embedded resource content block.
type embeddedContent struct {
	Type     string                `json:"type"` // always "resource"
	Resource kadu.ResourceContents `json:"resource"`
}

func embedded(uri, mimeType, text string) embeddedContent {
	return embeddedContent{Type: "resource", Resource: kadu.ResourceContents{URI: uri, MIMEType: mimeType, Text: text}}
}

// handler runs a fixture tool on its raw arguments.
type handler func(c *kadu.Call, args json.RawMessage) (*kadu.Result, error)

// fixture defines a read-only tool; needs lists the client capabilities it
// always asks through, so that the host answers -32021 to a client that
// lacks one before the tool runs.
func fixture(name, description string, schema json.RawMessage, h handler, needs ...string) kadu.Feature {
	if schema == nil {
		schema = noArgs
	}
	return kadu.Tool[json.RawMessage, *kadu.Result]{
		Name:                 name,
		Description:          description,
		InputSchema:          schema,
		Annotations:          readOnly,
		Access:               anyReader,
		RequiresCapabilities: needs,
		Handler:              h,
	}
}

// respond answers every call with the same content.
func respond(content ...any) handler {
	return func(*kadu.Call, json.RawMessage) (*kadu.Result, error) {
		return &kadu.Result{Content: content}, nil
	}
}

func textResult(s string) (*kadu.Result, error) {
	return &kadu.Result{Content: []any{kadu.Text(s)}}, nil
}

// contentTools are the tools whose answers are fixed content of each type,
// and the tools whose notifications need a stream Kadu never opens.
func contentTools() []kadu.Feature {
	return []kadu.Feature{
		fixture("test_simple_text", "Returns simple text content.", nil,
			respond(kadu.Text("This is a simple text response for testing."))),
		fixture("test_image_content", "Returns image content.", nil, respond(image())),
		fixture("test_audio_content", "Returns audio content.", nil,
			respond(mediaContent{Type: "audio", Data: wavBase64, MIMEType: "audio/wav"})),
		fixture("test_embedded_resource", "Returns embedded resource content.", nil,
			respond(embedded("test://embedded-resource", "text/plain", "This is an embedded resource content."))),
		fixture("test_multiple_content_types", "Returns text, image and resource content.", nil,
			respond(kadu.Text("Multiple content types test:"), image(),
				embedded("test://mixed-content-resource", "application/json", `{"test":"data","value":123}`))),
		fixture("test_error_handling", "Always fails with an isError result.", nil,
			func(*kadu.Call, json.RawMessage) (*kadu.Result, error) {
				return &kadu.Result{IsError: true, Content: []any{kadu.Text("This tool intentionally returns an error for testing")}}, nil
			}),
		// Logging and progress notifications need a stream: these only run.
		fixture("test_tool_with_logging", "Would log while running; Kadu never streams, so it only runs.", nil,
			respond(kadu.Text("Tool with logging executed successfully"))),
		fixture("test_logging_tool", "Would log while running; Kadu never streams, so it only runs.", nil,
			respond(kadu.Text("Logging tool executed successfully"))),
		fixture("test_tool_with_progress", "Would report progress; Kadu never streams, so it only runs.", nil,
			respond(kadu.Text("Tool with progress executed successfully"))),
		fixture("test_reconnection", "Would close its SSE stream mid-call; Kadu never streams, so it only runs.", nil,
			respond(kadu.Text("Reconnection test completed successfully"))),
		fixture("json_schema_2020_12_tool", "Tool with JSON Schema 2020-12 features (SEP-1613, SEP-2106).",
			json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",`+
				`"$defs":{"address":{"$anchor":"addressDef","type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},`+
				`"properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"},`+
				`"contactMethod":{"type":"string","enum":["phone","email"]},"phone":{"type":"string"},"email":{"type":"string"}},`+
				`"allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],`+
				`"if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},`+
				`"then":{"required":["phone"]},"else":{"required":["email"]},"additionalProperties":false}`),
			func(_ *kadu.Call, args json.RawMessage) (*kadu.Result, error) {
				return textResult("JSON Schema 2020-12 tool called with: " + string(args))
			}),
		// SEP-2243: region is mirrored in the Mcp-Param-Region header, which
		// the host checks against the body before the tool runs.
		fixture("test_custom_headers", "Echoes a parameter mirrored in the Mcp-Param-Region header.",
			json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}},"required":["region"]}`),
			func(_ *kadu.Call, args json.RawMessage) (*kadu.Result, error) {
				return textResult("Region: " + string(args))
			}),
	}
}
