package manifest

import (
	"fmt"
	"strings"
)

// RouteMethods are the methods a route may name: those of the Kadu API.
var RouteMethods = []string{"GET", "POST", "PUT", "PATCH", "DELETE"}

// Route is a parsed route pattern: "METHOD /path/{param}/…". A segment
// "{name}" matches one non-empty path segment; any other segment matches
// itself exactly. Immutable; the zero value matches nothing.
type Route struct {
	method   string
	segments []string // without the leading empty segment
	params   []bool   // params[i]: segments[i] is a {name} parameter
	text     string
}

// String returns the pattern as written.
func (r Route) String() string { return r.text }

// ParseRoute parses a route pattern of a manifest or of an operator grant.
func ParseRoute(s string) (Route, error) {
	method, path, ok := strings.Cut(s, " ")
	if !ok {
		return Route{}, fmt.Errorf("route %q: want METHOD, one space, then a path, e.g. \"GET /api/v1/tasks/{id}\"", s)
	}
	if !isRouteMethod(method) {
		return Route{}, fmt.Errorf("route %q: method %q: want one of %s", s, method, strings.Join(RouteMethods, ", "))
	}
	if !strings.HasPrefix(path, "/") || strings.ContainsAny(path, "?# \t") {
		return Route{}, fmt.Errorf("route %q: path must start with / and carry no query, fragment or spaces", s)
	}
	r := Route{method: method, text: s}
	for _, seg := range strings.Split(path[1:], "/") {
		switch {
		case seg == "":
			return Route{}, fmt.Errorf("route %q: empty path segment", s)
		case seg == "." || seg == "..":
			return Route{}, fmt.Errorf("route %q: path segment %q is not allowed", s, seg)
		case strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}"):
			name := seg[1 : len(seg)-1]
			if name == "" || strings.ContainsAny(name, "{}") {
				return Route{}, fmt.Errorf("route %q: parameter %q: want {name}", s, seg)
			}
			r.segments, r.params = append(r.segments, seg), append(r.params, true)
		case strings.ContainsAny(seg, "{}"):
			return Route{}, fmt.Errorf("route %q: segment %q: a parameter must be a whole segment, e.g. {id}", s, seg)
		default:
			r.segments, r.params = append(r.segments, seg), append(r.params, false)
		}
	}
	return r, nil
}

func isRouteMethod(m string) bool {
	for _, x := range RouteMethods {
		if m == x {
			return true
		}
	}
	return false
}

// Covers reports whether every request r matches also matches g: g is a
// grant and r a manifest route. A grant parameter covers a literal or a
// parameter; a grant literal covers only the same literal.
func (g Route) Covers(r Route) bool {
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

// Matches reports whether a request's method and path segments (split
// and percent-decoded by the host) match the pattern.
func (g Route) Matches(method string, segments []string) bool {
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

// Parts returns the pattern's method, its segments (a parameter as written,
// "{id}") and which of them are parameters. The slices are the pattern's:
// callers must not modify them.
func (r Route) Parts() (method string, segments []string, params []bool) {
	return r.method, r.segments, r.params
}
