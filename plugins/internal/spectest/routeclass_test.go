package spectest

import (
	"strings"
	"testing"

	"github.com/kobana/kadu/core/api/routeclass"
)

// TestRouteClassesMatchTheCatalogue pins the host's route classes to the tool
// catalogue's annotations: the route of a destructive tool is destructive, that of a
// read-only tool is a read, that of any other tool a write. So every
// first-party tool may call its own route, and no partner tool can reach
// without confirmation what a first-party tool needs confirmation for.
func TestRouteClassesMatchTheCatalogue(t *testing.T) {
	tab := routeclass.New()
	for _, r := range Catalogue {
		want := routeclass.Write
		switch {
		case r.D:
			want = routeclass.Destructive
		case r.R:
			want = routeclass.Read
		}
		segs := strings.Split(strings.TrimPrefix("/api/v1"+strings.ReplaceAll(r.Path, "{id}", "x_1"), "/"), "/")
		if got := tab.Of(r.Method, segs); got != want {
			t.Errorf("%s (%s): route class %v; the catalogue makes it %v", r.Tool, r.Route(), got, want)
		}
	}
}
