// Package route parses and matches the route patterns of kadu v1 bundles
// ("GET /api/v1/tasks/{id}"), and splits api() request paths the way a
// router would read them. It owns nothing else.
package route

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// Methods are the methods a route may name: those of the Kadu API.
var Methods = []string{"GET", "POST", "PUT", "PATCH", "DELETE"}

// Pattern is a parsed route pattern: "METHOD /path/{param}/…". A segment
// "{name}" matches one non-empty path segment; any other segment matches
// itself exactly. Immutable; the zero value matches nothing.
type Pattern struct {
	method   string
	segments []string // without the leading empty segment
	params   []bool   // params[i]: segments[i] is a {name} parameter
	text     string
}

// String returns the pattern as written.
func (r Pattern) String() string { return r.text }

// Parse parses a route pattern of a manifest or of an operator grant.
func Parse(s string) (Pattern, error) {
	method, path, ok := strings.Cut(s, " ")
	if !ok {
		return Pattern{}, fmt.Errorf("route %q: want METHOD, one space, then a path, e.g. \"GET /api/v1/tasks/{id}\"", s)
	}
	if !isRouteMethod(method) {
		return Pattern{}, fmt.Errorf("route %q: method %q: want one of %s", s, method, strings.Join(Methods, ", "))
	}
	if !strings.HasPrefix(path, "/") || strings.ContainsAny(path, "?# \t") {
		return Pattern{}, fmt.Errorf("route %q: path must start with / and carry no query, fragment or spaces", s)
	}
	r := Pattern{method: method, text: s}
	for _, seg := range strings.Split(path[1:], "/") {
		switch {
		case seg == "":
			return Pattern{}, fmt.Errorf("route %q: empty path segment", s)
		case seg == "." || seg == "..":
			return Pattern{}, fmt.Errorf("route %q: path segment %q is not allowed", s, seg)
		case strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}"):
			name := seg[1 : len(seg)-1]
			if name == "" || strings.ContainsAny(name, "{}") {
				return Pattern{}, fmt.Errorf("route %q: parameter %q: want {name}", s, seg)
			}
			r.segments, r.params = append(r.segments, seg), append(r.params, true)
		case strings.ContainsAny(seg, "{}"):
			return Pattern{}, fmt.Errorf("route %q: segment %q: a parameter must be a whole segment, e.g. {id}", s, seg)
		default:
			r.segments, r.params = append(r.segments, seg), append(r.params, false)
		}
	}
	return r, nil
}

func isRouteMethod(m string) bool {
	for _, x := range Methods {
		if m == x {
			return true
		}
	}
	return false
}

// Covers reports whether every request r matches also matches g: g is a
// grant and r a manifest route. A grant parameter covers a literal or a
// parameter; a grant literal covers only the same literal.
func (g Pattern) Covers(r Pattern) bool {
	if g.method != r.method || len(g.segments) != len(r.segments) {
		return false
	}
	for i := range g.segments {
		if g.params[i] {
			continue
		}
		if r.params[i] || g.segments[i] != r.segments[i] {
			return false
		}
	}
	return true
}

// Matches reports whether a request's method and path segments (from
// Segments) match the pattern.
func (g Pattern) Matches(method string, segments []string) bool {
	if g.method != method || len(g.segments) != len(segments) {
		return false
	}
	for i, seg := range segments {
		if !g.params[i] && g.segments[i] != seg {
			return false
		}
	}
	return true
}

// ErrBadPath is the error of Segments.
var ErrBadPath = errors.New("path must be absolute, without empty, \".\" or \"..\" segments, encoded slashes or control characters")

// Segments splits the path of an api() request, ignoring the query,
// into segments compared as the router compares them (percent-decoded). A
// path that a router could resolve to somewhere else than it reads —
// dot segments, encoded slashes, empty segments — is refused.
func Segments(target string) ([]string, error) {
	path, _, _ := strings.Cut(target, "?")
	if !strings.HasPrefix(path, "/") || strings.ContainsAny(path, "#\\") {
		return nil, ErrBadPath
	}
	for i := 0; i < len(target); i++ {
		if c := target[i]; c <= ' ' || c == 0x7f {
			return nil, ErrBadPath
		}
	}
	// One allocation: every api() call of a guest goes through here.
	out := make([]string, 0, strings.Count(path, "/"))
	for rest, more := path[1:], true; more; {
		var seg string
		seg, rest, more = strings.Cut(rest, "/")
		dec, err := url.PathUnescape(seg)
		if err != nil || dec == "" || dec == "." || dec == ".." || strings.ContainsAny(dec, "/\\") {
			return nil, ErrBadPath
		}
		out = append(out, dec)
	}
	return out, nil
}

// Parts returns the pattern's method, its segments (a parameter as written,
// "{id}") and which of them are parameters. The slices are the pattern's:
// callers must not modify them.
func (r Pattern) Parts() (method string, segments []string, params []bool) {
	return r.method, r.segments, r.params
}
