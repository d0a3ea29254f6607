package mcp

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// JSON-RPC error codes Kadu sends (docs/reference/mcp.md, docs/reference/limits.md#rate-limits).
const (
	CodeParseError         = -32700
	CodeInvalidRequest     = -32600
	CodeMethodNotFound     = -32601
	CodeInvalidParams      = -32602
	CodeInternalError      = -32603
	CodeResourceNotFound   = -32002 // era 2025 only; era 2026 uses CodeInvalidParams
	CodeHeaderMismatch     = -32020
	CodeMissingCapability  = -32021
	CodeUnsupportedVersion = -32022
	CodeUnauthorized       = -31401
	CodeForbidden          = -31403
	CodeRateLimited        = -31429
	CodeUnavailable        = -31503
)

// Error is a JSON-RPC error together with the HTTP status it is sent with.
// Two Errors match under errors.Is when their codes are equal.
type Error struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`

	// Status is the HTTP status of the response; 0 means 200.
	Status int `json:"-"`
}

func (e *Error) Error() string { return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message) }

// Is reports whether target is an *Error with the same code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

func (e *Error) status() int {
	if e.Status == 0 {
		return http.StatusOK
	}
	return e.Status
}

// ErrResourceNotFound is returned by Catalog.ReadResource for a URI that
// does not exist or that the caller may not see. The engine turns it into
// the era's not-found error with data.uri.
var ErrResourceNotFound = &Error{Code: CodeResourceNotFound, Message: "Resource not found"}

// ErrPromptNotFound may be returned by Catalog.GetPrompt.
var ErrPromptNotFound = &Error{Code: CodeInvalidParams, Message: "Unknown prompt"}

func invalidRequest(msg string) *Error {
	return &Error{Code: CodeInvalidRequest, Message: msg, Status: http.StatusBadRequest}
}

func parseError() *Error {
	return &Error{Code: CodeParseError, Message: "Parse error", Status: http.StatusBadRequest}
}

// InvalidParams returns a -32602 error sent with HTTP 200.
func InvalidParams(format string, args ...any) *Error {
	return &Error{Code: CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

func headerMismatch(format string, args ...any) *Error {
	return &Error{Code: CodeHeaderMismatch, Message: "Header mismatch: " + fmt.Sprintf(format, args...), Status: http.StatusBadRequest}
}

func unsupportedVersion(requested string) *Error {
	return &Error{
		Code:    CodeUnsupportedVersion,
		Message: "Unsupported protocol version",
		Data:    unsupportedVersionData{Supported: SupportedVersions(), Requested: requested},
		Status:  http.StatusBadRequest,
	}
}

type unsupportedVersionData struct {
	Supported []string `json:"supported"`
	Requested string   `json:"requested"`
}

// MissingCapability returns the -32021 error for an input request that
// needs client capabilities the client did not declare. data.requiredCapabilities
// is a capabilities object, e.g. {"sampling":{}}, the shape clients declare.
func MissingCapability(required ...string) *Error {
	caps := make(map[string]struct{}, len(required))
	for _, c := range required {
		caps[c] = struct{}{}
	}
	return &Error{
		Code:    CodeMissingCapability,
		Message: "Missing required client capability",
		Data:    map[string]any{"requiredCapabilities": caps},
		Status:  http.StatusBadRequest,
	}
}

// bodyTooLarge is the exact 413 body of docs/reference/mcp.md#endpoint-and-transport.
var bodyTooLarge = []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Request body too large (limit 1048576 bytes)"}}` + "\n")

// response is a JSON-RPC response object.
type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}
