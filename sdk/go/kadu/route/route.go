// Package route builds bundle features that mirror one Kadu API route: a
// tool whose arguments are the route's path parameters, query parameters
// and body fields under their own names, and whose result is the route's
// JSON; and resources whose document is a GET route's JSON.
//
// It owns: turning arguments into a request (path parameters escaped and
// checked, query parameters URL-encoded, the rest as the JSON body), the
// conventions of the Kadu API that tools share (ids, idempotency_key,
// limit and cursor, list envelopes), and the list of routes a bundle must
// declare.
//
// It must not: add business rules. The API validates, authorises and
// decides; a mirror only carries the request there and the answer back,
// so that a tool cannot diverge from the route it mirrors (docs/reference/bundles.md#api-calls).
package route

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/kobana/kadu/sdk/go/kadu"
	"github.com/kobana/kadu/sdk/go/kadu/internal/wire"
)

// Args are a mirror tool's arguments: each member's JSON as it came.
type Args = map[string]json.RawMessage

// Spec describes a tool that mirrors Route.
type Spec struct {
	Name        string // see kadu.Tool
	Title       string
	Description string
	// Route is "METHOD /path", e.g. "POST /api/v1/tasks/{id}/run"; each
	// {name} is filled from the argument of that name. It is also what the
	// bundle declares (Routes).
	Route string
	// Query names the arguments of a non-GET route sent in the query
	// string. A GET sends every argument that is not a path parameter in
	// the query string; other methods send them in the JSON body.
	Query        []string
	InputSchema  json.RawMessage // see kadu.Tool; ObjectSchema and the properties below help
	OutputSchema json.RawMessage // for routes whose 2xx JSON is an object; never on destructive tools
	Annotations  *kadu.Annotations
	Access       kadu.Access
}

// Tool returns the tool s describes. Its result is the route's JSON as
// text (and as structuredContent when s has an OutputSchema); a 4xx answer
// is an isError result with the API's error JSON, a 5xx one that asks to
// try again. Tool panics on a malformed Route, like regexp.MustCompile:
// routes are fixed at init.
func Tool(s Spec) kadu.Tool[Args, json.RawMessage] {
	r := mustParse(s.Route)
	query := s.Query
	return kadu.Tool[Args, json.RawMessage]{
		Name:         s.Name,
		Title:        s.Title,
		Description:  s.Description,
		InputSchema:  s.InputSchema,
		OutputSchema: s.OutputSchema,
		Annotations:  s.Annotations,
		Access:       s.Access,
		Handler: func(c *kadu.Call, args Args) (json.RawMessage, error) {
			path, body, err := r.request(args, query)
			if err != nil {
				return nil, err
			}
			resp, err := c.API(r.method, path, body)
			if err != nil {
				return nil, err
			}
			if err := resp.Err(); err != nil {
				return nil, err
			}
			if len(wire.TrimSpace(resp.Body)) == 0 {
				return json.RawMessage(`{}`), nil
			}
			return resp.Body, nil
		},
	}
}

// Tools returns the tools of specs, for kadu.Register.
func Tools(specs ...Spec) []kadu.Feature {
	out := make([]kadu.Feature, 0, len(specs))
	for _, s := range specs {
		out = append(out, Tool(s))
	}
	return out
}

// Routes returns the distinct routes of specs, in order, for
// kadu.Bundle.Routes.
func Routes(specs ...Spec) []string {
	var out []string
	for _, s := range specs {
		if !slices.Contains(out, s.Route) {
			out = append(out, s.Route)
		}
	}
	return out
}

// parsed is a route split for building requests.
type parsed struct {
	method string
	segs   []string // path segments; "{name}" for a parameter
	params []string // the parameter names, in order
}

func mustParse(rt string) parsed {
	p, err := parse(rt)
	if err != nil {
		panic(fmt.Sprintf("route: %q: %v", rt, err))
	}
	return p
}

