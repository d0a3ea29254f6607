package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"github.com/kobana/kadu/core/audit"
	"github.com/kobana/kadu/core/store"
)

// handler answers one method: a result, or an error.
type handler func(e *Engine, x *exchange) (decorable, *Error)

// methods is the method table of each era (docs/reference/mcp.md#resources-prompts-and-completions). A method of the other
// era is "any other method".
var methods = map[Era]map[string]handler{
	Era2026: {
		"server/discover":          (*Engine).discover,
		"tools/list":               (*Engine).listTools,
		"tools/call":               (*Engine).callTool,
		"resources/list":           (*Engine).listResources,
		"resources/templates/list": (*Engine).listResourceTemplates,
		"resources/read":           (*Engine).readResource,
		"prompts/list":             (*Engine).listPrompts,
		"prompts/get":              (*Engine).getPrompt,
		"completion/complete":      (*Engine).complete,
	},
	Era2025: {
		"initialize":               (*Engine).initialize,
		"ping":                     (*Engine).ping,
		"tools/list":               (*Engine).listTools,
		"tools/call":               (*Engine).callTool,
		"resources/list":           (*Engine).listResources,
		"resources/templates/list": (*Engine).listResourceTemplates,
		"resources/read":           (*Engine).readResource,
		"prompts/list":             (*Engine).listPrompts,
		"prompts/get":              (*Engine).getPrompt,
		"completion/complete":      (*Engine).complete,
	},
}

// cacheable methods carry ttlMs: 0 and cacheScope: "private" in era 2026:
// what they return is filtered by the caller's permissions.
var cacheable = map[string]bool{
	"server/discover": true, "tools/list": true, "resources/list": true,
	"resources/templates/list": true, "resources/read": true, "prompts/list": true,
}

// dispatch is rung 8 (method table) and hands over to the method, which
// applies rungs 9–14 in its own order.
func (e *Engine) dispatch(x *exchange) {
	h, ok := methods[x.client.Era][x.msg.method]
	if !ok {
		err := &Error{Code: CodeMethodNotFound, Message: "Method not found: " + x.msg.method}
		if x.client.Era == Era2026 {
			err.Status = http.StatusNotFound
		}
		e.writeError(x, err)
		return
	}
	x.r = x.r.WithContext(audit.WithCall(x.r.Context(), auditCall(x)))
	result, err := e.traceMethod(x, h)
	if err == errAnswered {
		return
	}
	if err != nil {
		e.writeError(x, err)
		return
	}
	e.writeResult(x, e.decorate(x, result))
}

// auditCall is what the audit trail records of the request's surface
// (docs/audit.md#what-is-recorded): MCP, the client's reported name, the
// request id. The name is per request in era 2026 (the clientInfo of
// params._meta); in era 2025 it was sent once, at initialize, and a
// stateless server does not keep it, so it is empty.
func auditCall(x *exchange) audit.Call {
	c := audit.Call{Surface: store.SurfaceMCP, RequestID: x.requestID}
	if x.client.Info != nil {
		c.ClientName = x.client.Info.Name
	}
	return c
}

// errAnswered is returned by handlers that wrote the response themselves
// (a challenge, a 429).
var errAnswered = &Error{}

// rungOrgLimit is rung 10. server/discover never reaches it.
func (e *Engine) rungOrgLimit(x *exchange) bool {
	if e.limiter == nil {
		return true
	}
	ok, retry := e.limiter.AllowOrg(x.r.Context(), x.principal.OrgID)
	if !ok {
		e.writeRateLimited(x, retry)
	}
	return ok
}

// storeRetryAfterSeconds is the Retry-After of a store_unavailable answer:
// the same 30 s core/api sends for a full or unreachable store.
const storeRetryAfterSeconds = 30

// internal logs a catalog fault and returns the opaque -32603, or the
// 503 -31503 store_unavailable when the store cannot take the operation.
func (e *Engine) internal(x *exchange, err error) *Error {
	var rpc *Error
	if errors.As(err, &rpc) {
		return rpc
	}
	if e.storeOut != nil && e.storeOut(err) {
		// Logged (throttled) by the store's logger; the client retries.
		e.log.WarnContext(x.r.Context(), "mcp: storage unavailable",
			slog.String("request_id", x.requestID), slog.String("method", x.msg.method), slog.Any("error", err))
		return &Error{
			Code: CodeUnavailable, Message: "Service unavailable", Status: http.StatusServiceUnavailable,
			Data: map[string]any{"retry_after_seconds": storeRetryAfterSeconds, "reason": "store_unavailable"},
		}
	}
	level := slog.LevelError
	if x.r.Context().Err() != nil && errors.Is(err, context.Canceled) {
		level = slog.LevelDebug // the client went away: nobody reads the answer, nothing is broken
	}
	e.log.Log(x.r.Context(), level, "catalog fault",
		slog.String("request_id", x.requestID), slog.String("method", x.msg.method), slog.Any("error", err))
	return &Error{Code: CodeInternalError, Message: "Internal error"}
}

// decodeParams decodes params into v; absent params leave v as it is.
func decodeParams(x *exchange, v any) *Error {
	if x.msg.params == nil {
		return nil
	}
	if x.msg.params[0] != '{' {
		return InvalidParams("Invalid params: params must be an object")
	}
	if err := json.Unmarshal(x.msg.params, v); err != nil {
		return InvalidParams("Invalid params: %s", describeJSONError(err))
	}
	return nil
}

func describeJSONError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return te.Field + " must be " + jsonKind(te.Type.Kind().String())
	}
	return "malformed params"
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "map", "struct":
		return "an object"
	case "slice":
		return "an array"
	case "bool":
		return "a boolean"
	}
	return "a number"
}
