package mcp

import (
	"strings"
	"time"
)

// Metrics receives one call per answered request, for the operator's
// metrics (core/metrics). Every value is bounded: era and method from the
// method table, name from the catalog, outcome from a fixed set.
// Implementations must be safe for concurrent use and cheap.
type Metrics interface {
	MCPRequest(era, method, name, outcome string, d time.Duration)
}

// observe reports x to the engine's Metrics, if any.
func (e *Engine) observe(x *exchange) {
	if e.metrics == nil {
		return
	}
	era, method := "none", "none"
	if x.client.Era != 0 {
		era = x.client.Era.String()
	}
	if x.msg != nil {
		method = "other"
		if _, ok := methods[x.client.Era][x.msg.method]; ok {
			method = x.msg.method
		} else if x.client.Era == 0 && knownMethod(x.msg.method) {
			method = x.msg.method // refused before its era was known
		}
	}
	name := x.metricName
	if name == "" && x.resourceURI != "" && x.status == 200 && x.rpcCode == 0 {
		name = e.templateName(x)
	}
	if name == "" && named[method] {
		name = "unknown" // never the name the request gave: unbounded
	}
	e.metrics.MCPRequest(era, method, name, x.outcome(), time.Since(x.start))
}

// named methods act on one tool, prompt or resource: their name label is
// the catalog's name, or "unknown".
var named = map[string]bool{"tools/call": true, "prompts/get": true, "resources/read": true}

func knownMethod(m string) bool {
	for _, t := range methods {
		if _, ok := t[m]; ok {
			return true
		}
	}
	return false
}

// templateName is the name of the resource or resource template that
// x's URI read, as the catalog lists it: never the URI itself, which holds
// ids. "unknown" when none matches.
func (e *Engine) templateName(x *exchange) string {
	ctx, p := x.r.Context(), x.principal
	if rs, err := e.catalog.Resources(ctx, p); err == nil {
		for _, r := range rs {
			if r.URI == x.resourceURI {
				return r.Name
			}
		}
	}
	if ts, err := e.catalog.ResourceTemplates(ctx, p); err == nil {
		for _, t := range ts {
			if templateMatches(t.URITemplate, x.resourceURI) {
				return t.Name
			}
		}
	}
	return "unknown"
}

// templateMatches reports whether uri could expand from an RFC 6570
// level-1 template: same literal text, each {var} one non-empty run of
// characters without "/".
func templateMatches(tmpl, uri string) bool {
	for tmpl != "" {
		i := strings.IndexByte(tmpl, '{')
		if i < 0 {
			return tmpl == uri
		}
		if !strings.HasPrefix(uri, tmpl[:i]) {
			return false
		}
		uri, tmpl = uri[i:], tmpl[i:]
		j := strings.IndexByte(tmpl, '}')
		if j < 0 {
			return false
		}
		tmpl = tmpl[j+1:]
		// The variable runs to the next literal character of the template.
		end := strings.IndexByte(uri, '/')
		if tmpl != "" {
			end = strings.IndexByte(uri, tmpl[0])
		}
		if end < 0 {
			end = len(uri)
		}
		if end == 0 || strings.Contains(uri[:end], "/") {
			return false
		}
		uri = uri[end:]
	}
	return uri == ""
}

// outcome classifies the answer: "ok", "tool_error" (a result with
// isError), "input_required", "accepted" (a notification), a JSON-RPC
// error class, or "http_<class>" for an answer without a JSON-RPC body.
func (x *exchange) outcome() string {
	switch {
	case x.rpcCode != 0:
		return "jsonrpc_" + codeClass(x.rpcCode)
	case x.status >= 400 || x.status == 0:
		if x.status == 0 {
			return "http_none" // the client went away before an answer
		}
		return "http_" + string(rune('0'+x.status/100)) + "xx"
	case x.inputRequired:
		return "input_required"
	case x.toolError:
		return "tool_error"
	case x.status == 202:
		return "accepted"
	case x.status == 204:
		return "preflight"
	}
	return "ok"
}

// codeClass names a JSON-RPC error code Kadu sends; codes it does not
// send (a catalog's own *Error) fall in "server_error" or "other".
func codeClass(code int64) string {
	switch code {
	case CodeParseError:
		return "parse_error"
	case CodeInvalidRequest:
		return "invalid_request"
	case CodeMethodNotFound:
		return "method_not_found"
	case CodeInvalidParams:
		return "invalid_params"
	case CodeInternalError:
		return "internal_error"
	case CodeResourceNotFound:
		return "resource_not_found"
	case CodeHeaderMismatch:
		return "header_mismatch"
	case CodeMissingCapability:
		return "missing_capability"
	case CodeUnsupportedVersion:
		return "unsupported_version"
	case CodeUnauthorized:
		return "unauthorized"
	case CodeForbidden:
		return "forbidden"
	case CodeRateLimited:
		return "rate_limited"
	case CodeUnavailable:
		return "unavailable"
	}
	if code >= -32099 && code <= -32000 {
		return "server_error"
	}
	return "other"
}