func parse(rt string) (parsed, error) {
	method, path, ok := strings.Cut(rt, " ")
	switch {
	case !ok:
		return parsed{}, fmt.Errorf(`want "METHOD /path"`)
	case !slices.Contains([]string{"GET", "POST", "PUT", "PATCH", "DELETE"}, method):
		return parsed{}, fmt.Errorf("method %q: want GET, POST, PUT, PATCH or DELETE", method)
	case !strings.HasPrefix(path, "/") || strings.ContainsAny(path, "?#"):
		return parsed{}, fmt.Errorf("path %q: want an absolute path without query", path)
	}
	p := parsed{method: method, segs: strings.Split(path[1:], "/")}
	for _, seg := range p.segs {
		if name, ok := paramName(seg); ok {
			if slices.Contains(p.params, name) {
				return parsed{}, fmt.Errorf("parameter {%s} appears twice", name)
			}
			p.params = append(p.params, name)
		} else if seg == "" || seg == "." || seg == ".." || strings.ContainsAny(seg, "{}") {
			return parsed{}, fmt.Errorf("segment %q: want a literal or {name}", seg)
		}
	}
	return p, nil
}

func paramName(seg string) (string, bool) {
	if len(seg) > 2 && seg[0] == '{' && seg[len(seg)-1] == '}' {
		return seg[1 : len(seg)-1], true
	}
	return "", false
}

// request builds the path (with query) and body of the route for args. An
// argument the route cannot carry is a tool error naming it: the host
// validated args against the input schema, so this only happens when the
// schema and the route disagree. It writes the bytes itself, without
// url.Values or encoding/json: the query is what url.Values.Encode writes
// (names sorted), the body a JSON object of the members as they came,
// compacted, names sorted.
func (p parsed) request(args Args, queryNames []string) (string, []byte, error) {
	b := make([]byte, 0, 64)
	for _, seg := range p.segs {
		b = append(b, '/')
		name, ok := paramName(seg)
		if !ok {
			b = append(b, seg...)
			continue
		}
		v, err := pathValue(name, args[name])
		if err != nil {
			return "", nil, err
		}
		b = append(b, url.PathEscape(v)...)
	}
	names := make([]string, 0, len(args))
	for name := range args {
		if !slices.Contains(p.params, name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	var body []byte
	sep := byte('?')
	for _, name := range names {
		raw := wire.TrimSpace(args[name])
		if p.method != "GET" && !slices.Contains(queryNames, name) {
			if !wire.Valid(raw) {
				return "", nil, kadu.ToolError(fmt.Sprintf("The argument %s is not valid JSON.", name))
			}
			if body == nil {
				body = append(make([]byte, 0, 64), '{')
			} else {
				body = append(body, ',')
			}
			body = wire.AppendString(body, []byte(name))
			body = append(body, ':')
			body = wire.Compact(body, raw)
			continue
		}
		v, present, err := queryValue(name, raw)
		if err != nil {
			return "", nil, err
		}
		if present {
			b = append(b, sep)
			sep = '&'
			b = append(b, url.QueryEscape(name)...)
			b = append(b, '=')
			b = append(b, url.QueryEscape(v)...)
		}
	}
	if body != nil {
		body = append(body, '}')
	}
	return string(b), body, nil
}

// pathValue reads a path parameter: a non-empty string (or integer) that
// is not "." or "..", which would change the route.
func pathValue(name string, raw json.RawMessage) (string, error) {
	raw = wire.TrimSpace(raw)
	var s string
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return "", kadu.ToolError(fmt.Sprintf("%s is required.", name))
	case raw[0] == '"':
		var ok bool
		if s, ok = wire.UnquoteString(raw); !ok {
			return "", kadu.ToolError(fmt.Sprintf("%s must be a string.", name))
		}
	case wire.IsNumber(raw):
		s = string(raw)
	default:
		return "", kadu.ToolError(fmt.Sprintf("%s must be a string.", name))
	}
	if s == "" || s == "." || s == ".." {
		return "", kadu.ToolError(fmt.Sprintf("%s must be an id such as the ones list tools return, not %q.", name, s))
	}
	return s, nil
}

// queryValue renders a query parameter: strings as they are, numbers as
// written, booleans as true/false; null leaves it out.
func queryValue(name string, raw json.RawMessage) (v string, present bool, err error) {
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return "", false, nil
	case raw[0] == '"':
		s, ok := wire.UnquoteString(raw)
		if !ok {
			return "", false, kadu.ToolError(fmt.Sprintf("%s must be a string.", name))
		}
		return s, true, nil
	case string(raw) == "true" || string(raw) == "false" || wire.IsNumber(raw):
		return string(raw), true, nil
	}
	return "", false, kadu.ToolError(fmt.Sprintf("%s must be a string, a number or a boolean.", name))
}
