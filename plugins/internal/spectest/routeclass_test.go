package spectest

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kobana/kadu/core/api/openapi"
	"github.com/kobana/kadu/core/api/routeclass"
)

// TestCatalogueCoversTheTable checks that every tool the route table names
// has a call in the catalogue, so that CheckManifest and CheckCalls test it
// in its bundle: a route added to the table with a tool but no tool in the
// bundle, or a bundle tool without a route, fails here or in the bundle's
// tests. Hints and access come from the table, so a bundle whose tool
// disagrees with its route's class, idempotency or access fails
// CheckManifest.
func TestCatalogueCoversTheTable(t *testing.T) {
	inCatalogue := map[string]bool{}
	for _, r := range Catalogue {
		if inCatalogue[r.Tool] {
			t.Errorf("%s is in the catalogue twice", r.Tool)
		}
		inCatalogue[r.Tool] = true
		if r.D && r.R {
			t.Errorf("%s is both read-only and destructive", r.Tool)
		}
	}
	for _, r := range routeclass.Routes() {
		if r.Tool != "" && !inCatalogue[r.Tool] {
			t.Errorf("%s names the tool %s, which has no call in calls (catalogue.go): add one", r, r.Tool)
		}
	}
}

// TestEverySampleIsARoute checks that FakeAPI answers only routes of the
// table, with the status the table gives the route.
func TestEverySampleIsARoute(t *testing.T) {
	statuses := map[string][]int{}
	for _, r := range routeclass.Routes() {
		statuses[r.String()] = r.Statuses
	}
	for route, s := range Samples {
		st, ok := statuses[route]
		if !ok {
			t.Errorf("sample for %s, which is not in the route table", route)
			continue
		}
		found := false
		for _, want := range st {
			found = found || want == s.Status
		}
		if !found {
			t.Errorf("sample for %s answers %d; the table says %v", route, s.Status, st)
		}
	}
}

// TestSamplesMatchTheDocument checks the answers FakeAPI gives the
// bundles against the OpenAPI document (core/api/openapi), which core/api's
// own answers are checked against: the bundles are tested with what the
// API really sends.
func TestSamplesMatchTheDocument(t *testing.T) {
	v, err := openapi.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	for route, s := range Samples {
		method, path, _ := strings.Cut(route, " ")
		if err := v.Check(method, path, s.Status, []byte(s.Body)); err != nil {
			t.Errorf("sample of %s: %v", route, err)
		}
	}
	rec := httptest.NewRecorder()
	FakeAPI().ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/tasks/tsk_ffffffffffffffffffffffffffffffff", nil))
	if err := v.Check("GET", "/api/v1/tasks/tsk_ffffffffffffffffffffffffffffffff", rec.Code, rec.Body.Bytes()); err != nil || rec.Code != 404 {
		t.Errorf("FakeAPI's 404 (%d): %v", rec.Code, err)
	}
}

// TestToolBodiesMatchTheDocument checks the body each tool sends against
// its route's request schema in the OpenAPI document.
func TestToolBodiesMatchTheDocument(t *testing.T) {
	v, err := openapi.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range Catalogue {
		rt, ok := v.Route(r.Method, routeclass.Prefix+r.Path)
		if !ok {
			t.Errorf("%s: %s is no route of the document", r.Tool, r.Route())
			continue
		}
		body := r.Body
		if body == "" {
			body = "{}"
		}
		if rt.Request == "" {
			if r.Body != "" {
				t.Errorf("%s sends a body to %s, which takes none", r.Tool, r.Route())
			}
			continue
		}
		if err := v.CheckSchema(rt.Request, []byte(body)); err != nil {
			t.Errorf("%s: %v", r.Tool, err)
		}
	}
}
