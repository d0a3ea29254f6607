package kadu

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/kobana/kadu/sdk/go/kadu/internal/wire"
)

// Result is a tool result given in full. A handler whose Out is *Result
// decides the content blocks itself; the SDK sends it as it is.
type Result struct {
	// Content blocks, e.g. Text("…"). MCP content objects of other types
	// (image, resource_link, …) may be given as any JSON-encodable value.
	Content []any `json:"content"`
	// StructuredContent, when not nil, must encode to a JSON object valid
	// against the tool's OutputSchema.
	StructuredContent any `json:"structuredContent,omitempty"`
	// IsError marks a result the model should read as a failure.
	IsError bool `json:"isError,omitempty"`
}

// TextContent is an MCP text content block.
type TextContent struct {
	Type string `json:"type"` // "text"
	Text string `json:"text"`
}

// Text returns a text content block.
func Text(s string) TextContent { return TextContent{Type: "text", Text: s} }

// ToolError returns an error that a tool handler returns for a failure the
// model should read and can act on: the call answers an isError result
// whose text is text. Say what happened and what to do next.
func ToolError(text string) error { return &toolError{text: text} }

type toolError struct{ text string }

func (e *toolError) Error() string { return e.text }

// RPCError is a JSON-RPC error a handler returns when the request cannot
// be served at all (sdk/ABI.md §5, status 1). The host passes Code through
// only when it is -32602, -32603 or in -32099 … -32000; any other code
// becomes -32603.
type RPCError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *RPCError) Error() string {
	return fmt.Sprintf("kadu: JSON-RPC error %d: %s", e.Code, e.Message)
}

// JSON-RPC codes a bundle may return.
const (
	CodeInvalidParams = -32602
	CodeInternalError = -32603
)

// InvalidParams returns the -32602 error for a request that names
// something that does not exist or is malformed; data may be nil.
func InvalidParams(message string, data any) error {
	return &RPCError{Code: CodeInvalidParams, Message: message, Data: data}
}

// ErrResourceNotFound is what a resource handler returns when the URI
// names nothing this caller may read; the client gets -32602 "Resource not
// found" with the URI (-32002 in the 2025 era).
var ErrResourceNotFound = errors.New("kadu: resource not found")

// APIError is a Kadu API answer other than 2xx. Returned by a tool handler,
// a 4xx becomes an isError result whose text is Body — the API's error JSON,
// whose hint tells the model what to do — and a 5xx an isError result that
// asks to try again.
type APIError struct {
	Status int    // the HTTP status, e.g. 404
	Body   []byte // the API's error body: {"status":…,"errors":[…],"request_id":…}
}

func (e *APIError) Error() string {
	p := e.problem()
	if p.Code == "" {
		return fmt.Sprintf("kadu api: HTTP %d", e.Status)
	}
	return fmt.Sprintf("kadu api: HTTP %d %s: %s", e.Status, p.Code, p.Detail)
}

// Code returns the code of the body's first error, e.g. "not_found", or "".
func (e *APIError) Code() string { return e.problem().Code }

// RequestID returns the body's request_id, or "".
func (e *APIError) RequestID() string {
	var b struct {
		RequestID string `json:"request_id"`
	}
	_ = json.Unmarshal(e.Body, &b)
	return b.RequestID
}

type apiProblem struct {
	Code   string `json:"code"`
	Detail string `json:"detail"`
	Hint   string `json:"hint"`
}

func (e *APIError) problem() apiProblem {
	var b struct {
		Errors []apiProblem `json:"errors"`
	}
	if json.Unmarshal(e.Body, &b) != nil || len(b.Errors) == 0 {
		return apiProblem{}
	}
	return b.Errors[0]
}

// text is what the model reads for e.
func (e *APIError) text() string {
	if e.Status >= 500 {
		msg := fmt.Sprintf("Kadu could not complete this request (HTTP %d", e.Status)
		if id := e.RequestID(); id != "" {
			msg += ", request_id " + id
		}
		return msg + "). Nothing says the request was wrong: try again in a moment. For a write, retry with the same idempotency_key so that it is not done twice."
	}
	body := bytes.TrimSpace(e.Body)
	if len(body) == 0 || !json.Valid(body) {
		return fmt.Sprintf("The Kadu API refused the request (HTTP %d).", e.Status)
	}
	return string(body)
}

// toolResult is a CallToolResult on the wire.
type toolResult struct {
	Content           []any           `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError,omitempty"`
}

func errorResult(text string) toolResult {
	return toolResult{Content: []any{Text(text)}, IsError: true}
}

// encodeToolValue turns a handler's output into a result: text content
// with its JSON (a string as it is), plus structuredContent when the tool
// declares an output schema. An error here is a bug in the bundle.
func encodeToolValue(v any, structured bool) (toolResult, error) {
	switch x := v.(type) {
	case *Result:
		if x == nil {
			return toolResult{}, errors.New("the handler returned a nil *Result")
		}
		return encodeResult(*x, structured)
	case Result:
		return encodeResult(x, structured)
	case string:
		if structured {
			return toolResult{}, errors.New("the tool declares an OutputSchema but returned a string")
		}
		return toolResult{Content: []any{Text(x)}}, nil
	}
	var raw []byte
	switch x := v.(type) {
	case json.RawMessage:
		raw = bytes.TrimSpace(x)
		if !json.Valid(raw) {
			return toolResult{}, errors.New("the handler returned a json.RawMessage that is not valid JSON")
		}
	default:
		b, err := marshal(v)
		if err != nil {
			return toolResult{}, fmt.Errorf("encoding the output: %w", err)
		}
		raw = b
	}
	out := toolResult{Content: []any{Text(string(raw))}}
	if structured {
		if len(raw) == 0 || raw[0] != '{' {
			return toolResult{}, errors.New("the tool declares an OutputSchema but its output is not a JSON object")
		}
		out.StructuredContent = raw
	}
	return out, nil
}

func encodeResult(r Result, structured bool) (toolResult, error) {
	out := toolResult{Content: r.Content, IsError: r.IsError}
	if out.Content == nil {
		out.Content = []any{}
	}
	if r.StructuredContent != nil {
		b, err := marshal(r.StructuredContent)
		if err != nil {
			return toolResult{}, fmt.Errorf("encoding StructuredContent: %w", err)
		}
		if b[0] != '{' {
			return toolResult{}, errors.New("StructuredContent is not a JSON object")
		}
		out.StructuredContent = b
	} else if structured && !r.IsError {
		return toolResult{}, errors.New("the tool declares an OutputSchema but its *Result has no StructuredContent")
	}
	return out, nil
}

// marshal encodes v as compact JSON without HTML escaping and without the
// encoder's trailing newline.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// compact returns raw without insignificant space; nil stays nil. raw was
// checked to be valid JSON (checkObjectSchema).
func compact(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return nil
	}
	return wire.Compact(nil, raw)
}
