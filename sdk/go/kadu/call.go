package kadu

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/kobana/kadu/sdk/go/kadu/internal/abi"
)

// Call is one invocation as a handler sees it: the way to the Kadu API, the
// caller, the client, and on a retry after InputRequired the client's
// answers and the state.
//
// A Call is valid only during the handler it was passed to; do not keep
// it, or anything it returned, for a later invocation.
type Call struct {
	host abi.Host
	inv  *invocation

	caller *Caller // read from the host on first use
	client *Client // decoded from inv on first use
}

// Response is a Kadu API response. Body is the guest's own copy.
type Response struct {
	Status int    // the HTTP status
	Body   []byte // the JSON body (may be empty)
}

// OK reports whether the status is 2xx.
func (r *Response) OK() bool { return r.Status >= 200 && r.Status < 300 }

// Err returns nil for a 2xx response and an *APIError otherwise; returned
// from a tool handler, the error becomes the right isError result.
func (r *Response) Err() error {
	if r.OK() {
		return nil
	}
	return &APIError{Status: r.Status, Body: r.Body}
}

// Decode decodes the body into v.
func (r *Response) Decode(v any) error {
	if err := json.Unmarshal(r.Body, v); err != nil {
		return fmt.Errorf("kadu: decoding the API response (HTTP %d): %w", r.Status, err)
	}
	return nil
}

// API sends one request to the Kadu API as the caller and returns its
// response, whatever its status: check Response.Err, or use Do.
//
// method is GET, POST, PUT, PATCH or DELETE; path is the full path with
// its query already encoded, e.g. "/api/v1/executions?status=failed";
// body is nil (no body), a []byte or json.RawMessage sent as it is, or a
// value encoded as JSON. The host answers 403 route_not_granted for a route
// the bundle did not declare or was not granted, 429 api_budget_exhausted
// past the invocation's budget of calls, and 413 for a body over 1 MiB — in
// the API's error shape, like any other API error.
//
// The error is not nil only when body cannot be encoded or the host broke
// the ABI.
func (c *Call) API(method, path string, body any) (*Response, error) {
	var b []byte
	switch v := body.(type) {
	case nil:
	case []byte:
		b = v
	case json.RawMessage:
		b = v
	default:
		var err error
		if b, err = marshal(v); err != nil {
			return nil, fmt.Errorf("kadu: encoding the body of %s %s: %w", method, path, err)
		}
	}
	r := c.host.API(method, path, b)
	status, n := int(r>>32), int(uint32(r))
	resp := &Response{Status: status, Body: make([]byte, n)}
	if n > 0 {
		if got := c.host.APIRead(resp.Body); int(got) != n {
			return nil, fmt.Errorf("kadu: reading the response of %s %s: api_read returned %d for %d bytes", method, path, got, n)
		}
	}
	return resp, nil
}

// Do sends a request like API and, for a 2xx response, decodes its body
// into out (unless out is nil). Any other status is an *APIError.
func (c *Call) Do(method, path string, body, out any) error {
	resp, err := c.API(method, path, body)
	if err != nil {
		return err
	}
	if err := resp.Err(); err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	return resp.Decode(out)
}

// Caller is who is calling (caller_info, sdk/ABI.md §6). It never holds a
// token.
type Caller struct {
	OrgID     string      `json:"org_id"`
	UserID    string      `json:"user_id"` // the token's subject
	Role      Role        `json:"role"`
	Scopes    []string    `json:"scopes"` // "kadu.read" …, closed under the lattice
	RequestID string      `json:"request_id"`
	Client    *ClientInfo `json:"client"` // what the client says it is; nil when unknown
}

// ClientInfo is the name and version a client reported.
type ClientInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// HasScope reports whether the caller's token has scope, e.g. ScopeRun.
func (c Caller) HasScope(s Scope) bool { return slices.Contains(c.Scopes, "kadu."+string(s)) }

// Caller returns the caller. It asks the host once per invocation and
// panics (a fault) if the host answers something that is not the ABI's
// JSON.
func (c *Call) Caller() Caller {
	if c.caller == nil {
		raw := readSized(c.host.CallerInfo, 256)
		var who Caller
		if err := json.Unmarshal(raw, &who); err != nil {
			panic(fmt.Sprintf("kadu: caller_info is not valid JSON: %v", err))
		}
		c.caller = &who
	}
	out := *c.caller
	out.Scopes = slices.Clone(out.Scopes)
	return out
}

// Client is what the host knows about the client of this request.
type Client struct {
	// Capabilities is the client's declared capabilities object (2026
	// era), or nil when unknown (2025 era: nothing is remembered from
	// initialize).
	Capabilities map[string]json.RawMessage `json:"capabilities"`
	// ProtocolVersion is the MCP revision of the request.
	ProtocolVersion string `json:"protocol_version"`
}

// Client returns what is known about the client. It panics (a fault) if
// the host sent a client that is not the ABI's JSON.
func (c *Call) Client() Client {
	if c.client == nil {
		var cl Client
		if len(c.inv.Client) > 0 {
			if err := json.Unmarshal(c.inv.Client, &cl); err != nil {
				panic(fmt.Sprintf("kadu: the invocation's client is not valid: %v", err))
			}
		}
		c.client = &cl
	}
	return *c.client
}

// HasCapability reports whether the client declared capability name, e.g.
// "elicitation". Check it before InputRequired: a client that did not
// declare what a request needs gets -32021 instead.
func (c *Call) HasCapability(name string) bool {
	_, ok := c.Client().Capabilities[name]
	return ok
}

// Retrying reports whether this invocation is a retry after the bundle
// answered InputRequired: State and InputResponse then hold what came back.
func (c *Call) Retrying() bool { return len(c.inv.State) > 0 || c.inv.InputResponses != nil }

// State decodes the state this bundle returned with InputRequired into v.
// It reports false, leaving v alone, on a first call.
func (c *Call) State(v any) (bool, error) {
	if len(c.inv.State) == 0 {
		return false, nil
	}
	if err := json.Unmarshal(c.inv.State, v); err != nil {
		return true, fmt.Errorf("kadu: decoding state: %w", err)
	}
	return true, nil
}

// InputResponse decodes the client's response to the input request of key
// into v. It reports false, leaving v alone, when there is none. The
// response comes from the client: validate it before acting on it.
func (c *Call) InputResponse(key string, v any) (bool, error) {
	raw, ok := c.inv.InputResponses[key]
	if !ok {
		return false, nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return true, fmt.Errorf("kadu: decoding the response to input request %q: %w", key, err)
	}
	return true, nil
}

// readSized calls a host function that writes only when the buffer is big
// enough and returns the length needed (caller_info, config_get): once
// with a buffer of guess bytes, again with the exact size when it was too
// small. A negative length is returned as nil.
func readSized(read func(buf []byte) int32, guess int) []byte {
	buf := make([]byte, guess)
	n := read(buf)
	if n < 0 {
		return nil
	}
	if int(n) > len(buf) {
		buf = make([]byte, n)
		if m := read(buf); m != n {
			panic(fmt.Sprintf("kadu: host changed its answer from %d to %d bytes between two reads", n, m))
		}
	}
	return buf[:n:n]
}
