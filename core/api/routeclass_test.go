package api

import (
	"slices"
	"strings"
	"testing"

	"github.com/kobana/kadu/core/api/routeclass"
)

// TestEveryRouteClassified checks that the route classes of
// core/api/routeclass, which decide what a bundle's operations may call,
// name exactly the routes Register mounts: a new route without a class, or
// a class left behind by a removed route, fails here.
func TestEveryRouteClassified(t *testing.T) {
	if BasePath != routeclass.Prefix {
		t.Fatalf("BasePath %q, routeclass.Prefix %q: want them equal", BasePath, routeclass.Prefix)
	}
	var registered []string
	for _, rt := range (&API{}).routes() {
		segs := strings.Split(rt.path, "/")
		for i, s := range segs {
			if strings.HasPrefix(s, ":") {
				segs[i] = "{" + s[1:] + "}"
			}
		}
		registered = append(registered, rt.method+" "+BasePath+strings.Join(segs, "/"))
	}
	var classified []string
	for _, r := range routeclass.Routes() {
		classified = append(classified, r.String())
	}
	for _, r := range registered {
		if !slices.Contains(classified, r) {
			t.Errorf("%s is registered but has no class: add it to core/api/routeclass (and sdk/ABI.md)", r)
		}
	}
	for _, r := range classified {
		if !slices.Contains(registered, r) {
			t.Errorf("%s has a class but is not registered: remove it from core/api/routeclass", r)
		}
	}
}
