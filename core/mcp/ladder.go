package mcp

import (
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/kobana/kadu/core/clientip"
)

// The rungs of docs/reference/mcp.md#order-of-checks, in order. Each returns true to let the request
// climb on, or answers it and returns false. dispatch (methods.go) holds
// rungs 8–14.

// rungMethod is rung 1: OPTIONS answers the CORS preflight; anything but
// POST is 405.
func (e *Engine) rungMethod(x *exchange) bool {
	switch x.r.Method {
	case http.MethodPost:
		return true
	case http.MethodOptions:
		e.preflight(x)
		return false
	}
	x.w.Header().Set("Allow", "POST, OPTIONS")
	e.writeError(x, &Error{Code: CodeInvalidRequest, Message: "Method not allowed: the MCP endpoint takes POST only (no SSE stream, no sessions)", Status: http.StatusMethodNotAllowed})
	return false
}

func (e *Engine) preflight(x *exchange) {
	h := x.w.Header()
	switch {
	case !e.origins.Check(x.r):
		x.status = http.StatusForbidden
		x.w.WriteHeader(http.StatusForbidden)
		return
	case x.r.Header.Get("Origin") == "":
		// Not a CORS preflight: a plain OPTIONS learns the methods.
		h.Set("Allow", "POST, OPTIONS")
		x.status = http.StatusNoContent
		x.w.WriteHeader(http.StatusNoContent)
		return
	}
	h.Set("Access-Control-Allow-Origin", x.r.Header.Get("Origin"))
	h.Add("Vary", "Origin")
	h.Set("Access-Control-Allow-Methods", "POST")
	if req := x.r.Header.Values("Access-Control-Request-Headers"); len(req) > 0 {
		h.Set("Access-Control-Allow-Headers", strings.Join(req, ", "))
		h.Add("Vary", "Access-Control-Request-Headers")
	}
	h.Set("Access-Control-Max-Age", "600")
	x.status = http.StatusNoContent
	x.w.WriteHeader(http.StatusNoContent)
}

// rungOrigin is rung 2: the DNS-rebinding guard on Host and the Origin check.
func (e *Engine) rungOrigin(x *exchange) bool {
	if !e.origins.Check(x.r) {
		e.writeError(x, errHostOrOrigin())
		return false
	}
	x.cors = x.r.Header.Get("Origin") != ""
	return true
}

// errHostOrOrigin is rung 2's answer, also written by Refuse.
func errHostOrOrigin() *Error {
	return &Error{Code: CodeInvalidRequest, Message: "Forbidden: Host or Origin not allowed", Status: http.StatusForbidden}
}

// rungMediaTypes is rung 3 (first half): Content-Type → 415, Accept → 406.
func (e *Engine) rungMediaTypes(x *exchange) bool {
	if !jsonContentType(x.r.Header.Get("Content-Type")) {
		e.writeError(x, &Error{Code: CodeInvalidRequest, Message: "Unsupported Media Type: Content-Type must be application/json", Status: http.StatusUnsupportedMediaType})
		return false
	}
	if accept := x.r.Header.Values("Accept"); len(accept) > 0 && !acceptsJSON(strings.Join(accept, ",")) {
		e.writeError(x, &Error{Code: CodeInvalidRequest, Message: "Not Acceptable: Accept must allow application/json", Status: http.StatusNotAcceptable})
		return false
	}
	return true
}

func jsonContentType(v string) bool {
	if v == "" {
		return false
	}
	mt, params, err := mime.ParseMediaType(v)
	if err != nil || mt != "application/json" {
		return false
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return false
	}
	return true
}

// acceptsJSON reports whether an Accept header allows application/json:
// the most specific matching range (RFC 9110 §12.5.1) must have q > 0.
func acceptsJSON(accept string) bool {
	best, bestQ := -1, 0.0
	for _, part := range strings.Split(accept, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		mt, params, err := mime.ParseMediaType(part)
		if err != nil {
			continue
		}
		spec := -1
		switch mt {
		case "application/json":
			spec = 2
		case "application/*":
			spec = 1
		case "*/*":
			spec = 0
		}
		if spec < best || spec < 0 {
			continue
		}
		q := 1.0
		if qs, ok := params["q"]; ok {
			f, err := strconv.ParseFloat(qs, 64)
			if err != nil || f < 0 || f > 1 {
				continue
			}
			q = f
		}
		if spec > best || q > bestQ {
			best, bestQ = spec, q
		}
	}
	return best >= 0 && bestQ > 0
}

// rungBodySize is rung 3 (second half): the 1 MiB limit, by the declared
// Content-Length or by the bytes actually received.
func (e *Engine) rungBodySize(x *exchange) ([]byte, bool) {
	if x.r.ContentLength > MaxBodyBytes {
		e.writeTooLarge(x)
		return nil, false
	}
	body, within, err := readBody(x.r.Body, MaxBodyBytes)
	if err != nil {
		e.writeError(x, parseError())
		return nil, false
	}
	if !within {
		e.writeTooLarge(x)
		return nil, false
	}
	return body, true
}

func (e *Engine) writeTooLarge(x *exchange) {
	h := x.w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Connection", "close")
	e.writeCORS(x)
	x.status = http.StatusRequestEntityTooLarge
	x.w.WriteHeader(http.StatusRequestEntityTooLarge)
	_, _ = x.w.Write(bodyTooLarge)
}

// rungAuthenticate is rung 4: the per-IP limit for unauthenticated traffic,
// then authentication. Failed authentications are charged to the IP too.
func (e *Engine) rungAuthenticate(x *exchange) bool {
	anonymous := len(x.r.Header.Values("Authorization")) == 0
	if anonymous && !e.allowIP(x) {
		return false
	}
	p, c := e.authn.Authenticate(x.r)
	if c != nil {
		if !anonymous && !e.allowIP(x) {
			return false
		}
		e.writeChallenge(x, c)
		return false
	}
	x.principal = p
	return true
}

func (e *Engine) allowIP(x *exchange) bool {
	if e.limiter == nil {
		return true
	}
	ok, retry := e.limiter.AllowIP(x.r.Context(), clientip.FromRequest(x.r))
	if !ok {
		e.writeRateLimited(x, retry)
	}
	return ok
}

// rungParse is rung 5: the JSON shape of the message.
func (e *Engine) rungParse(x *exchange, body []byte) bool {
	m, err := parseMessage(body)
	x.msg = m
	if err != nil {
		e.writeError(x, err)
		return false
	}
	return true
}

// rungNotification is rung 6: a notification is accepted and ignored,
// without era or header validation.
func (e *Engine) rungNotification(x *exchange) bool {
	if !x.msg.notification() {
		return true
	}
	e.writeCORS(x)
	x.status = http.StatusAccepted
	x.w.WriteHeader(http.StatusAccepted)
	return false
}

// rungEra is rung 7: the era, the envelope and the header contract.
func (e *Engine) rungEra(x *exchange) bool {
	c, err := classifyEra(x.r.Header, x.msg)
	if err != nil {
		e.writeError(x, err)
		return false
	}
	x.client = c
	x.version = c.ProtocolVersion
	return true
}
