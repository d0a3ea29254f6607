package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/kobana/kadu/core/api/routeclass"
)

// TestKaduYAMLGrantsTheRouteTable keeps the routes that config/kadu.yaml
// and config/conformance.yaml grant the first-party bundles equal to the
// route table (core/api/routeclass), which Defaults() grants: YAML cannot
// import the table, so on drift the test prints the lines to write.
func TestKaduYAMLGrantsTheRouteTable(t *testing.T) {
	t.Parallel()
	for _, file := range []struct {
		name string
		// mayOmit: the file may leave a first-party bundle's routes out,
		// keeping the built-in grant.
		mayOmit bool
	}{{"kadu.yaml", false}, {"conformance.yaml", true}} {
		path := filepath.Join("..", "..", "config", file.name)
		body, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Plugins struct {
				Bundles map[string]struct {
					Routes *[]string `yaml:"routes"`
				} `yaml:"bundles"`
			} `yaml:"plugins"`
		}
		if err := yaml.Unmarshal(body, &doc); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for name := range firstPartyBundles() {
			want := routeclass.Grants(name)
			b, ok := doc.Plugins.Bundles[name]
			switch {
			case !ok && file.mayOmit, ok && b.Routes == nil && file.mayOmit:
				continue
			case !ok || b.Routes == nil:
				t.Errorf("%s lists no routes for the first-party bundle %s; under plugins.bundles.%s write:\n%s", path, name, name, yamlRoutes(want))
			case !slices.Equal(*b.Routes, want):
				t.Errorf("%s grants the bundle %s routes %q; the route table (core/api/routeclass) grants %q. Under plugins.bundles.%s write:\n%s",
					path, name, *b.Routes, want, name, yamlRoutes(want))
			}
		}
	}
}

// yamlRoutes renders routes as config/kadu.yaml lists them.
func yamlRoutes(routes []string) string {
	var b strings.Builder
	b.WriteString("      routes:\n")
	for _, r := range routes {
		b.WriteString("        - " + r + "\n")
	}
	return b.String()
}

// TestEveryTableBundleIsFirstParty checks that each route of the table is
// granted to a bundle Kadu ships, and that each such bundle has routes.
func TestEveryTableBundleIsFirstParty(t *testing.T) {
	t.Parallel()
	granted := map[string]bool{}
	for _, r := range routeclass.Routes() {
		if !IsFirstParty(r.Bundle) {
			t.Errorf("%s is granted to %q, which is not a first-party bundle", r, r.Bundle)
		}
		granted[r.Bundle] = true
	}
	for name := range firstPartyBundles() {
		if !granted[name] {
			t.Errorf("the first-party bundle %s has no route in the route table", name)
		}
	}
}
