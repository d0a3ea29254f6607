// Package route splits the paths of api() requests the way a router would
// read them, and names the route patterns of kadu v1 bundles
// ("GET /api/v1/tasks/{id}"), whose rules sdk/go/kadu/manifest owns (the
// SDK and kadutest check them there too). It owns nothing else.
package route

import (
	"errors"
	"net/url"
	"strings"

	"github.com/kobana/kadu/sdk/go/kadu/manifest"
)

// Pattern is a parsed route pattern: manifest.Route.
type Pattern = manifest.Route

// Parse parses a route pattern of a manifest or of an operator grant.
func Parse(s string) (Pattern, error) { return manifest.ParseRoute(s) }

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
