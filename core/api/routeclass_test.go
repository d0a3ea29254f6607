package api

import (
	"strings"
	"testing"

	"github.com/kobana/kadu/core/api/routeclass"
)

// TestEveryRouteHasAHandler checks that the route table of
// core/api/routeclass, which decides role, scope and class, and the
// handlers name exactly the same routes: a handler without a row, or a row
// left behind by a removed handler, fails here (and New refuses to start).
func TestEveryRouteHasAHandler(t *testing.T) {
	if BasePath != routeclass.Prefix {
		t.Fatalf("BasePath %q, routeclass.Prefix %q: want them equal", BasePath, routeclass.Prefix)
	}
	rts, err := (&API{}).routes()
	if err != nil {
		t.Fatal(err)
	}
	if len(rts) != len(routeclass.Routes()) {
		t.Errorf("%d routes served, %d in the table", len(rts), len(routeclass.Routes()))
	}
	for _, rt := range rts {
		if !strings.HasPrefix(rt.path, "/") || strings.Contains(rt.path, "{") {
			t.Errorf("%s %s: want an Echo path under BasePath", rt.method, rt.path)
		}
		if !rt.role.Valid() {
			t.Errorf("%s %s: role %q is not a role of core/auth", rt.method, rt.path, rt.role)
		}
	}
}

// TestRoutesRefusesDrift checks the join itself: a row without a handler
// and a handler without a row are both errors that say what to do.
func TestRoutesRefusesDrift(t *testing.T) {
	a := &API{}
	hs := a.handlers()
	hs["GET /extra"] = a.getUsage
	delete(hs, "GET /usage")
	_, err := joinRoutes(routeclass.Routes(), hs)
	if err == nil {
		t.Fatal("joinRoutes accepted a handler without a row and a row without a handler")
	}
	for _, want := range []string{
		"route GET /api/v1/usage is in core/api/routeclass but has no handler",
		"handler for GET /extra, which is not in core/api/routeclass: add its row there",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}
